#include "core/render/profiles.h"

#include "core/render/patch.h"

namespace fluxop::render {

using yaml::Node;

namespace {

const std::string kKustomizeHelm = "(kustomize-controller|helm-controller)";
const std::string kSource = "(source-controller)";
const std::string kResourcesPath = "/spec/template/spec/containers/0/resources";

Node quantities(const char* cpu, const char* memory) {
  Node node = Node::map();
  node.set("cpu", Node::string(cpu));
  node.set("memory", Node::string(memory));
  return node;
}

Node set_resources(const char* request_memory, const char* limit_cpu, const char* limit_memory) {
  Node value = Node::map();
  value.set("requests", quantities("100m", request_memory));
  value.set("limits", quantities(limit_cpu, limit_memory));
  return replace(kResourcesPath, std::move(value));
}

// The Deployment-wide merge patch every size profile starts with.
Patch pod_template_patch(const std::string& size) {
  Node metadata = Node::map();
  metadata.set("name", Node::string("all"));
  if (!size.empty()) {
    Node annotations = Node::map();
    annotations.set("fluxcd.controlplane.io/profile", Node::string(size));
    metadata.set("annotations", std::move(annotations));
  }
  Node labels = Node::map();
  labels.set("app.kubernetes.io/part-of", Node::string("flux"));
  Node annotations = Node::map();
  annotations.set("cluster-autoscaler.kubernetes.io/safe-to-evict", Node::string("true"));
  Node template_metadata = Node::map();
  template_metadata.set("labels", std::move(labels));
  template_metadata.set("annotations", std::move(annotations));
  Node pod_template = Node::map();
  pod_template.set("metadata", std::move(template_metadata));
  return deployment_template_patch(std::move(metadata), std::move(pod_template));
}

std::vector<Node> helm_cache_args(const char* max_size) {
  return {add_arg(std::string("--helm-cache-max-size=") + max_size),
          add_arg("--helm-cache-ttl=720m"), add_arg("--helm-cache-purge-interval=60m")};
}

Patch deployments(const std::string& name, std::vector<Node> operations) {
  return json_patch({.kind = "Deployment", .name = name}, operations);
}

std::vector<Patch> small_profile() {
  std::vector<Node> source = helm_cache_args("10");
  return {
      json_patch({.kind = "Deployment"}, {set_resources("64Mi", "1000m", "512Mi")}),
      deployments(kKustomizeHelm, {add_arg("--concurrent=5"), add_arg("--requeue-dependency=10s")}),
      deployments(kSource, source)};
}

std::vector<Patch> medium_profile() {
  std::vector<Node> source = helm_cache_args("50");
  source.push_back(add_arg("--concurrent=5"));
  return {
      deployments("(kustomize-controller|helm-controller|source-controller)",
                  {set_resources("128Mi", "2000m", "1Gi")}),
      deployments(kKustomizeHelm, {add_arg("--concurrent=10"), add_arg("--requeue-dependency=5s")}),
      deployments(kSource, source)};
}

std::vector<Patch> large_profile() {
  std::vector<Node> source = helm_cache_args("100");
  source.push_back(add_arg("--concurrent=10"));
  source.push_back(set_resources("256Mi", "2000m", "2Gi"));
  return {
      deployments(kKustomizeHelm, {add_arg("--concurrent=20"), add_arg("--requeue-dependency=5s"),
                                   set_resources("256Mi", "3000m", "3Gi")}),
      deployments(kSource, source)};
}

// The kind lists of the notification CRDs' `kind` enums: one per served
// version, which Flux dropped over time (v1beta1 after 2.6, v1beta2 after 2.8).
std::vector<Node> enum_additions(const distribution::Version& version, const char* list_field) {
  int served = version.minor <= 6 ? 3 : version.minor <= 8 ? 2 : 1;
  std::vector<Node> operations;
  for (const char* kind : {"FluxInstance", "ResourceSet", "ResourceSetInputProvider"}) {
    for (int v = 0; v < served; ++v) {
      operations.push_back(add("/spec/versions/" + std::to_string(v) +
                                   "/schema/openAPIV3Schema/properties/spec/properties/" +
                                   list_field + "/items/properties/kind/enum/-",
                               Node::string(kind)));
    }
  }
  return operations;
}

Node all_of_operator_group() {
  auto list = [](const char* item) {
    Node node = Node::sequence();
    node.push_back(Node::string(item));
    return node;
  };
  Node rule = Node::map();
  rule.set("apiGroups", list("fluxcd.controlplane.io"));
  rule.set("resources", list("*"));
  rule.set("verbs", list("*"));
  return rule;
}

}  // namespace

std::vector<Patch> cluster_type_patches(const std::string& type) {
  if (type != "openshift") return {};
  return {json_patch({.kind = "Deployment"},
                     {remove("/spec/template/spec/securityContext"),
                      remove("/spec/template/spec/containers/0/securityContext/seccompProfile"),
                      remove("/spec/template/spec/containers/0/securityContext/runAsNonRoot")}),
          json_patch({.kind = "Namespace"},
                     {remove("/metadata/labels/pod-security.kubernetes.io~1warn"),
                      remove("/metadata/labels/pod-security.kubernetes.io~1warn-version")})};
}

std::vector<Patch> cluster_size_patches(const std::string& size) {
  std::vector<Patch> patches{pod_template_patch(size)};
  std::vector<Patch> profile = size == "small"    ? small_profile()
                               : size == "medium" ? medium_profile()
                               : size == "large"  ? large_profile()
                                                  : std::vector<Patch>{};
  patches.insert(patches.end(), profile.begin(), profile.end());
  return patches;
}

std::vector<Patch> multitenant_patches(const std::string& default_service_account) {
  return {deployments("(kustomize-controller|helm-controller|notification-controller|"
                      "image-reflector-controller|image-automation-controller|source-watcher)",
                      {add_arg("--no-cross-namespace-refs=true")}),
          deployments("(kustomize-controller)", {add_arg("--no-remote-bases=true")}),
          deployments(kKustomizeHelm,
                      {add_arg("--default-service-account=" + default_service_account)}),
          json_patch({.kind = "Kustomization"},
                     {add("/spec/serviceAccountName", Node::string("kustomize-controller"))})};
}

std::vector<Patch> external_artifact_patches() {
  return {deployments(kKustomizeHelm, {add_arg("--feature-gates=ExternalArtifact=true")})};
}

std::vector<Patch> notification_patches(const distribution::Version& version,
                                        const std::string& ns) {
  return {json_patch(
              {.kind = "CustomResourceDefinition", .name = "alerts.notification.toolkit.fluxcd.io"},
              enum_additions(version, "eventSources")),
          json_patch({.kind = "CustomResourceDefinition",
                      .name = "receivers.notification.toolkit.fluxcd.io"},
                     enum_additions(version, "resources")),
          json_patch({.kind = "ClusterRole", .name = "crd-controller-" + ns},
                     {add("/rules/-", all_of_operator_group())})};
}

}  // namespace fluxop::render
