#include "core/render/component_patches.h"

#include <algorithm>

#include "core/render/patch.h"

namespace fluxop::render {

using yaml::Node;

namespace {

// The first arguments of every Flux controller's manifest, replaced in place.
std::vector<Node> common_args(const instance::FluxInstance& flux, bool sends_events) {
  std::vector<std::string> args;
  if (sends_events) args.push_back("--events-addr=" + events_address(flux));
  args.push_back("--watch-all-namespaces=true");
  args.push_back("--log-level=info");
  std::vector<Node> operations;
  for (std::size_t i = 0; i < args.size(); ++i) {
    operations.push_back(replace(arg_path(std::to_string(i)), Node::string(args[i])));
  }
  return operations;
}

// The seventh argument of the controllers that serve artifacts.
Node storage_address(const instance::FluxInstance& flux, const std::string& component) {
  return replace(arg_path("6"),
                 Node::string("--storage-adv-addr=" + component + ".$(RUNTIME_NAMESPACE).svc." +
                              flux.cluster.domain + "."));
}

Target deployment(const std::string& name, std::string annotation_selector = {}) {
  return {.kind = "Deployment",
          .name = name,
          .annotation_selector = std::move(annotation_selector),
          .apps_v1 = true};
}

Patch persistent_storage() {
  Node claim = Node::map();
  claim.set("claimName", Node::string("source-controller"));
  Node volume = Node::map();
  volume.set("name", Node::string("persistent-data"));
  volume.set("persistentVolumeClaim", std::move(claim));
  Node mount = Node::map();
  mount.set("name", Node::string("persistent-data"));
  mount.set("mountPath", Node::string("/data"));
  return json_patch(deployment("source-controller", std::string("!") + kShardRoleAnnotation),
                    {add("/spec/template/spec/volumes/-", std::move(volume)),
                     replace("/spec/template/spec/containers/0/volumeMounts/0", std::move(mount))});
}

}  // namespace

std::vector<std::string> shardable_components(const distribution::Version& version) {
  std::vector<std::string> names = {"source-controller", "kustomize-controller", "helm-controller",
                                    "image-reflector-controller", "image-automation-controller"};
  if (version.major > 2 || version.minor >= 9) names.push_back("source-watcher");
  return names;
}

std::string events_address(const instance::FluxInstance& flux) {
  const auto& components = flux.components;
  if (std::find(components.begin(), components.end(), "notification-controller") ==
      components.end()) {
    return "";
  }
  return "http://notification-controller." + flux.ns + ".svc." + flux.cluster.domain + "./";
}

std::vector<Patch> component_patches(const instance::FluxInstance& flux,
                                     const distribution::Version& version) {
  std::vector<Patch> patches;
  for (const std::string& component : flux.components) {
    std::vector<Node> operations = common_args(flux, component != "notification-controller");
    bool serves_artifacts = component == "source-controller" || component == "source-watcher";
    if (serves_artifacts) operations.push_back(storage_address(flux, component));
    patches.push_back(json_patch(deployment(component), operations));
    if (component == "source-controller" && flux.storage) patches.push_back(persistent_storage());
  }
  if (flux.sharding) {
    patches.push_back(json_patch({.kind = "Deployment",
                                  .name = any_of(shardable_components(version)),
                                  .annotation_selector = std::string("!") + kShardRoleAnnotation},
                                 {add_arg("--watch-label-selector=!" + flux.sharding->key)}));
  }
  return patches;
}

}  // namespace fluxop::render
