// The kustomizations the renderer composes in code: the instance's, over the
// distribution's manifests and the generated objects, and the roles' one
// that suffixes the RBAC names with the namespace.
#pragma once

#include <string>
#include <vector>

#include "core/distribution/component_image.h"
#include "core/distribution/version.h"
#include "core/instance/instance.h"
#include "core/kustomize/context.h"
#include "core/kustomize/transforms.h"
#include "core/render/patch.h"

namespace fluxop::render {

// The instance kustomization: `patches` after the node selector patch, the
// namespace, the images, and the labels and annotations of every object.
kustomize::Transforms instance_transforms(const instance::FluxInstance& flux,
                                          const distribution::Version& version,
                                          const std::vector<distribution::ComponentImage>& images,
                                          std::vector<Patch> patches,
                                          const kustomize::Context& context);

kustomize::Transforms roles_transforms(const std::string& ns, const distribution::Version& version,
                                       bool drop_token_permission);

// .spec.kustomize.patches; errors name `.spec.kustomize.patches[N]` in the
// instance file of `context`.
std::vector<Patch> user_patches(const std::vector<instance::Patch>& patches,
                                const kustomize::Context& context);

}  // namespace fluxop::render
