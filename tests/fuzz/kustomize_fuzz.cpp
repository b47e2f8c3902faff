// libFuzzer target for the kustomize build over a tree held in memory: the
// input is files, each starting with a line "=== PATH" (relative to the
// kustomization's directory, /k). Any tree must either build or throw
// fluxop::Error, within the bounds of issue 14.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/file_system.h"
#include "core/kustomize/build.h"
#include "core/yaml/emit.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kHeader = "=== ";
  fluxop::MemoryFileSystem files;
  for (std::size_t at = text.find(kHeader); at != std::string_view::npos;) {
    std::size_t name_end = text.find('\n', at);
    if (name_end == std::string_view::npos) break;
    std::string_view name = text.substr(at + kHeader.size(), name_end - at - kHeader.size());
    std::size_t next = text.find("\n" + std::string(kHeader), name_end);
    std::size_t end = next == std::string_view::npos ? text.size() : next + 1;
    files.add("/k/" + std::string(name),
              std::string(text.substr(name_end + 1, end - name_end - 1)));
    at = next == std::string_view::npos ? next : next + 1;
  }
  try {
    for (const auto& resource : fluxop::kustomize::build("/k", files, nullptr)) {
      (void)fluxop::yaml::emit(resource.object());
    }
  } catch (const fluxop::Error&) {
  }
  return 0;
}
