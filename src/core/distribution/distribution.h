// A Flux distribution, laid out like the Flux Operator's
// flux-operator-manifests artifact:
//   flux/vX.Y.Z/<component>.yaml, rbac.yaml, policies.yaml   the manifests
//   flux-images/vX.Y.Z/<variant>.yaml                         image catalogs
// read from a directory, from an artifact's layer in fluxopctl's cache
// (oci/layer_files.h) without extracting it, or from memory (tests).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/distribution/version.h"
#include "core/file_system.h"

namespace fluxop::distribution {

class Distribution;

// The distribution in the directory `root` of `files`; throws fluxop::Error
// when root/flux is not a directory.
Distribution directory_distribution(const std::string& root,
                                    std::shared_ptr<const FileSystem> files);

class Distribution {
 public:
  // The directory `root` of the process's file system; throws fluxop::Error
  // when root/flux is not a directory.
  explicit Distribution(std::string root);
  // `files`, its paths relative to the distribution's root
  // ("flux/v2.7.1/rbac.yaml"), named `root` in messages (an oci:// URL
  // pinned to its digest).
  Distribution(std::string root, std::shared_ptr<const FileSystem> files);

  const std::string& root() const { return root_; }

  // The subdirectories of flux/ whose names parse as versions (files and
  // other names are skipped, as the operator skips them), ascending; equal
  // versions ("2.7.1", "v2.7.1") keep their name order.
  const std::vector<Version>& versions() const { return versions_; }

  // flux/<directory name of the version>
  std::string manifests_dir(const Version& version) const;
  // flux-images/<directory name of the version>/<variant>.yaml
  std::string image_catalog_path(const Version& version, std::string_view variant) const;

  // A path above, as messages name it: under the root.
  std::string label(const std::string& path) const;
  // The names of the regular files in `dir`.
  std::vector<std::string> files(const std::string& dir) const {
    return files_->list(dir, FileSystem::Kind::File);
  }
  // Whether `path` is a regular file of the distribution.
  bool has_file(const std::string& path) const {
    return files_->kind(path) == FileSystem::Kind::File;
  }
  // Throws fluxop::Error naming label(path) when it cannot be read.
  std::string read(const std::string& path) const { return files_->read(path); }

 private:
  std::string root_;
  std::shared_ptr<const FileSystem> files_;
  std::vector<Version> versions_;
};

}  // namespace fluxop::distribution
