// A Flux installation made by `flux bootstrap` or `flux install`, as adopt
// reads it: its objects, the same objects before the bootstrap
// kustomization's patches, and those patches in the FluxInstance's form.
#pragma once

#include <string>
#include <vector>

#include "core/file_system.h"
#include "core/yaml/node.h"
#include "core/yaml/parse_cache.h"

namespace fluxop::adopt {

// One patch of the bootstrap kustomization, as .spec.kustomize.patches
// writes it ({patch, target}), and where it was written.
struct DirectoryPatch {
  yaml::Node patch;   // {patch: TEXT, target: {...}}
  std::string field;  // "kustomization.yaml: patches[0]"
};

struct Installation {
  std::string origin;  // the directory, or "cluster", for messages
  std::vector<yaml::Node> objects;
  // The objects without the directory's patches: where the two differ is
  // the user's configuration. The same as `objects` when there are none.
  std::vector<yaml::Node> unpatched;
  std::vector<DirectoryPatch> patches;
};

// The names of a bootstrap directory's files.
inline constexpr std::string_view kComponentsFile = "gotk-components.yaml";
inline constexpr std::string_view kSyncFile = "gotk-sync.yaml";

// Reads a bootstrap directory: with a kustomization file, what it builds
// (kustomize::build) of gotk-components.yaml and gotk-sync.yaml (its other
// resources stay in the repository) and its patches (`patches`, `patchesStrategicMerge`,
// `patchesJson6902`, inline or in the files they name); without one,
// gotk-components.yaml and gotk-sync.yaml. Throws fluxop::Error naming the
// directory or file when there is no gotk-components.yaml or it does not
// build.
Installation read_directory(const std::string& dir, const FileSystem& files,
                            yaml::ParseCache* parse_cache);

}  // namespace fluxop::adopt
