#include "core/render/render.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "core/digest.h"
#include "core/distribution/image_catalog.h"
#include "core/distribution/manifest_images.h"
#include "core/distribution/resolve.h"
#include "core/error.h"
#include "core/kustomize/build.h"
#include "core/labels.h"
#include "core/render/apply_order.h"
#include "core/render/component_patches.h"
#include "core/render/generated.h"
#include "core/render/kustomization.h"
#include "core/render/profiles.h"
#include "core/render/shard.h"
#include "core/render/workload_identity.h"
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
// .spec.cluster, through the operator's defaults. The operator reads the
// stored object, which has the CRD's default.
bool network_policy(const instance::FluxInstance& flux, Mode mode) {
  if (mode == Mode::operator_controller) return flux.cluster.network_policy;
  const Node* cluster = flux.source.find({"spec", "cluster"});
  if (!cluster || !cluster->is_map()) return true;
  const Node* value = cluster->get("networkPolicy");
  if (!value || value->is_null()) return false;
  return flux.cluster.network_policy;
}

// The operator refuses, at build time, what the Flux version cannot run.
void check_sync(const instance::FluxInstance& flux, const distribution::Version& version) {
  if (!flux.sync || flux.sync->kind != "GitRepository" || flux.sync->provider != "aws") return;
  if (version.major > 2 || (version.major == 2 && version.minor >= 9)) return;
  throw Error(flux.file +
              ": .spec.sync.provider: aws needs Flux 2.9.0 or later for a GitRepository, not " +
              version.original);
}

// The CLI's images, the tags of the components' manifests, or why not.
struct ManifestImages {
  std::vector<distribution::ComponentImage> images;
  std::exception_ptr failure;
};

// The images the operator pins by digest, else (with a warning) the CLI's.
std::vector<distribution::ComponentImage> images(const instance::FluxInstance& flux,
                                                 const distribution::Distribution& dist,
                                                 const distribution::Version& version,
                                                 const RenderOptions& options,
                                                 ManifestImages from_manifests,
                                                 std::vector<std::string>& warnings) {
  if (options.mode == Mode::operator_controller) {
    try {
      return distribution::catalog_images(dist, version, flux.distribution.registry,
                                          flux.distribution.variant, flux.components);
    } catch (const Error& error) {
      warnings.push_back(flux.file + ": images are not pinned by digest (" + error.what() +
                         "); using the tags of the manifests");
    }
  }
  if (from_manifests.failure) std::rethrow_exception(from_manifests.failure);
  return std::move(from_manifests.images);
}

// Every patch of the instance kustomization after the node selector, in the
// order upstream lists them.
std::vector<Patch> instance_patches(const instance::FluxInstance& flux,
                                    const distribution::Version& version,
                                    WorkloadIdentity& identity, const kustomize::Context& context) {
  std::vector<Patch> patches = component_patches(flux, version);
  auto append = [&](std::vector<Patch>&& more) {
    for (Patch& patch : more) patches.push_back(std::move(patch));
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
  append(std::move(identity.patches));
  append(user_patches(flux.patches, context));
  return patches;
}

// .spec.commonMetadata is copied onto every object: `objects` copies of it,
// charged to the build's budget before any is made (3,000 labels on 200
// shards' objects would be millions of nodes).
void charge_common_metadata(const instance::FluxInstance& flux, std::size_t objects,
                            yaml::NodeBudget& budget) {
  Node metadata = Node::map();
  for (const auto& [field, values] :
       {std::pair{"labels", &flux.common_metadata->labels},
        std::pair{"annotations", &flux.common_metadata->annotations}}) {
    Node& copied = metadata.set(field, Node::map());
    for (const auto& [key, value] : *values) copied.append(key, Node::string(value));
  }
  try {
    budget.charge_copies(metadata, objects, 1);
  } catch (const Error& error) {
    throw Error(flux.file + ": .spec.commonMetadata: " + error.what() + " (copied onto each of " +
                std::to_string(objects) + " objects)");
  }
}

// The namespace the distribution's manifests are written for.
constexpr std::string_view kManifestsNamespace = "flux-system";

// The bindings' subjects name the manifests' namespace, which the namespace
// transformer does not reach (it sets only subjects named "default").
void bind_to_namespace(kustomize::ResourceList& roles, const std::string& ns) {
  for (kustomize::Resource& role : roles) {
    Node* subjects = role.object().get("subjects");
    if (!subjects || !subjects->is_sequence()) continue;
    for (Node& subject : subjects->items()) {
      if (subject.is_map() && subject.string_at({"namespace"}) == kManifestsNamespace) {
        subject.set("namespace", Node::string(ns));
      }
    }
  }
}

// The kustomization tree upstream writes, composed in memory: the
// namespace, network policies, roles, components, shards, storage and sync,
// each level transformed as its kustomization would be.
kustomize::ResourceList compose(const instance::FluxInstance& flux,
                                const distribution::Distribution& dist,
                                const distribution::Version& version, WorkloadIdentity identity,
                                const kustomize::Context& context, const RenderOptions& options,
                                std::vector<std::string>& warnings) {
  // The objects of a YAML stream: a distribution manifest or a generated one.
  auto objects = [&options, &context](std::string_view text, const std::string& origin) {
    return kustomize::load_resources(text, origin, options.parse_cache, *context.budget);
  };
  Mode mode = options.mode;
  std::string manifests = dist.manifests_dir(version) + "/";
  auto manifest = [&](const std::string& name) {
    return objects(dist.read(manifests + name), dist.label(manifests + name));
  };
  kustomize::Accumulator accumulated;
  auto add = [&](kustomize::ResourceList&& more, const std::string& what) {
    accumulated.add(std::move(more), context, what);
  };
  add(objects(namespace_manifest(flux.ns), "namespace"), "namespace");
  if (network_policy(flux, mode)) add(manifest("policies.yaml"), "policies.yaml");
  kustomize::ResourceList roles = manifest("rbac.yaml");
  bind_to_namespace(roles, flux.ns);
  kustomize::apply_transforms(
      roles, roles_transforms(flux.ns, version, identity.drop_token_permission), context);
  add(std::move(roles), "rbac.yaml");
  // Each component's image is read from its manifest as loaded, before any
  // transform, so that the manifest is parsed once; a manifest without one
  // is an error only where those images are used.
  ManifestImages manifest_images;
  for (const std::string& component : flux.components) {
    kustomize::ResourceList loaded = manifest(component + ".yaml");
    std::vector<const Node*> documents;
    for (const kustomize::Resource& resource : loaded) documents.push_back(&resource.object());
    try {
      manifest_images.images.push_back(
          distribution::manifest_image(flux.distribution.registry, component, documents,
                                       dist.label(manifests + component + ".yaml")));
    } catch (const Error&) {
      if (!manifest_images.failure) manifest_images.failure = std::current_exception();
    }
    add(std::move(loaded), component + ".yaml");
  }
  if (flux.sharding) {
    bool shard_storage =
        mode == Mode::operator_controller && flux.storage && flux.sharding->storage == "persistent";
    kustomize::ResourceList shared;  // what every shard copies
    for (const std::string& component : shard_components(flux, version)) {
      for (kustomize::Resource& resource : manifest(component + ".yaml")) {
        shared.push_back(std::move(resource));
      }
    }
    if (shard_storage) {
      for (kustomize::Resource& claim : objects(storage_claim(*flux.storage), "shard storage")) {
        shared.push_back(std::move(claim));
      }
    }
    kustomize::apply_transforms(shared, shard_copy_transforms(), context);
    for (const std::string& shard : flux.sharding->shards) {
      kustomize::ResourceList copy = shared;
      for (const kustomize::Resource& resource : copy) context.budget->charge(resource.object());
      kustomize::apply_transforms(copy, shard_transforms(flux, version, shard, shard_storage),
                                  context);
      add(std::move(copy), "shard " + shard);
    }
  }
  if (flux.storage) add(objects(storage_claim(*flux.storage), "storage"), "storage");
  if (flux.sync) add(objects(sync_manifests(flux, version), "sync"), "sync");
  kustomize::ResourceList resources = std::move(accumulated).take();

  kustomize::apply_transforms(
      resources,
      instance_transforms(
          flux, version, images(flux, dist, version, options, std::move(manifest_images), warnings),
          instance_patches(flux, version, identity, context), context),
      context);
  kustomize::finish_build(resources, kustomize::Order::accumulated);
  return resources;
}

}  // namespace

std::string revision_of(const std::string& version, const std::vector<yaml::Node>& objects) {
  return version + "@" + sha256_digest(yaml::emit_stream(objects));
}

Rendered render(const instance::FluxInstance& flux, const distribution::Distribution& dist,
                const RenderOptions& options) {
  distribution::Version version;
  try {
    version = distribution::resolve_version(dist, flux.distribution.version);
  } catch (const Error& error) {
    throw Error(flux.file + ": " + error.what());
  }
  check_components(flux, version);
  check_shard_names(flux, version);
  if (options.mode == Mode::operator_controller) check_sync(flux, version);

  WorkloadIdentity identity = workload_identity(flux, version);
  kustomize::Context context{.dir = "", .file = flux.file};
  Rendered rendered;
  kustomize::ResourceList resources;
  try {
    resources =
        compose(flux, dist, version, std::move(identity), context, options, rendered.warnings);
  } catch (const Error& error) {
    throw Error(std::string(error.what()) + " (rendering Flux " + version.original + ")");
  }
  rendered.version = version;
  rendered.objects.reserve(resources.size());
  for (kustomize::Resource& resource : resources) {
    rendered.objects.push_back(std::move(resource.object()));
  }
  if (options.revision) {
    rendered.revision = revision_of(version.original, rendered.objects);
  }

  sort_for_apply(rendered.objects);
  if (flux.common_metadata) {
    charge_common_metadata(flux, rendered.objects.size(), *context.budget);
    set_metadata(rendered.objects, flux.common_metadata->labels, flux.common_metadata->annotations);
  }
  set_metadata(
      rendered.objects,
      {{std::string(kOwnerNameLabel), flux.name}, {std::string(kOwnerNamespaceLabel), flux.ns}},
      {});
  return rendered;
}

}  // namespace fluxop::render
