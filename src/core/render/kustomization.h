// The kustomizations the renderer generates: the instance's, over the
// distribution's manifests and the generated files, and the roles' one that
// suffixes the RBAC names with the namespace.
#pragma once

#include <string>
#include <vector>

#include "core/distribution/component_image.h"
#include "core/distribution/version.h"
#include "core/instance/instance.h"
#include "core/yaml/node.h"

namespace fluxop::render {

struct Layout {
  bool network_policy = false;        // policies.yaml
  std::vector<std::string> shards{};  // one directory each
  bool storage = false;               // pvc.yaml
  bool sync = false;                  // sync.yaml
};

// `patches` follow the node selector patch, in order.
yaml::Node instance_kustomization(const std::string& ns, const std::vector<std::string>& components,
                                  const Layout& layout,
                                  const std::vector<distribution::ComponentImage>& images,
                                  const std::vector<yaml::Node>& patches);

yaml::Node roles_kustomization(const std::string& ns, const distribution::Version& version,
                               bool drop_token_permission);

// .spec.kustomize.patches as kustomize reads them.
std::vector<yaml::Node> user_patches(const std::vector<instance::Patch>& patches);

}  // namespace fluxop::render
