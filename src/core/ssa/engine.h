// The server-side-apply engine under apply and diff (fluxcd/pkg/ssa is the
// model): a plan of each object from a server-side dry run against the live
// object, applies that follow the plan (taking objects over from other
// managers, recreating those whose immutable fields change), staged apply
// (CRDs and Namespaces first, then the rest once the CRDs are established),
// health waits with kstatus rules, and pruning by ownership. It knows
// nothing of the FluxInstance: the policy on top decides what to apply,
// what it owns, and what to record.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/ssa/change_set.h"
#include "core/ssa/cluster_api.h"

namespace fluxop::ssa {

// What applying one object would do.
struct PlannedChange {
  ObjectKey key;
  Action action = Action::Unchanged;  // Created, Configured, Replaced or Unchanged
  nlohmann::json live;                // null when the object does not exist
  nlohmann::json merged;              // the server's dry run; the object itself when the
                                      // server cannot place it yet (its kind or namespace
                                      // is not there)
};

// The labels an object must carry for a prune to delete it.
using Owner = std::map<std::string, std::string>;

enum class PruneAction { Delete, Keep, Gone };

// Delete when the object carries every owner label and is not annotated
// `fluxcd.controlplane.io/prune: disabled`; Gone when it does not exist.
PruneAction prune_action(const std::optional<nlohmann::json>& live, const Owner& owner);

struct PlannedPrune {
  ObjectKey key;
  PruneAction action;
};

struct EngineHooks {
  // Before each request to the cluster: throws to stop (an interruption, a
  // lost lease).
  std::function<void()> before_request{};
  std::function<void(const std::string&)> on_progress{};
};

class Engine {
 public:
  explicit Engine(ClusterApi& cluster, EngineHooks hooks = {});

  PlannedChange plan(const nlohmann::json& object);
  // Stale objects in reverse order of `stale` (the apply order): workloads
  // before their CRDs and namespaces.
  std::vector<PlannedPrune> plan_prune(const std::vector<ObjectKey>& stale, const Owner& owner);

  // Applies the object as planned; a dry-run cluster changes nothing.
  Change apply(const nlohmann::json& object);
  // CRDs and Namespaces first; once the CRDs are established and discovery
  // refreshed, the rest. `on_change` sees each change as it happens.
  std::vector<Change> apply_staged(const std::vector<nlohmann::json>& objects,
                                   std::chrono::steady_clock::time_point deadline,
                                   const std::function<void(const Change&)>& on_change);
  // Until every object is ready (kstatus rules for the kinds that have
  // them), or throws when one fails or the deadline passes, naming them.
  void wait(const std::vector<nlohmann::json>& objects, const std::string& what,
            std::chrono::steady_clock::time_point deadline);
  // Deletes what plan_prune decides; a kept object is reported Skipped.
  std::vector<Change> prune(const std::vector<ObjectKey>& stale, const Owner& owner,
                            const std::function<void(const Change&)>& on_change);

 private:
  void before_request() const;
  void progress(const std::string& line) const;
  bool namespace_exists(const std::string& ns);
  Change recreate(const nlohmann::json& object);

  ClusterApi& cluster_;
  EngineHooks hooks_;
  std::map<std::string, bool> namespaces_;  // seen to exist or not, for dry runs
};

// Whether the engine applies the object in the first stage.
bool is_first_stage(const nlohmann::json& object);

}  // namespace fluxop::ssa
