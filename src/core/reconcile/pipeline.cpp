#include "core/reconcile/pipeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "core/concurrently.h"
#include "core/distribution/crd_versions.h"
#include "core/distribution/image_catalog.h"
#include "core/distribution/resolve.h"
#include "core/oci/reference.h"
#include "core/reconcile/preflight.h"
#include "core/reconcile/pull_secret.h"
#include "core/reconcile/status.h"
#include "core/signatures/image_signatures.h"

namespace fluxop::reconcile {

std::optional<std::string> outdated_version(const RenderedInstance& instance) {
  try {
    std::string latest =
        "v" + distribution::to_string(distribution::resolve_version(instance.distribution, "2.x"));
    if (latest == instance.rendered.version.original) return std::nullopt;
    return message(Reason::outdated_version, {instance.rendered.version.original, latest});
  } catch (const Error&) {
    // A distribution without a 2.x version has nothing newer to say.
    return std::nullopt;
  }
}

RegistryCredentials artifact_credentials(const instance::FluxInstance& flux,
                                         std::function<kube::Cluster&()> cluster) {
  if (flux.distribution.artifact_pull_secret.empty()) return {};
  RegistryCredentials from_secret;
  return [cluster = std::move(cluster), ns = flux.ns, name = flux.distribution.artifact_pull_secret,
          from_secret](std::string_view registry) mutable {
    if (!from_secret) from_secret = secret_credentials(cluster(), ns, name);
    return from_secret(registry);
  };
}

distribution::Distribution locate_distribution(
    ArtifactPort& artifacts, const instance::FluxInstance& flux, const RenderRequest& request,
    const RegistryCredentials& credentials, std::string& artifact_digest,
    std::function<bool()>* removed,
    const std::function<void(const PulledDistribution&)>& meanwhile) {
  distribution::OciResolver pull = [&](std::string_view url, std::string_view origin) {
    try {
      PulledDistribution pulled = artifacts.pull(url, origin, credentials, meanwhile);
      artifact_digest = pulled.digest;
      if (removed) *removed = std::move(pulled.removed);
      return std::move(pulled.distribution);
    } catch (const Error& e) {
      // What the operator reports as ArtifactFailed, and retries.
      throw ReconcileError(Failure::artifact, e.what());
    }
  };
  // What `fluxopctl pull` fetched last, without the network: a new machine
  // builds offline after one pull.
  distribution::PulledDefault pulled_default = [&]() -> std::optional<distribution::Distribution> {
    std::optional<PulledDistribution> pulled;
    try {
      pulled = artifacts.pulled_default();
    } catch (const Error& e) {
      throw ReconcileError(Failure::artifact, e.what());
    }
    if (!pulled) return std::nullopt;
    artifact_digest = pulled->digest;
    return std::move(pulled->distribution);
  };
  // --verify: a directory has no signature. Refused, not read unchecked.
  if (artifacts.verifies()) {
    std::optional<distribution::ArtifactSource> given =
        distribution::given_artifact(request.artifact, flux, request.environment);
    if (given && !distribution::is_oci_url(given->url)) {
      throw Error("--verify: " + given->origin + ": " + quote(given->url, kQuotedPathCharacters) +
                  " is a directory, which has no signature to verify: verify the artifact it "
                  "came from (fluxopctl verify oci://...) and give that oci:// URL instead");
    }
  }
  return distribution::locate(request.artifact, flux, request.environment, pull, pulled_default);
}

namespace {

// The images' signatures verified at once: an instance installs four to
// eight controllers, each a few requests to its registry.
constexpr int kSignatureRequests = 4;

// Who publishes each component's image, by the instance's image catalog:
// component -> default signer. Empty when the instance names no variant a
// catalog exists for (a registry of one's own without .spec.distribution.variant).
std::map<std::string, std::string_view> catalog_signers(
    const instance::FluxInstance& flux, const distribution::Distribution& distribution,
    const render::Rendered& rendered) {
  std::map<std::string, std::string_view> signers;
  try {
    std::string variant =
        distribution::catalog_variant(flux.distribution.registry, flux.distribution.variant);
    for (const distribution::CatalogImage& image :
         distribution::catalog_entries(distribution, rendered.version, variant, {}))
      signers[distribution::catalog_component(image)] = signatures::default_identity(image.name);
  } catch (const Error&) {
    // No catalog to say: each image's own name does.
  }
  return signers;
}

}  // namespace

void verify_installed_images(ArtifactPort& artifacts, const instance::FluxInstance& flux,
                             const distribution::Distribution& distribution,
                             render::Rendered& rendered) {
  // Each container's image, in the order of the Deployments.
  struct Installed {
    std::string where;  // "Deployment NAMESPACE/NAME"
    yaml::Node* image;
  };
  std::vector<Installed> installed;
  for (yaml::Node& object : rendered.objects) {
    if (object.string_at({"kind"}) != "Deployment") continue;
    std::string where = "Deployment " + object.string_at({"metadata", "namespace"}) + "/" +
                        object.string_at({"metadata", "name"});
    for (std::string_view list : {"containers", "initContainers"}) {
      yaml::Node* containers = object.find({"spec", "template", "spec", list});
      if (!containers || !containers->is_sequence()) continue;
      for (yaml::Node& container : containers->items()) {
        yaml::Node* image = container.is_map() ? container.get("image") : nullptr;
        if (image && image->is_string()) installed.push_back({where, image});
      }
    }
  }
  // Each image once, where it is first named, with who must have signed it
  // (a name that is no image reference said before any is verified);
  // verified a few at a time (the requests for their signatures in flight
  // together), the error of the first that fails, in that order, the one said.
  struct Image {
    std::string name;
    std::string where;
    oci::Reference ref;
    std::string_view identity;
    std::optional<std::string> digest;  // verified
  };
  auto failed = [](const std::string& where, const std::string& name, const Error& e) {
    return ReconcileError(Failure::artifact,
                          "--verify: " + where + ": image " + name + ": " + e.what());
  };
  std::vector<Image> images;
  auto image_named = [&images](const std::string& name) {
    return std::find_if(images.begin(), images.end(),
                        [&name](const Image& image) { return image.name == name; });
  };
  std::map<std::string, std::string_view> signers;
  if (!installed.empty()) signers = catalog_signers(flux, distribution, rendered);
  for (const Installed& each : installed) {
    std::string name = each.image->text();
    if (image_named(name) != images.end()) continue;
    try {
      oci::Reference ref = oci::Reference::parse("oci://" + name);
      auto signer = signers.find(ref.repository.substr(ref.repository.rfind('/') + 1));
      std::string_view identity =
          signer != signers.end()
              ? signer->second
              : signatures::default_identity(ref.registry + "/" + ref.repository);
      images.push_back({name, each.where, std::move(ref), identity, std::nullopt});
    } catch (const Error& e) {
      throw failed(each.where, name, e);
    }
  }
  run_concurrently(images.size(), kSignatureRequests, [&]() -> ItemWork {
    return [&](std::size_t i) {
      Image& image = images[i];
      try {
        image.digest = artifacts.verify_image(image.ref, image.identity);
      } catch (const Error& e) {
        throw failed(image.where, image.name, e);
      }
    };
  });
  if (std::any_of(images.begin(), images.end(), [](const Image& image) { return !image.digest; }))
    return;  // no --verify
  bool pinned = false;
  for (const Installed& each : installed) {
    std::string name = each.image->text();
    if (name.find('@') != std::string::npos) continue;
    *each.image = yaml::Node::string(name + "@" + *image_named(name)->digest);
    pinned = true;
  }
  if (pinned && !rendered.revision.empty())
    rendered.revision = render::revision_of(rendered.version.original, rendered.objects);
}

RenderedInstance render_instance(ArtifactPort& artifacts, instance::FluxInstance flux,
                                 const RenderRequest& request,
                                 const RegistryCredentials& credentials) {
  // What a render parsed is cached once it succeeded, not on a failure: a
  // daemon's next render starts clean.
  auto discard_parsed = [&request] {
    if (request.parse_cache) request.parse_cache->discard();
  };
  auto render_from = [&request](instance::FluxInstance& target,
                                const distribution::Distribution& dist) {
    if (!request.version.empty()) {
      distribution::resolve_version(dist, request.version, "--version");
      target.distribution.version = request.version;
    }
    return render::render(
        target, dist,
        {.revision = request.revision, .mode = request.mode, .parse_cache = request.parse_cache});
  };
  for (bool again = false;; again = true) {
    std::string artifact_digest;
    std::function<bool()> removed;
    // Most often a tag still names the artifact it named last: that one is
    // rendered while the registry answers, and the render kept when the
    // pull returns it. Any failure is left to the render below, whose
    // error it then is.
    std::optional<std::pair<std::string, render::Rendered>> early;
    auto render_early = [&](const PulledDistribution& likely) {
      try {
        instance::FluxInstance target = flux;
        early.emplace(likely.digest, render_from(target, likely.distribution));
      } catch (...) {
      }
    };
    try {
      distribution::Distribution dist = locate_distribution(
          artifacts, flux, request, credentials, artifact_digest, &removed, render_early);
      render::Rendered rendered;
      if (early && early->first == artifact_digest) {
        if (!request.version.empty()) flux.distribution.version = request.version;
        rendered = std::move(early->second);
      } else {
        rendered = render_from(flux, dist);
      }
      if (request.notice) {
        for (const std::string& warning : rendered.warnings) request.notice("warning: " + warning);
      }
      if (request.verify_images) verify_installed_images(artifacts, flux, dist, rendered);
      if (request.parse_cache) request.parse_cache->commit();
      return {std::move(flux), std::move(dist), std::move(rendered), std::move(artifact_digest)};
    } catch (const ReconcileError&) {
      discard_parsed();
      throw;
    } catch (const Error& e) {
      discard_parsed();
      // A layer found damaged as it was read: its entry is gone, the
      // artifact is pulled again, once.
      if (!again && removed && removed()) {
        if (request.notice) request.notice("warning: " + std::string(e.what()));
        continue;
      }
      throw ReconcileError(Failure::build, e.what());
    }
  }
}

std::string artifact_digest(ArtifactPort& artifacts, const instance::FluxInstance& flux,
                            const RenderRequest& request, const RegistryCredentials& credentials) {
  if (std::optional<distribution::ArtifactSource> given =
          distribution::given_artifact(request.artifact, flux, request.environment)) {
    if (!distribution::is_oci_url(given->url)) return "";
    return artifacts.pull(given->url, given->origin, credentials, {}).digest;
  }
  std::optional<PulledDistribution> pulled = artifacts.pulled_default();
  return pulled ? pulled->digest : "";
}

Reconciliation reconcile_instance(kube::Cluster& cluster, ArtifactPort& artifacts,
                                  instance::FluxInstance flux, const RenderRequest& request,
                                  ApplyOptions apply,
                                  const std::function<void(const RenderedInstance&)>& rendered) {
  RegistryCredentials credentials =
      artifact_credentials(flux, [&cluster]() -> kube::Cluster& { return cluster; });
  Reconciliation run{render_instance(artifacts, std::move(flux), request, credentials), {}};
  if (rendered) rendered(run.instance);
  run.result = apply_rendered(cluster, run.instance, std::move(apply));
  return run;
}

ApplyResult apply_rendered(kube::Cluster& cluster, const RenderedInstance& instance,
                           ApplyOptions apply) {
  if (apply.preflight) require_cheap_checks(cluster, instance, apply.on_progress);
  apply.artifact_revision = instance.artifact_digest;
  apply.outdated_version = outdated_version(instance);
  apply.intermediate_version = [&instance](const std::string& crd,
                                           const std::vector<std::string>& api_versions) {
    std::optional<distribution::Version> through = distribution::newest_serving(
        instance.distribution, instance.rendered.version, crd, api_versions);
    return through ? "v" + distribution::to_string(*through) : std::string();
  };
  return apply_instance(cluster, instance.flux, instance.rendered, apply);
}

Plan plan_instance(const std::function<kube::Cluster&()>& cluster, ArtifactPort& artifacts,
                   instance::FluxInstance flux, const RenderRequest& request,
                   const std::function<void(const RenderedInstance&)>& rendered,
                   const PruneOptions& prune) {
  RegistryCredentials credentials = artifact_credentials(flux, cluster);
  Plan plan{render_instance(artifacts, std::move(flux), request, credentials), {}};
  if (rendered) rendered(plan.instance);
  plan.diff = diff_instance(cluster(), plan.instance.flux, plan.instance.rendered, prune);
  return plan;
}

}  // namespace fluxop::reconcile
