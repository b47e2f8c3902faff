// The server-side-apply engine under apply and diff (fluxcd/pkg/ssa is the
// model): live objects read with one LIST per kind, a plan of each object
// (from the live object where the field manager's fields show the apply
// would change nothing, else from a server-side dry run), applies sent
// together that follow the plan (taking objects over from other managers,
// recreating those whose immutable fields change), staged apply (CRDs and
// Namespaces first, then the rest once the CRDs are established), health
// waits with kstatus rules, and pruning by ownership. It knows nothing of
// the FluxInstance: the policy on top decides what to apply, what it owns,
// and what to record.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/kube/cluster.h"
#include "core/ssa/change_set.h"
#include "core/ssa/diagnosis.h"
#include "core/wait_status.h"

namespace fluxop::ssa {

using kube::Labels;
using kube::ObjectKey;
using kube::WriteResult;

// What applying one object would do.
struct PlannedChange {
  ObjectKey key;
  Action action = Action::Unchanged;  // Created, Configured, Replaced or Unchanged
  nlohmann::json live;                // null when the object does not exist
  nlohmann::json merged;              // the server's dry run; the object itself when the
                                      // server cannot place it yet (its kind or namespace
                                      // is not there); the live one when unchanged
};

// What applying one object did.
struct Applied {
  Change change;
  nlohmann::json object;  // as the server has it after: the live one when unchanged
};

// The labels an object must carry for a prune to delete it.
using Owner = Labels;

enum class PruneAction { Delete, Keep, Gone };

// Delete when the object carries every owner label and is not annotated
// `fluxcd.controlplane.io/prune: disabled`; Gone when it does not exist.
PruneAction prune_action(const std::optional<nlohmann::json>& live, const Owner& owner);

struct PlannedPrune {
  ObjectKey key;
  PruneAction action;
  nlohmann::json live;  // null when it is gone
};

struct EngineHooks {
  // Before each request (or requests sent together) to the cluster: throws
  // to stop (an interruption, a lost lease).
  std::function<void()> before_request{};
  std::function<void(const std::string&)> on_progress{};
  // Told at each poll of a wait what is pending and why; without it, a
  // pending Deployment's cause is a progress line when it changes.
  WaitStatus* wait_status = nullptr;
};

using Live = std::optional<nlohmann::json>;

class Engine {
 public:
  // `selector`: labels the objects carry once applied (an owner's), by
  // which their live state is listed; without, the labels all objects of a
  // kind carry.
  explicit Engine(kube::Cluster& cluster, EngineHooks hooks = {}, Labels selector = {});

  // The objects as they are live (nullopt where they do not exist): one
  // LIST per kind and namespace, selected by the labels, and a GET for one
  // the LIST does not show (not applied here yet, or its labels edited);
  // none in a namespace this engine created and applied nothing to yet.
  std::vector<Live> read_live(const std::vector<nlohmann::json>& objects);
  // Whether applying the object would change nothing, told from its live
  // state alone (false where only the server can tell).
  bool is_unchanged(const nlohmann::json& object, const Live& live) const;

  std::vector<PlannedChange> plan(const std::vector<nlohmann::json>& objects);
  std::vector<PlannedChange> plan(const std::vector<nlohmann::json>& objects,
                                  const std::vector<Live>& live);
  // Stale objects in reverse order of `stale` (the apply order): workloads
  // before their CRDs and namespaces.
  std::vector<PlannedPrune> plan_prune(const std::vector<ObjectKey>& stale, const Owner& owner);

  // Applies the objects, `live` as read_live gives them: those that may
  // change are sent together; a dry-run cluster is only planned. `on_change`
  // sees each change; a refusal is thrown once the others are reported.
  std::vector<Applied> apply(const std::vector<nlohmann::json>& objects,
                             const std::vector<Live>& live,
                             const std::function<void(const Change&)>& on_change);
  // CRDs and Namespaces first, then the rest, once the CRDs of the rest's
  // custom resources are established and discovery knows their kinds.
  std::vector<Applied> apply_staged(const std::vector<nlohmann::json>& objects,
                                    const std::vector<Live>& live,
                                    std::chrono::steady_clock::time_point deadline,
                                    const std::function<void(const Change&)>& on_change);
  // Until every object is ready (kstatus rules for the kinds that have
  // them), or throws when one fails or the deadline passes, naming them.
  // A CRD not established within seconds is written again, changing
  // nothing, so that the API server queues it to be established.
  // A Deployment pending for a while is diagnosed every few seconds (its
  // pods, ReplicaSets, claims and their events): a new cause is reported as
  // progress and goes into the error, and one that never resolves by itself
  // fails the wait at once.
  void wait(const std::vector<nlohmann::json>& objects, const std::string& what,
            std::chrono::steady_clock::time_point deadline);
  // Until every CRD is established and discovery serves its kind in each
  // of its served versions: the API server marks a CRD Established before
  // its discovery documents list it, and a kind discovery does not list
  // cannot be mapped to a path. Throws when the deadline passes, naming
  // what is not served yet.
  void wait_served(const std::vector<nlohmann::json>& crds, const std::string& what,
                   std::chrono::steady_clock::time_point deadline);
  // Until none of the objects exists any more, or throws when the deadline
  // passes, naming those left with what holds them (finalizers, conditions).
  // `still`, when given, sees the objects left after each poll (to release
  // what a controller held again).
  using StillThere = std::function<void(const std::vector<nlohmann::json>&)>;
  void wait_deleted(const std::vector<ObjectKey>& keys, const std::string& what,
                    std::chrono::steady_clock::time_point deadline, const StillThere& still = {});
  // The same for whatever the queries list (a Deployment's pods by its
  // selector): until every list is empty.
  void wait_none(const std::vector<kube::ListQuery>& queries, const std::string& what,
                 std::chrono::steady_clock::time_point deadline, const StillThere& still = {});
  // Deletes what plan_prune decides; a kept object is reported Skipped.
  std::vector<Change> prune(const std::vector<ObjectKey>& stale, const Owner& owner,
                            const std::function<void(const Change&)>& on_change);

 private:
  void before_request() const;
  void progress(const std::string& line) const;
  void waiting(const std::string& what, const std::string& pending, const std::string& cause) const;
  bool namespace_exists(const std::string& ns);
  Applied recreate(const nlohmann::json& object);
  // Writes a CRD that is not established so that the API server queues it
  // again (a lost queue), changing nothing of it.
  void requeue(const nlohmann::json& crd);
  bool take_over(const ObjectKey& key, nlohmann::json live);
  // Why each Deployment (live) is pending; nothing is said of those whose
  // objects the caller may not read.
  std::vector<Diagnosis> diagnose_pending(const std::vector<nlohmann::json>& deployments);

  kube::Cluster& cluster_;
  EngineHooks hooks_;
  Labels selector_;
  std::map<std::string, bool> namespaces_;  // seen to exist or not, for dry runs
  std::set<std::string> empty_namespaces_;  // created here, nothing applied to them yet
  bool diagnosis_refused_ = false;          // the server forbade a read a diagnosis needs
};

// Whether the engine applies the object in the first stage.
bool is_first_stage(const nlohmann::json& object);

}  // namespace fluxop::ssa
