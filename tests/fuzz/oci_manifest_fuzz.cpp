// libFuzzer target for the decoder of the manifests and indexes a registry
// sends (oci/registry.h parse_manifest), under each content type the
// registry may announce (the first byte picks one). Decoding either succeeds
// within the bounds (a manifest's layers, an index's children) or throws
// fluxop::Error; the registry's error bodies go through describe_failure.
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/oci/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fluxop::oci;
  if (size == 0) return 0;
  constexpr std::string_view kContentTypes[] = {kOciManifest,        kOciIndex, kDockerManifest,
                                                kDockerManifestList, "",        "application/json"};
  std::string_view content_type = kContentTypes[data[0] % std::size(kContentTypes)];
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    Manifest manifest = parse_manifest(bytes, content_type, "manifest");
    bool index = manifest.media_type == kOciIndex || manifest.media_type == kDockerManifestList;
    bool bounded = index
                       ? manifest.layers.empty() && !manifest.manifests.empty() &&
                             manifest.manifests.size() <= kMaxIndexManifests
                       : manifest.manifests.empty() && manifest.layers.size() <= kMaxManifestLayers;
    if (!bounded) std::abort();
  } catch (const fluxop::Error&) {
  }
  fluxop::net::HttpResponse response;
  response.status = 400 + data[0] % 200;
  response.body = bytes;
  if (describe_failure(response).empty()) std::abort();
  return 0;
}
