// Taking over objects from other tools (flux install or bootstrap, kubectl,
// Helm) and from hand edits: their bookkeeping annotations and labels are
// dropped, and the fields their managers own pass to the engine's manager,
// so that its next apply removes those it does not apply (an env var added
// by `kubectl edit`, a spec field of the instance patched by hand, what an
// object whose managed fields were stripped had); but not a Namespace's,
// which others share (their labels stay). Only metadata changes
// here: no Pod restarts. `kubectl rollout restart` is left alone: taking its
// annotation back would restart the Pods again; so are Flux's reconcile
// requests (`flux reconcile`'s reconcile.fluxcd.io/requestedAt), which stay
// their writer's: a request, not configuration.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace fluxop::ssa {

// A JSON patch (RFC 6902) of `live` that hands the other tools' fields to
// `manager` and removes their traces, guarded by a test of each managed
// fields entry it edits (not of the resourceVersion, which status writes
// move); null when there is nothing to take over.
nlohmann::json takeover_patch(const nlohmann::json& live, std::string_view manager);

// The tool whose traces `live` carries, as a take-over would remove them:
// "Helm" (its annotations, app.kubernetes.io/managed-by=Helm), "flux
// bootstrap" (kustomize-controller's labels), "kubectl" (the last-applied
// annotation, a kubectl manager), "flux" (`flux install`'s manager); ""
// when none does.
std::string foreign_tool(const nlohmann::json& live);
// The fields (fieldsV1) `manager` owns once it has taken `live` over.
nlohmann::json fields_after_takeover(const nlohmann::json& live, std::string_view manager);

}  // namespace fluxop::ssa
