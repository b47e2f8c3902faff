// The patches that tune the Flux controllers for a FluxInstance's
// .spec.cluster settings and components, in the order upstream's
// `build instance` appends them to the kustomization.
#pragma once

#include <vector>

#include "core/distribution/version.h"
#include "core/instance/instance.h"
#include "core/render/patch.h"

namespace fluxop::render {

// .spec.cluster.type: OpenShift runs pods without the restricted security
// context and namespace pod-security labels; other types change nothing.
std::vector<Patch> cluster_type_patches(const std::string& type);

// .spec.cluster.size: small, medium, large, or "" for the common pod
// template label and annotation only.
std::vector<Patch> cluster_size_patches(const std::string& size);

// .spec.cluster.multitenant: no cross-namespace references, no remote bases,
// a default service account for kustomize/helm and for the sync Kustomization.
std::vector<Patch> multitenant_patches(const std::string& default_service_account);

// source-watcher serves ExternalArtifacts, which kustomize and helm
// controllers read behind a feature gate.
std::vector<Patch> external_artifact_patches();

// Lets notification-controller's Alerts and Receivers name the Flux Operator
// kinds, and the CRD controller's role (named with the `ns` suffix) manage them.
std::vector<Patch> notification_patches(const distribution::Version& version,
                                        const std::string& ns);

}  // namespace fluxop::render
