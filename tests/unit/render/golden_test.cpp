// Renders every tests/golden/cases/NAME.instance.yaml from the small golden
// distribution and compares the output with NAME.expected.yaml (see
// tests/golden/README.md for where the expected files come from).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/render/render.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"

namespace fluxop::render {
namespace {

namespace fs = std::filesystem;

const std::string kGolden = FLUXOPCTL_TEST_DATA "/golden";
constexpr std::string_view kSuffix = ".instance.yaml";

// The output format of `build`: every object after a "---" line.
std::string as_stream(const std::vector<yaml::Node>& objects) {
  std::string out;
  for (const yaml::Node& object : objects) out += "---\n" + yaml::emit(object);
  return out;
}

TEST_CASE("golden: each case renders to its expected output") {
  distribution::Distribution dist(kGolden + "/distribution");
  int cases = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kGolden + "/cases")) {
    std::string file = entry.path().filename().string();
    if (!file.ends_with(kSuffix)) continue;
    std::string name = file.substr(0, file.size() - kSuffix.size());
    CAPTURE(name);
    std::vector<std::string> warnings;
    instance::FluxInstance flux = instance::load_instance_file(entry.path().string(), {}, warnings);
    Rendered rendered = render(flux, dist);
    CHECK(rendered.version.original == "v2.9.0");
    CHECK(as_stream(rendered.objects) ==
          yaml::read_file(kGolden + "/cases/" + name + ".expected.yaml"));
    ++cases;
  }
  CHECK(cases >= 2);
}

}  // namespace
}  // namespace fluxop::render
