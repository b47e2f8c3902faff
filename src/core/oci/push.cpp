#include "core/oci/push.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/digest.h"
#include "core/distribution/distribution.h"
#include "core/error.h"
#include "core/file.h"
#include "core/oci/archive.h"
#include "core/rfc3339.h"

namespace fluxop::oci {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string created_now() {
  std::time_t seconds = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch && *epoch) {
    seconds = static_cast<std::time_t>(std::atoll(epoch));
  }
  return utc_rfc3339(seconds);
}

Descriptor describe(std::string_view media_type, const std::string& bytes) {
  Descriptor descriptor;
  descriptor.media_type = media_type;
  descriptor.digest = sha256_digest(bytes);
  descriptor.size = bytes.size();
  return descriptor;
}

json descriptor_json(const Descriptor& descriptor) {
  return {{"mediaType", descriptor.media_type},
          {"digest", descriptor.digest},
          {"size", descriptor.size}};
}

// Uploads the blob unless the registry has it; true when it was sent.
bool upload(RegistryClient& client, const Reference& ref, const Descriptor& blob,
            const std::string& bytes) {
  if (client.has_blob(ref, blob.digest)) return false;
  client.push_blob(ref, blob, bytes);
  return true;
}

// Every top-level entry of `dir` in byte order, so that a pulled artifact
// pushed again keeps what fluxopctl does not read (flux-vex/, a NOTICE)
// byte for byte; hidden ones (.git, an editor's) are no part of a
// distribution.
std::vector<std::string> artifact_entries(const std::string& dir) {
  std::vector<std::string> entries;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with('.')) entries.push_back(std::move(name));
  }
  if (error) throw Error(dir + ": " + error.message());
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

PushResult push_distribution(const std::string& dir, const Reference& ref,
                             const PushOptions& options) {
  if (ref.tag.empty()) throw Error(ref.str() + ": push needs a tag, not only a digest");
  distribution::Distribution checked(dir);  // refuses a directory without flux/
  if (checked.versions().empty()) throw Error(dir + "/flux: no vX.Y.Z directories");
  std::vector<std::string> entries = artifact_entries(dir);

  // In memory (a few MB, within what pull accepts, which create_archive
  // checks before anything is uploaded): a push leaves no file behind, even
  // when interrupted.
  std::string diff_id;  // the digest of the layer once decompressed
  std::string layer_bytes = create_archive(dir, entries, &diff_id);
  Descriptor layer = describe(kFluxContentLayer, layer_bytes);

  // The config go-containerregistry writes for an image built from one layer.
  json config = {{"architecture", ""},
                 {"os", ""},
                 {"rootfs", {{"type", "layers"}, {"diff_ids", {diff_id}}}},
                 {"config", json::object()}};
  std::string config_bytes = config.dump();
  Descriptor config_blob = describe(kFluxConfig, config_bytes);

  json annotations = {
      {"org.opencontainers.image.created",
       options.created.empty() ? created_now() : options.created},
      {"org.opencontainers.image.source",
       options.source.empty() ? "file://" + fs::absolute(dir).lexically_normal().string()
                              : options.source},
      {"org.opencontainers.image.revision",
       options.revision.empty() ? "local@" + diff_id : options.revision}};
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", kOciManifest},
                   {"config", descriptor_json(config_blob)},
                   {"layers", {descriptor_json(layer)}},
                   {"annotations", annotations}};

  if (options.dry_run) return PushResult{sha256_digest(manifest.dump()), layer.size, false};
  RegistryClient client(options.registry);
  upload(client, ref, config_blob, config_bytes);
  bool layer_uploaded = upload(client, ref, layer, layer_bytes);
  std::string digest = client.push_manifest(ref, manifest.dump(), kOciManifest);
  return PushResult{digest, layer.size, layer_uploaded};
}

}  // namespace fluxop::oci
