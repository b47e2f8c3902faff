// libFuzzer target for the layer reader (oci/layer.h), which reads what a
// registry sends: a blob (tar+gzip or plain tar) is indexed within small
// limits, keeping the newest release's files as a pull does, its index
// encoded and decoded, and every directory read back. Each step either
// succeeds or throws fluxop::Error; what is read back must be what the
// index says, and what was kept what is read back.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/oci/layer.h"
#include "core/oci/layer_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view blob(reinterpret_cast<const char*>(data), size);
  using namespace fluxop::oci;
  try {
    NewestReleaseFiles keeper;
    LayerIndex index =
        index_layer(blob, "blob", {.max_total_bytes = 1 << 20, .max_files = 1000}, &keeper);
    const KeptFiles kept = std::move(keeper).files();
    static const fluxop::CacheSeal seal(std::string(32, 'k'));
    std::optional<LayerIndex> decoded = LayerIndex::decode(index.encode(seal), &seal);
    if (!decoded || decoded->files.size() != index.files.size()) std::abort();
    for (const std::string& dir : index.dirs) {
      for (const auto& [path, content] : read_layer_dir(blob, *decoded, dir, "blob")) {
        bool listed = false;
        for (const LayerFile& file : index.files)
          listed = listed || (file.path == path && file.size == content.size());
        if (!listed) std::abort();
        if (auto found = kept.find(path); found != kept.end() && found->second != content)
          std::abort();
      }
    }
  } catch (const fluxop::Error&) {
  }
  return 0;
}
