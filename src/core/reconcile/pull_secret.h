// Registry credentials from a Kubernetes kubernetes.io/dockerconfigjson
// Secret, as the Flux Operator reads .spec.distribution.artifactPullSecret.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/kube/cluster.h"
#include "core/oci/credentials.h"

namespace fluxop::reconcile {

// Looks credentials up in the Secret `ns`/`name`, read on first use (so an
// apply from a directory never needs it). Errors name the Secret.
std::function<oci::Credential(std::string_view registry)> secret_credentials(
    kube::Cluster& cluster, const std::string& ns, const std::string& name);

}  // namespace fluxop::reconcile
