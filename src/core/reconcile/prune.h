// What a prune takes (README "What a prune takes"): the objects an instance
// no longer renders are deleted, never with the user's data behind them.
//  - A CRD goes only when no custom resource of it remains: deleting it
//    deletes them all, and a controller still running would act on each
//    (helm-controller uninstalls the release of a HelmRelease being
//    deleted). One that still has resources is kept and said, until the
//    user says otherwise (--prune-crds): its resources are then released
//    first (a Flux one suspended, every one's finalizers removed), so that
//    no controller acts on them, and go with it.
//  - A Flux object the instance generated (the sync's source and
//    Kustomization) goes without its effects: suspended and its finalizers
//    removed first, as `delete` removes them, so that kustomize-controller
//    does not garbage-collect what it applied: the cluster's workloads.
//  - Anything else goes as it is; what is not the instance's (unlabelled,
//    or annotated `fluxcd.controlplane.io/prune: disabled`) stays.
// diff, check and apply decide from the same plan.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/kube/cluster.h"
#include "core/ssa/change_set.h"
#include "core/ssa/engine.h"

namespace fluxop::reconcile {

// Objects of one kind in one namespace ("" for cluster-scoped ones).
struct ObjectCount {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::size_t count = 0;

  friend bool operator==(const ObjectCount&, const ObjectCount&) = default;
};

enum class PruneWay {
  plain,           // deleted as it is
  released,        // a Flux object: suspended and its finalizers removed, then deleted
  with_resources,  // a CRD, --prune-crds: its resources released, then it is deleted
  held,            // a CRD kept: resources of it remain
  not_ours,        // kept: not labelled the instance's, or annotated prune: disabled
  gone,            // not there any more
};

struct PrunePlan {
  kube::ObjectKey key;
  PruneWay way = PruneWay::plain;
  // A CRD's resources (they hold it, or go with it); the objects a
  // Kustomization applied (they stay).
  std::vector<ObjectCount> dependents;
};

struct PruneOptions {
  // Delete a CRD whose resources remain, with them (--prune-crds).
  bool prune_crds = false;
};

// Counts of the objects, by kind and namespace, in that order.
std::vector<ObjectCount> count_objects(const std::vector<kube::ObjectKey>& keys);

// Whether the object is a CustomResourceDefinition.
bool is_crd(const kube::ObjectKey& key);

// The plan of each stale object (`stale` in apply order; the plans in
// reverse, workloads before their CRDs), from their live state, each CRD's
// resources (one LIST per kind, sent together) and each Kustomization's
// inventory.
std::vector<PrunePlan> plan_prunes(kube::Cluster& cluster, ssa::Engine& engine,
                                   const std::vector<kube::ObjectKey>& stale,
                                   const ssa::Owner& owner, const PruneOptions& options);

// Carries the plans out: Deleted for what was deleted, Skipped for what is
// kept; `before_request` before each request (it throws to stop).
std::vector<ssa::Change> carry_out(kube::Cluster& cluster, const std::vector<PrunePlan>& plans,
                                   const std::function<void()>& before_request,
                                   const std::function<void(const ssa::Change&)>& on_change);

// The plans' CRDs kept, each said in one sentence: "CustomResourceDefinition/
// helmreleases.helm.toolkit.fluxcd.io kept: 3 HelmRelease remain (apps: 2,
// team-b: 1); apply --prune-crds deletes them with it".
std::vector<std::string> kept_messages(const std::vector<PrunePlan>& plans);

// What `diff` prints of a plan ("prune <object>", with what it takes or
// leaves); empty for what is not pruned and not worth a word.
std::string prune_text(const PrunePlan& plan);

// `diff -o json`'s entry of a plan: the object, "action" (delete or keep),
// and "takes" (what goes with it) and "keeps" (what stays, or holds it):
// [{"apiVersion", "kind", "namespace", "count"}]; null for what is not
// pruned and not worth a word.
nlohmann::json prune_json(const PrunePlan& plan);

// The objects of `kinds` (each in its namespace, every namespace when it
// names none) labelled as `instance`'s that are being deleted,
// each "<object> (<what holds it>)": a CRD pruned and held Terminating by
// its resources' finalizers. One LIST per kind, sent together.
std::vector<std::string> terminating_objects(kube::Cluster& cluster,
                                             const kube::ObjectKey& instance,
                                             const std::vector<kube::ObjectKey>& kinds);

// The first names of a list and how many more there are: "a, b, c and 2
// more".
std::string some_of(const std::vector<std::string>& names);

// "3 HelmRelease (apps: 2, team-b: 1)", "5 objects (Deployment in apps: 2,
// ...)": the counts, by kind, each by namespace.
std::string counts_text(const std::vector<ObjectCount>& counts);

}  // namespace fluxop::reconcile
