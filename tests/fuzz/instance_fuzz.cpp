// libFuzzer target for the FluxInstance loader and the render: the input is
// an instance document, loaded and rendered (as the CLI and as the operator
// render it) over the small distribution of the golden tests. Any input must
// either render or throw fluxop::Error, within the bounds of issue 14.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/distribution/distribution.h"
#include "core/error.h"
#include "core/instance/instance.h"
#include "core/render/render.h"
#include "core/yaml/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Rendered without a parse cache: the fuzzer writes nothing and keeps no
  // pending entries.
  static const fluxop::distribution::Distribution dist(FLUXOPCTL_TEST_DATA "/golden/distribution");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    fluxop::yaml::Node document = fluxop::yaml::parse_document(text, "instance.yaml");
    std::vector<std::string> warnings;
    fluxop::instance::FluxInstance flux =
        fluxop::instance::load_instance(document, "instance.yaml", {}, warnings);
    for (auto mode : {fluxop::render::Mode::cli, fluxop::render::Mode::operator_controller}) {
      (void)fluxop::render::render(flux, dist, {.revision = true, .mode = mode});
    }
  } catch (const fluxop::Error&) {
  }
  return 0;
}
