// Which Flux version of a distribution serves given API versions of a CRD:
// an upgrade that skips minors can find its objects stored in a version the
// target's CRD no longer has, and an intermediate version must store them
// anew first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/distribution/distribution.h"

namespace fluxop::distribution {

// The newest version before `target` whose manifests define the CRD `name`
// serving every one of `api_versions`; nullopt when none does.
std::optional<Version> newest_serving(const Distribution& distribution, const Version& target,
                                      const std::string& name,
                                      const std::vector<std::string>& api_versions);

}  // namespace fluxop::distribution
