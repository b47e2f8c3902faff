// Registry credentials from a Kubernetes kubernetes.io/dockerconfigjson
// Secret, as the Flux Operator reads .spec.distribution.artifactPullSecret.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/oci/credentials.h"
#include "core/ssa/cluster_api.h"

namespace fluxop::reconcile {

// Looks credentials up in the Secret `ns`/`name`, read on first use (so an
// apply from a directory never needs it). Errors name the Secret.
std::function<oci::Credential(std::string_view registry)> secret_credentials(
    ssa::ClusterApi& cluster, const std::string& ns, const std::string& name);

}  // namespace fluxop::reconcile
