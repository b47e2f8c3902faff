#include "core/render/render.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/digest.h"
#include "core/distribution/manifest_images.h"
#include "core/distribution/resolve.h"
#include "core/error.h"
#include "core/instance/defaults.h"
#include "core/kustomize/build.h"
#include "core/render/apply_order.h"
#include "core/render/component_patches.h"
#include "core/render/generated.h"
#include "core/render/kustomization.h"
#include "core/render/profiles.h"
#include "core/render/shard.h"
#include "core/render/workload_identity.h"
#include "core/render/workspace.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"

namespace fluxop::render {

using yaml::Node;

namespace {

bool has(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The instance rules have checked the names; this checks the version.
void check_components(const instance::FluxInstance& flux, const distribution::Version& version) {
  for (std::size_t i = 0; i < flux.components.size(); ++i) {
    if (flux.components[i] == "source-watcher" && version.major == 2 && version.minor < 7) {
      throw Error(flux.file + ": .spec.components[" + std::to_string(i) +
                  "]: source-watcher needs Flux 2.7.0 or later, not " + version.original);
    }
  }
}

// The upstream CLI reads a .spec.cluster without networkPolicy as false (Go's
// zero value): the API server's default of true applies only to an absent
// .spec.cluster, through the operator's defaults.
bool network_policy(const instance::FluxInstance& flux) {
  const Node* cluster = flux.source.find({"spec", "cluster"});
  if (!cluster || !cluster->is_map()) return true;
  const Node* value = cluster->get("networkPolicy");
  if (!value || value->is_null()) return false;
  return flux.cluster.network_policy;
}

// Every patch of the instance kustomization after the node selector, in the
// order upstream lists them.
std::vector<Node> instance_patches(const instance::FluxInstance& flux,
                                   const distribution::Version& version,
                                   const WorkloadIdentity& identity) {
  std::vector<Node> patches = component_patches(flux, version);
  auto append = [&](const std::vector<Node>& more) {
    patches.insert(patches.end(), more.begin(), more.end());
  };
  append(cluster_type_patches(flux.cluster.type));
  append(cluster_size_patches(flux.cluster.size));
  if (flux.cluster.multitenant) {
    append(multitenant_patches(flux.cluster.tenant_default_service_account));
  }
  if (has(flux.components, "source-watcher")) append(external_artifact_patches());
  if (has(flux.components, "notification-controller")) {
    append(notification_patches(version, flux.ns));
  }
  append(identity.patches);
  append(user_patches(flux.patches));
  return patches;
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Writes the kustomization tree of the instance into `workspace`; returns the
// index of the first user patch in the instance kustomization's patches.
std::size_t lay_out(const Workspace& workspace, const instance::FluxInstance& flux,
                    const distribution::Distribution& dist, const distribution::Version& version) {
  std::string manifests = dist.manifests_dir(version) + "/";
  WorkloadIdentity identity = workload_identity(flux, version);

  Layout layout{.network_policy = network_policy(flux),
                .storage = flux.storage.has_value(),
                .sync = flux.sync.has_value()};
  if (flux.sharding) layout.shards = flux.sharding->shards;

  std::vector<distribution::ComponentImage> images =
      distribution::manifest_images(dist, version, flux.distribution.registry, flux.components);
  std::vector<Node> patches = instance_patches(flux, version, identity);
  // The node selector patch comes first.
  std::size_t first_user_patch = 1 + patches.size() - flux.patches.size();
  workspace.write("kustomization.yaml", yaml::emit(instance_kustomization(
                                            flux.ns, flux.components, layout, images, patches)));
  workspace.write("namespace.yaml", namespace_manifest(flux.ns));
  workspace.write("annotations.yaml", annotations_transformer());
  workspace.write("labels.yaml", labels_transformer(flux.ns, version.original));
  workspace.write("node-selector.yaml", node_selector_patch(flux.distribution.image_pull_secret));
  if (layout.network_policy) {
    workspace.write("policies.yaml", yaml::read_file(manifests + "policies.yaml"));
  }
  for (const std::string& component : flux.components) {
    workspace.write(component + ".yaml", yaml::read_file(manifests + component + ".yaml"));
  }
  if (flux.storage) workspace.write("pvc.yaml", storage_claim(*flux.storage));
  if (flux.sync) workspace.write("sync.yaml", sync_manifests(flux, version));

  // Subjects of the bindings name the namespace in the manifests' text,
  // which the namespace transformer does not reach.
  std::string rbac = yaml::read_file(manifests + "rbac.yaml");
  if (flux.ns != instance::kDefaultNamespace) rbac = replace_all(rbac, "flux-system", flux.ns);
  workspace.write("roles/rbac.yaml", rbac);
  workspace.write(
      "roles/kustomization.yaml",
      yaml::emit(roles_kustomization(flux.ns, version, identity.drop_token_permission)));

  for (const std::string& shard : layout.shards) {
    workspace.write(shard + "/kustomization.yaml",
                    yaml::emit(shard_kustomization(flux, version, shard)));
    for (const std::string& component : shard_components(flux, version)) {
      workspace.write(shard + "/" + component + ".yaml",
                      yaml::read_file(manifests + component + ".yaml"));
    }
  }
  return first_user_patch;
}

// An error of the instance kustomization's patches[index], as the field of
// the user patch it comes from; other errors as they are.
std::string name_user_patch(const std::string& message, std::size_t first_user_patch) {
  constexpr std::string_view kPrefix = "kustomization.yaml: patches[";
  if (!message.starts_with(kPrefix)) return message;
  std::size_t end = message.find("]: ", kPrefix.size());
  if (end == std::string::npos) return message;
  std::size_t index = std::stoul(message.substr(kPrefix.size(), end - kPrefix.size()));
  if (index < first_user_patch) return message;
  return ".spec.kustomize.patches[" + std::to_string(index - first_user_patch) +
         "]: " + message.substr(end + 3);
}

std::vector<Node> build(const Workspace& workspace, const instance::FluxInstance& flux,
                        const distribution::Version& version, std::size_t first_user_patch) {
  kustomize::ResourceList resources;
  try {
    resources = kustomize::build(workspace.dir());
  } catch (const Error& error) {
    std::string message = replace_all(error.what(), workspace.dir() + "/", "");
    throw Error(flux.file + ": " + name_user_patch(message, first_user_patch) +
                " (rendering Flux " + version.original + ")");
  }
  std::vector<Node> objects;
  objects.reserve(resources.size());
  for (kustomize::Resource& resource : resources) objects.push_back(std::move(resource.object()));
  return objects;
}

}  // namespace

Rendered render(const instance::FluxInstance& flux, const distribution::Distribution& dist,
                const RenderOptions& options) {
  distribution::Version version;
  try {
    version = distribution::resolve_version(dist, flux.distribution.version);
  } catch (const Error& error) {
    throw Error(flux.file + ": " + error.what());
  }
  check_components(flux, version);

  Workspace workspace;
  std::size_t first_user_patch = lay_out(workspace, flux, dist, version);
  Rendered rendered;
  rendered.version = version.original;
  rendered.objects = build(workspace, flux, version, first_user_patch);
  if (options.revision) {
    rendered.revision = version.original + "@" + sha256_digest(yaml::emit_stream(rendered.objects));
  }

  sort_for_apply(rendered.objects);
  if (flux.common_metadata) {
    set_metadata(rendered.objects, flux.common_metadata->labels, flux.common_metadata->annotations);
  }
  set_metadata(
      rendered.objects,
      {{"fluxcd.controlplane.io/name", flux.name}, {"fluxcd.controlplane.io/namespace", flux.ns}},
      {});
  return rendered;
}

}  // namespace fluxop::render
