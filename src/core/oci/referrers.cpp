#include "core/oci/referrers.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/peer_json.h"

namespace fluxop::oci {

std::string referrers_tag(std::string_view digest) {
  std::string tag(digest);
  if (auto colon = tag.find(':'); colon != std::string::npos) tag[colon] = '-';
  return tag;
}

bool referrers_api_not_served(long status) {
  return status == 400 || status == 404 || status == 405 || status == 501;
}

Descriptor referrer_descriptor(const Manifest& manifest) {
  Descriptor descriptor;
  descriptor.media_type = manifest.media_type;
  descriptor.digest = manifest.digest;
  descriptor.size = manifest.bytes.size();
  descriptor.artifact_type =
      manifest.artifact_type.empty() ? manifest.config.media_type : manifest.artifact_type;
  descriptor.annotations = manifest.annotations;
  return descriptor;
}

std::optional<std::string> referrers_index_adding(const std::optional<Manifest>& existing,
                                                  const Descriptor& referrer,
                                                  const std::string& what) {
  nlohmann::json index = {
      {"schemaVersion", 2}, {"mediaType", kOciIndex}, {"manifests", nlohmann::json::array()}};
  if (existing) {
    if (existing->media_type != kOciIndex)
      throw Error(what + ": holds a " + quote(existing->media_type, 80) +
                  ", not an OCI index of referrers; left as it is");
    index = parse_peer_json(existing->bytes);
    const nlohmann::json& listed = index["manifests"];
    if (std::any_of(listed.begin(), listed.end(), [&](const nlohmann::json& entry) {
          return entry.value("digest", "") == referrer.digest;
        }))
      return std::nullopt;
  }
  nlohmann::json entry = {
      {"mediaType", referrer.media_type}, {"digest", referrer.digest}, {"size", referrer.size}};
  if (!referrer.artifact_type.empty()) entry["artifactType"] = referrer.artifact_type;
  if (!referrer.annotations.empty()) entry["annotations"] = referrer.annotations;
  index["manifests"].push_back(std::move(entry));
  return index.dump();
}

}  // namespace fluxop::oci
