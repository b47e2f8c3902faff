#include "core/reconcile/pull_secret.h"

#include <memory>
#include <optional>

#include "core/base64.h"
#include "core/error.h"

namespace fluxop::reconcile {

using nlohmann::json;

namespace {

oci::DockerConfig read_secret(kube::Cluster& cluster, const std::string& ns,
                              const std::string& name) {
  kube::ObjectKey key{"", "v1", "Secret", ns, name};
  std::string what = kube::display_name(key) + " (.spec.distribution.artifactPullSecret)";
  std::optional<json> secret = cluster.get(key);
  if (!secret) throw Error(what + ": not found");
  if (secret->value("type", "") != "kubernetes.io/dockerconfigjson")
    throw Error(what + ": type is not kubernetes.io/dockerconfigjson");
  json::json_pointer data("/data/.dockerconfigjson");
  std::optional<std::string> text;
  if (secret->contains(data) && secret->at(data).is_string())
    text = base64_decode(secret->at(data).get<std::string>());
  if (!text) throw Error(what + ": no base64 .dockerconfigjson in its data");
  return oci::DockerConfig::parse(*text, what);
}

}  // namespace

std::function<oci::Credential(std::string_view)> secret_credentials(kube::Cluster& cluster,
                                                                    const std::string& ns,
                                                                    const std::string& name) {
  auto config = std::make_shared<std::optional<oci::DockerConfig>>();
  return [&cluster, ns, name, config](std::string_view registry) {
    if (!*config) *config = read_secret(cluster, ns, name);
    return (*config)->lookup(registry);
  };
}

}  // namespace fluxop::reconcile
