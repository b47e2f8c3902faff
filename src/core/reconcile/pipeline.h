// The reconciliation of one FluxInstance, from its spec to the cluster, as
// every command runs it: the credentials of its distribution artifact (its
// pull secret), the distribution located and pulled through the artifact
// port, the render, then the apply or its plan (diff). Failures before the
// apply are classified (ArtifactFailed, BuildFailed); what the render parsed
// is cached only when it succeeded. `build` runs the render alone, `apply`
// and the daemon all of it, `diff` the plan.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/distribution/distribution.h"
#include "core/distribution/locate.h"
#include "core/instance/instance.h"
#include "core/kube/cluster.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/artifacts.h"
#include "core/reconcile/instance_diff.h"
#include "core/render/render.h"
#include "core/yaml/parse_cache.h"

namespace fluxop::reconcile {

// What is rendered besides the instance itself.
struct RenderRequest {
  // --distribution-artifact; empty: the instance's, the environment's.
  std::string artifact;
  // Replaces .spec.distribution.version (diff --version); errors name the flag.
  std::string version;
  render::Mode mode = render::Mode::operator_controller;
  bool revision = true;  // compute the revision (it reads every object)
  // --verify on apply and the daemon: the signatures of the images the
  // rendered Deployments run (verify_installed_images), besides the artifact's.
  bool verify_images = false;
  distribution::Environment environment;
  // The render's warnings ("warning: ..."), what was pulled.
  std::function<void(const std::string&)> notice;
  // What the render parses the distribution's manifests through (the
  // command's, yaml::user_parse_cache); none: parsed every time.
  yaml::ParseCache* parse_cache = nullptr;
};

struct RenderedInstance {
  instance::FluxInstance flux;
  distribution::Distribution distribution;
  render::Rendered rendered;
  std::string artifact_digest;  // of the OCI artifact's manifest, when one was pulled
};

// "Flux vX is outdated, the latest stable version is vY", as the operator
// records it (an OutdatedVersion event) when the instance renders an older
// minor than the distribution's newest 2.x; none when it is the newest.
std::optional<std::string> outdated_version(const RenderedInstance& instance);

// The instance's .spec.distribution.artifactPullSecret, read from the cluster
// on first use (`cluster` is called then); empty when it names none, for the
// Docker config's.
RegistryCredentials artifact_credentials(const instance::FluxInstance& flux,
                                         std::function<kube::Cluster&()> cluster);

// The instance's distribution, by the precedence of distribution::locate,
// pulled through `artifacts`; `artifact_digest` gets the digest of the
// artifact pulled (left as it is for a directory), and `removed`, when
// given, its PulledDistribution::removed; `meanwhile` is the pull's
// (ArtifactPort::pull). Throws ReconcileError ArtifactFailed when the
// artifact could not be read, fluxop::Error when nothing names a
// distribution.
distribution::Distribution locate_distribution(
    ArtifactPort& artifacts, const instance::FluxInstance& flux, const RenderRequest& request,
    const RegistryCredentials& credentials, std::string& artifact_digest,
    std::function<bool()>* removed = nullptr,
    const std::function<void(const PulledDistribution&)>& meanwhile = {});

// --verify: the signature of every image the rendered Deployments run
// (containers and init containers), each by its publisher's default signer
// (the image catalog's name of its component, else its own; see
// signatures::default_identity) unless the flags name one, through
// `artifacts` (which remembers what it verified). An image named by a tag
// alone is pinned to the digest verified, and the revision computed again:
// the cluster runs what was verified, not what the tag names when a node
// pulls it. Throws ReconcileError ArtifactFailed naming the Deployment, the
// image and what failed. Nothing without --verify.
void verify_installed_images(ArtifactPort& artifacts, const instance::FluxInstance& flux,
                             const distribution::Distribution& distribution,
                             render::Rendered& rendered);

// Locates the instance's distribution (pulling it through `artifacts`) and
// renders it (and, when `request` says, verifies its images). Throws ReconcileError: ArtifactFailed
// when the artifact could not be read, BuildFailed when the instance does not render.
RenderedInstance render_instance(ArtifactPort& artifacts, instance::FluxInstance flux,
                                 const RenderRequest& request,
                                 const RegistryCredentials& credentials = {});

// The digest the instance's distribution artifact has now, by the same
// precedence as the render (a new one is pulled into the cache, for the
// reconcile it triggers); empty when the distribution is a directory.
std::string artifact_digest(ArtifactPort& artifacts, const instance::FluxInstance& flux,
                            const RenderRequest& request, const RegistryCredentials& credentials);

struct Reconciliation {
  RenderedInstance instance;
  ApplyResult result;
};

// Renders the instance with its pull secret and applies it (apply_instance);
// `rendered` hears of the render before anything is written.
Reconciliation reconcile_instance(kube::Cluster& cluster, ArtifactPort& artifacts,
                                  instance::FluxInstance flux, const RenderRequest& request,
                                  ApplyOptions apply,
                                  const std::function<void(const RenderedInstance&)>& rendered);

// reconcile_instance after its render: the cheap checks when asked, then
// apply_instance. A fleet renders once and applies on each cluster.
ApplyResult apply_rendered(kube::Cluster& cluster, const RenderedInstance& instance,
                           ApplyOptions apply);

struct Plan {
  RenderedInstance instance;
  InstanceDiff diff;
};

// What reconcile_instance would change, from a server dry run; the cluster
// is connected (`cluster` called) once the instance has rendered, or before
// when its pull secret is to be read.
Plan plan_instance(const std::function<kube::Cluster&()>& cluster, ArtifactPort& artifacts,
                   instance::FluxInstance flux, const RenderRequest& request,
                   const std::function<void(const RenderedInstance&)>& rendered,
                   const PruneOptions& prune = {});

}  // namespace fluxop::reconcile
