#include "core/render/shard.h"

#include <algorithm>

#include "core/error.h"
#include "core/kustomize/builtin_fieldspecs.h"
#include "core/render/component_patches.h"
#include "core/render/patch.h"

namespace fluxop::render {

using yaml::Node;

namespace {

// A strategic merge patch deleting every object its target selects.
Patch delete_cluster_wide_objects() {
  Node metadata = Node::map();
  metadata.set("name", Node::string("all"));
  Node patch = Node::map();
  patch.set("apiVersion", Node::string("v1"));
  patch.set("kind", Node::string("all"));
  patch.set("metadata", std::move(metadata));
  patch.set("$patch", Node::string("delete"));
  return merge_patch({.kind = "(Namespace|CustomResourceDefinition|ClusterRole|ClusterRoleBinding|"
                              "ServiceAccount|NetworkPolicy|ResourceQuota)"},
                     patch);
}

// Each shard's pods carry their own app label, so Services and Deployments
// select only the shard's pods.
Patch select_service(const std::string& component, const std::string& shard) {
  return json_patch({.kind = "Service", .name = "(" + component + ")"},
                    {replace("/spec/selector/app", Node::string(component + "-" + shard))});
}

// The shard's claim (named as the source-controller's) replaces the first
// volume, the artifact storage, and its mount.
void mount_claim(std::vector<Node>& operations, const std::string& shard) {
  std::string volume = "persistent-data-" + shard;
  Node claim = Node::map();
  claim.set("claimName", Node::string("source-controller-" + shard));
  Node source = Node::map();
  source.set("name", Node::string(volume));
  source.set("persistentVolumeClaim", std::move(claim));
  operations.push_back(replace("/spec/template/spec/volumes/0", std::move(source)));
  Node mount = Node::map();
  mount.set("name", Node::string(volume));
  mount.set("mountPath", Node::string("/data"));
  operations.push_back(
      replace("/spec/template/spec/containers/0/volumeMounts/0", std::move(mount)));
}

Patch relabel_deployment(const instance::FluxInstance& flux, const std::string& component,
                         const std::string& shard, bool serves_artifacts, bool claim = false) {
  std::string app = component + "-" + shard;
  std::vector<Node> operations = {replace("/spec/selector/matchLabels/app", Node::string(app)),
                                  replace("/spec/template/metadata/labels/app", Node::string(app))};
  if (serves_artifacts) {
    operations.push_back(add_arg("--storage-adv-addr=" + app + ".$(RUNTIME_NAMESPACE).svc." +
                                 flux.cluster.domain + "."));
  }
  if (claim) mount_claim(operations, shard);
  return json_patch({.kind = "Deployment", .name = "(" + component + ")"}, operations);
}

}  // namespace

std::vector<std::string> shard_components(const instance::FluxInstance& flux,
                                          const distribution::Version& version) {
  std::vector<std::string> shardable = shardable_components(version);
  std::vector<std::string> components;
  for (const std::string& component : flux.components) {
    if (std::find(shardable.begin(), shardable.end(), component) != shardable.end()) {
      components.push_back(component);
    }
  }
  return components;
}

void check_shard_names(const instance::FluxInstance& flux, const distribution::Version& version) {
  if (!flux.sharding) return;
  std::vector<std::string> components = shard_components(flux, version);
  auto longest = std::max_element(
      components.begin(), components.end(),
      [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  if (longest == components.end()) return;
  constexpr std::size_t kMaxName = 63;  // a DNS label, a label value
  std::size_t max_shard = kMaxName - longest->size() - 1;
  const std::vector<std::string>& shards = flux.sharding->shards;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    if (shards[i].size() <= max_shard) continue;
    std::string name = *longest + "-" + shards[i];
    throw Error(flux.file + ": .spec.sharding.shards[" + std::to_string(i) + "]: makes the name " +
                quote(name, name.size()) + " (" + std::to_string(name.size()) +
                " characters), longer than the 63 a Service name and a label value may have: "
                "at most " +
                std::to_string(max_shard) + " characters with " + *longest);
  }
}

kustomize::Transforms shard_copy_transforms() {
  Patch deletion = delete_cluster_wide_objects();
  deletion.field = "shard patches[0]";
  return {.patches = {std::move(deletion)}};
}

kustomize::Transforms shard_transforms(const instance::FluxInstance& flux,
                                       const distribution::Version& version,
                                       const std::string& shard, bool persistent_storage) {
  std::vector<std::string> shardable = shardable_components(version);
  bool has_watcher = shardable.back() == "source-watcher";

  std::vector<Patch> patches;
  patches.push_back(select_service("source-controller", shard));
  if (has_watcher) patches.push_back(select_service("source-watcher", shard));
  patches.push_back(relabel_deployment(flux, "source-controller", shard, true, persistent_storage));
  if (has_watcher) patches.push_back(relabel_deployment(flux, "source-watcher", shard, true));
  for (const char* component : {"kustomize-controller", "helm-controller",
                                "image-reflector-controller", "image-automation-controller"}) {
    patches.push_back(relabel_deployment(flux, component, shard, false));
  }
  patches.push_back(
      json_patch({.kind = "Deployment", .name = any_of(shardable)},
                 {add_arg("--watch-label-selector=" + flux.sharding->key + "=" + shard)}));
  // Numbered after the deletion of the cluster-wide objects, the first of
  // the shard kustomization's patches (shard_copy_transforms).
  for (std::size_t i = 0; i < patches.size(); ++i) {
    patches[i].field = "shard " + shard + " patches[" + std::to_string(i + 1) + "]";
  }

  return {.patches = std::move(patches),
          .ns = flux.ns,
          .name_suffix = "-" + shard,
          .common_annotations = {"commonAnnotations",
                                 {{kShardRoleAnnotation, "shard"}},
                                 kustomize::builtin_fieldspecs::common_annotations()}};
}

}  // namespace fluxop::render
