// Picks the Flux version a FluxInstance asks for, as the operator does: the
// highest version of the distribution's flux/ directory that matches
// .spec.distribution.version (an exact version or a constraint).
#pragma once

#include <string_view>
#include <vector>

#include "core/distribution/constraint.h"
#include "core/distribution/distribution.h"

namespace fluxop::distribution {

// Among equal versions, the first directory name in byte order wins. Errors
// (invalid constraint, no match) throw fluxop::Error starting with `field`;
// the no-match one lists the newest version of each minor on offer.
Version resolve_version(const Distribution& distribution, std::string_view constraint,
                        std::string_view field = ".spec.distribution.version");

// Every version of the distribution that matches `constraint`, ascending
// (`fluxopctl images --version`); errors as resolve_version's.
std::vector<Version> matching_versions(const Distribution& distribution,
                                       std::string_view constraint,
                                       std::string_view field = "--version");

}  // namespace fluxop::distribution
