// A Flux distribution on disk, laid out like the Flux Operator's
// flux-operator-manifests artifact:
//   flux/vX.Y.Z/<component>.yaml, rbac.yaml, policies.yaml   the manifests
//   flux-images/vX.Y.Z/<variant>.yaml                         image catalogs
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/distribution/version.h"

namespace fluxop::distribution {

class Distribution {
 public:
  // Reads the versions of root/flux; throws fluxop::Error when it is not a directory.
  explicit Distribution(std::string root);

  const std::string& root() const { return root_; }

  // The subdirectories of flux/ whose names parse as versions (files and
  // other names are skipped, as the operator skips them), ascending; equal
  // versions ("2.7.1", "v2.7.1") keep their name order.
  const std::vector<Version>& versions() const { return versions_; }

  // flux/<directory name of the version>
  std::string manifests_dir(const Version& version) const;

  // flux-images/<directory name of the version>/<variant>.yaml
  std::string image_catalog_path(const Version& version, std::string_view variant) const;

 private:
  std::string root_;
  std::vector<Version> versions_;
};

}  // namespace fluxop::distribution
