// libFuzzer target for the patch appliers: the input is a target document
// and a patch document separated by a line "===". Both the strategic merge
// and the JSON6902 applier must either succeed or throw fluxop::Error.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/kustomize/json_patch.h"
#include "core/kustomize/strategic_merge.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto split = text.find("\n===\n");
  if (split == std::string_view::npos) return 0;
  try {
    auto target = fluxop::yaml::parse_document(text.substr(0, split), "target.yaml");
    auto patch = fluxop::yaml::parse_document(text.substr(split + 5), "patch.yaml");
    if (patch.is_sequence()) {
      fluxop::yaml::NodeBudget budget;
      fluxop::kustomize::apply_json_patch(target, patch, budget);
    } else if (target.is_map() && patch.is_map()) {
      (void)fluxop::kustomize::apply_strategic_merge(target, patch);
    }
    (void)fluxop::yaml::emit(target);
  } catch (const fluxop::Error&) {
  }
  return 0;
}
