// `fluxopctl adopt`: the FluxInstance that reproduces a `flux bootstrap` or
// `flux install` installation, and the proof that it does: the instance is
// rendered as the operator would install it and compared with the
// installation, object by object and field by field. What the operator
// always installs differently is summed up; every other difference is
// reproduced by a generated patch of .spec.kustomize.patches, and what no
// patch can reproduce is lost.
#pragma once

#include <string>
#include <vector>

#include "core/adopt/differences.h"
#include "core/adopt/installation.h"
#include "core/distribution/distribution.h"
#include "core/yaml/node.h"
#include "core/yaml/parse_cache.h"

namespace fluxop::adopt {

struct AdoptOptions {
  // Written as .spec.distribution.version instead of the exact version
  // installed (which the proof renders); must contain it. Empty: the exact
  // version.
  std::string version_range;
  yaml::ParseCache* parse_cache = nullptr;
};

struct Adoption {
  yaml::Node instance;              // the FluxInstance written
  std::string version;              // the exact version installed ("v2.9.4")
  std::size_t carried_patches = 0;  // the directory's patches, carried over
  // Of those, the patches carried without the namespace they named (the
  // operator patches its manifests before it sets their namespace).
  std::size_t patches_without_namespace = 0;
  std::size_t generated_patches = 0;  // patches written for the other differences
  // The render of the instance written, compared with the installation:
  // differences the operator always makes (`expected` set), and the others,
  // which no patch could reproduce: lost.
  Comparison proof;
  // What the generated patches reproduce, as the first render differed.
  std::vector<FieldDifference> reproduced;

  // The fields and objects of the user's that the instance does not
  // reproduce; adopt exits 1 when there are any.
  std::vector<const FieldDifference*> lost() const;
};

// Throws fluxop::Error "<origin>: ..." when the installation is not one
// Flux installation of a version `dist` has, and the render's errors.
Adoption adopt(const Installation& installation, const distribution::Distribution& dist,
               const AdoptOptions& options);

}  // namespace fluxop::adopt
