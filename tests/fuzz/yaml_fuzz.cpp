// libFuzzer target for the YAML reader and the emitter: any input either
// fails with fluxop::Error or parses, and emitting is a fixed point
// (emit(parse(emit(doc))) == emit(doc)).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/yaml/emit.h"
#include "core/yaml/json.h"
#include "core/yaml/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<fluxop::yaml::Node> docs;
  try {
    docs = fluxop::yaml::parse_documents(text, "fuzz.yaml");
  } catch (const fluxop::Error&) {
    return 0;
  }
  for (const auto& doc : docs) {
    std::string once = fluxop::yaml::emit(doc);
    std::string twice = fluxop::yaml::emit(fluxop::yaml::parse_document(once, "emitted.yaml"));
    if (once != twice) std::abort();
    (void)fluxop::yaml::to_json(doc).dump();
  }
  return 0;
}
