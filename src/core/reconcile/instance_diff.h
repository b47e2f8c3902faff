// `fluxopctl diff`: what apply would change, object by object: the engine's
// plan (a server-side dry run of every rendered object against the live
// one) and the prunes it would make, printed. Apply follows the same plan,
// so the two cannot disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/instance/instance.h"
#include "core/kube/cluster.h"
#include "core/reconcile/prune.h"
#include "core/render/render.h"
#include "core/ssa/change_set.h"
#include "core/ssa/diff.h"

namespace fluxop::reconcile {

// What the apply would do to one object: Created, Configured, Replaced,
// Deleted (pruned) or Unchanged; for Configured and Replaced, the fields
// that change (Secrets' values masked, as in the text). A Configured object
// without fields only changes field managers (a take-over).
struct ObjectDiff {
  kube::ObjectKey key;
  ssa::Action action;
  std::vector<ssa::FieldChange> fields;
  // Why the live object is being deleted (it is not healthy, whatever the
  // apply changes); empty when it is not.
  std::string terminating{};
  // A prune's plan: what it takes with it, or leaves (prune.h).
  std::optional<PrunePlan> prune{};
};

struct InstanceDiff {
  std::string text;                 // unified diffs, then the objects to create and to prune
  std::vector<ObjectDiff> objects;  // in the apply's order, then the prunes
  int changed = 0;                  // objects that would change, be created or pruned
};

// `diff -o json`: {"changed": N, "objects": [{"object", "apiVersion",
// "action": create|update|replace|delete|keep|unchanged, "fields": [{"path",
// "before", "after"}]}]}, a prune's "takes" and "keeps", "terminating" for
// an object being deleted, as README's "diff -o json" documents it.
nlohmann::json diff_json(const InstanceDiff& diff);

// What a large diff opens with: the objects per action ("2 to update, 1 to
// create, 80 unchanged") and each image that changes, old -> new, once;
// empty when nothing would change. Lines for the terminal: what the
// cluster sent is escaped.
std::string diff_summary(const InstanceDiff& diff);

// `cluster` must be in dry-run mode. Throws fluxop::Error where apply
// would refuse before writing (a downgrade), with apply's words.
InstanceDiff diff_instance(kube::Cluster& cluster, const instance::FluxInstance& flux,
                           const render::Rendered& rendered, const PruneOptions& prune = {});

}  // namespace fluxop::reconcile
