#include "core/render/workload_identity.h"

#include "core/error.h"
#include "core/render/patch.h"

namespace fluxop::render {

using yaml::Node;

namespace {

bool before(const distribution::Version& version, std::uint64_t minor) {
  return version.major < 2 || (version.major == 2 && version.minor < minor);
}

[[noreturn]] void refuse(const instance::FluxInstance& flux, const char* field,
                         const std::string& message) {
  throw Error(flux.file + ": .spec.cluster." + field + ": " + message);
}

Patch feature_gate(const std::vector<std::string>& controllers, bool enabled) {
  return json_patch({.kind = "Deployment", .name = any_of(controllers)},
                    {add_arg(std::string("--feature-gates=ObjectLevelWorkloadIdentity=") +
                             (enabled ? "true" : "false"))});
}

std::vector<Patch> tenant_service_accounts(const instance::Cluster& cluster) {
  auto deployments = [](const char* name, const std::string& argument) {
    return json_patch({.kind = "Deployment", .name = name}, {add_arg(argument)});
  };
  return {
      deployments("(source-controller|notification-controller|image-reflector-controller|"
                  "image-automation-controller)",
                  "--default-service-account=" + cluster.tenant_default_service_account),
      deployments("(kustomize-controller)", "--default-decryption-service-account=" +
                                                cluster.tenant_default_decryption_service_account),
      deployments("(kustomize-controller|helm-controller)",
                  "--default-kubeconfig-service-account=" +
                      cluster.tenant_default_kubeconfig_service_account)};
}

}  // namespace

WorkloadIdentity workload_identity(const instance::FluxInstance& flux,
                                   const distribution::Version& version) {
  const instance::Cluster& cluster = flux.cluster;
  std::vector<std::string> controllers = {"source-controller", "kustomize-controller",
                                          "notification-controller", "image-reflector-controller",
                                          "image-automation-controller"};
  WorkloadIdentity result;
  if (before(version, 6)) {
    if (cluster.object_level_workload_identity) {
      refuse(flux, "objectLevelWorkloadIdentity", "not supported before Flux 2.6.0");
    }
    if (cluster.multitenant_workload_identity) {
      refuse(flux, "multitenantWorkloadIdentity", "not supported before Flux 2.6.0");
    }
    return result;
  }
  if (before(version, 7)) {
    if (cluster.multitenant_workload_identity) {
      refuse(flux, "multitenantWorkloadIdentity", "not supported in Flux 2.6");
    }
    // The gate is off by default in 2.6: set only when enabled.
    if (cluster.object_level_workload_identity) {
      result.patches.push_back(feature_gate(controllers, true));
    } else {
      result.drop_token_permission = true;
    }
    return result;
  }
  // From 2.7 the gate's default varies by version: always set it explicitly.
  controllers.push_back("helm-controller");
  result.patches.push_back(feature_gate(controllers, cluster.object_level_workload_identity));
  result.drop_token_permission = !cluster.object_level_workload_identity;
  // The instance rules refuse multitenantWorkloadIdentity without objectLevelWorkloadIdentity.
  if (cluster.multitenant_workload_identity) {
    std::vector<Patch> accounts = tenant_service_accounts(cluster);
    result.patches.insert(result.patches.end(), accounts.begin(), accounts.end());
  }
  return result;
}

}  // namespace fluxop::render
