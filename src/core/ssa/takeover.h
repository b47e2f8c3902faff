// Taking over objects installed by other tools (flux install or bootstrap,
// kubectl, Helm): their bookkeeping annotations and labels are dropped, and
// their field managers' entries removed so that fluxopctl's field manager
// alone owns what it applies. Only metadata changes: no Pod restarts.
#pragma once

#include <nlohmann/json.hpp>

namespace fluxop::ssa {

// A JSON patch (RFC 6902) that removes the other tools' traces from `live`,
// guarded by a test of its resourceVersion; null when there is nothing to
// remove.
nlohmann::json takeover_patch(const nlohmann::json& live);

}  // namespace fluxop::ssa
