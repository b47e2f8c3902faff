#include "core/reconcile/prune.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/reconcile/instance_object.h"
#include "core/reconcile/inventory.h"
#include "core/reconcile/uninstall.h"
#include "core/ssa/diagnosis.h"
#include "core/ssa/health.h"

namespace fluxop::reconcile {

using nlohmann::json;

namespace {

// The kind of a CRD's resources, in the version to list them by (its
// storage version when served, else the first served); nullopt when it
// serves none.
std::optional<kube::ObjectKey> resource_kind(const json& crd) {
  const json& spec = crd.value("spec", json::object());
  if (!spec.is_object()) return std::nullopt;
  std::string group = spec.value("group", "");
  std::string kind = spec.value("names", json::object()).value("kind", "");
  std::string version;
  for (const json& entry : spec.value("versions", json::array())) {
    if (!entry.is_object() || !entry.value("served", false)) continue;
    if (version.empty() || entry.value("storage", false)) version = entry.value("name", "");
  }
  if (version.empty() || kind.empty()) return std::nullopt;
  return kube::ObjectKey{group, version, kind, "", ""};
}

// The merge patch that releases an object before its deletion: a Flux
// object suspended (its controller then deletes it without acting on what
// it made), and every finalizer removed, so that it goes at once, whoever
// would have finalized it.
kube::ObjectPatch release_patch(const kube::ObjectKey& key) {
  json patch = {{"metadata", {{"finalizers", nullptr}}}};
  if (kube::is_flux_group(key.group)) patch["spec"] = {{"suspend", true}};
  return {key, kube::ObjectPatch::Type::Merge, std::move(patch)};
}

// Releases the objects; those gone meanwhile need nothing.
void release(kube::Cluster& cluster, const std::vector<kube::ObjectKey>& keys,
             const std::function<void()>& before_request) {
  if (keys.empty()) return;
  std::vector<kube::ObjectPatch> patches;
  for (const kube::ObjectKey& key : keys) patches.push_back(release_patch(key));
  if (before_request) before_request();
  for (kube::WriteResult& result : cluster.patch_all(patches)) {
    if (!result.error) continue;
    try {
      std::rethrow_exception(result.error);
    } catch (const kube::ApiError& error) {
      if (error.reason() != "NotFound") throw;
    }
  }
}

json counts_json(const std::vector<ObjectCount>& counts) {
  json out = json::array();
  for (const ObjectCount& one : counts)
    out.push_back({{"apiVersion", one.api_version},
                   {"kind", one.kind},
                   {"namespace", one.ns},
                   {"count", one.count}});
  return out;
}

std::size_t total(const std::vector<ObjectCount>& counts) {
  std::size_t sum = 0;
  for (const ObjectCount& one : counts) sum += one.count;
  return sum;
}

}  // namespace

std::vector<ObjectCount> count_objects(const std::vector<kube::ObjectKey>& keys) {
  std::map<std::tuple<std::string, std::string, std::string>, ObjectCount> counts;
  for (const kube::ObjectKey& key : keys) {
    ObjectCount& one = counts[{key.kind, key.group, key.ns}];
    one = {kube::api_version(key), key.kind, key.ns, one.count + 1};
  }
  std::vector<ObjectCount> out;
  for (auto& [by, one] : counts) out.push_back(std::move(one));
  return out;
}

bool is_crd(const kube::ObjectKey& key) {
  return key.group == "apiextensions.k8s.io" && key.kind == "CustomResourceDefinition";
}

std::vector<PrunePlan> plan_prunes(kube::Cluster& cluster, ssa::Engine& engine,
                                   const std::vector<kube::ObjectKey>& stale,
                                   const ssa::Owner& owner, const PruneOptions& options) {
  std::vector<PrunePlan> plans;
  std::vector<kube::ListQuery> queries;  // the resources of each CRD to delete
  std::vector<std::size_t> query_of;     // the plan of each query
  for (ssa::PlannedPrune& planned : engine.plan_prune(stale, owner)) {
    PrunePlan& plan = plans.emplace_back(PrunePlan{planned.key, PruneWay::plain, {}});
    if (planned.action == ssa::PruneAction::Gone) {
      plan.way = PruneWay::gone;
    } else if (planned.action == ssa::PruneAction::Keep) {
      plan.way = PruneWay::not_ours;
    } else if (is_crd(planned.key)) {
      if (std::optional<kube::ObjectKey> kind = resource_kind(planned.live)) {
        queries.push_back({*kind, {}, ""});
        query_of.push_back(plans.size() - 1);
      }
    } else if (kube::is_flux_group(planned.key.group)) {
      plan.way = PruneWay::released;
      // What a Kustomization applied: its inventory, as the instance's.
      if (planned.key.kind == "Kustomization")
        plan.dependents = count_objects(read_inventory(
            planned.live.value("status", json::object()).value("inventory", json())));
    }
  }
  if (queries.empty()) return plans;
  // What this prune deletes itself (the sync's Kustomization dropped with
  // kustomize-controller) is no resource its CRD keeps.
  auto deleted_here = [&plans](const kube::ObjectKey& key) {
    return std::any_of(plans.begin(), plans.end(), [id = inventory_id(key)](const PrunePlan& plan) {
      return (plan.way == PruneWay::plain || plan.way == PruneWay::released) &&
             inventory_id(plan.key) == id;
    });
  };
  // Each CRD defines its own kind: its resources are those of that kind.
  std::vector<std::vector<kube::ObjectKey>> resources(queries.size());
  for (kube::ObjectKey& key : list_keys(cluster, queries)) {
    if (deleted_here(key)) continue;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      if (queries[q].kind.group == key.group && queries[q].kind.kind == key.kind) {
        resources[q].push_back(std::move(key));
        break;
      }
    }
  }
  for (std::size_t q = 0; q < queries.size(); ++q) {
    if (resources[q].empty()) continue;
    PrunePlan& plan = plans[query_of[q]];
    plan.way = options.prune_crds ? PruneWay::with_resources : PruneWay::held;
    plan.dependents = count_objects(resources[q]);
  }
  return plans;
}

std::vector<ssa::Change> carry_out(kube::Cluster& cluster, const std::vector<PrunePlan>& plans,
                                   const std::function<void()>& before_request,
                                   const std::function<void(const ssa::Change&)>& on_change) {
  std::vector<ssa::Change> changes;
  auto report = [&](const kube::ObjectKey& key, ssa::Action action) {
    changes.push_back({key, action});
    if (on_change) on_change(changes.back());
  };
  for (const PrunePlan& plan : plans) {
    switch (plan.way) {
      case PruneWay::gone:
        continue;
      case PruneWay::held:
      case PruneWay::not_ours:
        report(plan.key, ssa::Action::Skipped);
        continue;
      case PruneWay::released:
        release(cluster, {plan.key}, before_request);
        break;
      case PruneWay::with_resources: {
        // Those there now, in every namespace, not those counted: one made
        // since goes too.
        std::vector<kube::ListQuery> kinds;
        for (const ObjectCount& counted : plan.dependents) {
          std::size_t slash = counted.api_version.find('/');
          kube::ObjectKey kind{counted.api_version.substr(0, slash),
                               counted.api_version.substr(slash + 1), counted.kind, "", ""};
          if (kinds.empty() || kinds.back().kind != kind) kinds.push_back({kind, {}, ""});
        }
        if (before_request) before_request();
        std::vector<kube::ObjectKey> resources = list_keys(cluster, kinds);
        release(cluster, resources, before_request);
        break;
      }
      case PruneWay::plain:
        break;
    }
    if (before_request) before_request();
    if (cluster.remove(plan.key)) report(plan.key, ssa::Action::Deleted);
  }
  return changes;
}

std::vector<std::string> terminating_objects(kube::Cluster& cluster,
                                             const kube::ObjectKey& instance,
                                             const std::vector<kube::ObjectKey>& kinds) {
  std::vector<kube::ListQuery> queries;
  ssa::Owner owner = owner_labels(instance);
  for (kube::ObjectKey kind : kinds) {
    kind.name.clear();  // in its namespace, where one is given
    if (std::none_of(queries.begin(), queries.end(),
                     [&](const kube::ListQuery& query) { return query.kind == kind; }))
      queries.push_back({std::move(kind), owner, ""});
  }
  std::vector<std::string> found;
  cluster.list_each(queries, [&](std::size_t query, json&& object) {
    if (!ssa::is_terminating(object)) return;
    kube::ObjectKey key = kube::object_key(object);
    key.group = queries[query].kind.group;
    key.kind = queries[query].kind.kind;
    found.push_back(display_name(key) + " (" + ssa::held_by(object) + ")");
  });
  return found;
}

std::string some_of(const std::vector<std::string>& names) {
  constexpr std::size_t kNamed = 3;
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < kNamed; ++i)
    text += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kNamed) text += " and " + std::to_string(names.size() - kNamed) + " more";
  return text;
}

std::string counts_text(const std::vector<ObjectCount>& counts) {
  // By kind, in the order given (sorted by kind, then namespace).
  std::string text;
  for (std::size_t i = 0; i < counts.size();) {
    std::size_t end = i;
    std::size_t sum = 0;
    std::string where;
    while (end < counts.size() && counts[end].kind == counts[i].kind &&
           counts[end].api_version == counts[i].api_version) {
      sum += counts[end].count;
      where += std::string(where.empty() ? "" : ", ") +
               (counts[end].ns.empty() ? "cluster-wide" : counts[end].ns) + ": " +
               std::to_string(counts[end].count);
      ++end;
    }
    text += std::string(text.empty() ? "" : ", ") + std::to_string(sum) + " " + counts[i].kind +
            " (" + where + ")";
    i = end;
  }
  return text;
}

std::vector<std::string> kept_messages(const std::vector<PrunePlan>& plans) {
  std::vector<std::string> messages;
  for (const PrunePlan& plan : plans) {
    if (plan.way != PruneWay::held) continue;
    messages.push_back(display_name(plan.key) + " kept: " + counts_text(plan.dependents) +
                       (total(plan.dependents) == 1 ? " remains" : " remain") +
                       "; apply --prune-crds deletes them with it");
  }
  return messages;
}

std::string prune_text(const PrunePlan& plan) {
  std::string name = display_name(plan.key);
  switch (plan.way) {
    case PruneWay::plain:
      return "prune " + name + "\n";
    case PruneWay::released:
      return "prune " + name + " without its effects (suspended, its finalizers removed)" +
             (plan.dependents.empty()
                  ? ""
                  : ": what it applied stays, " + counts_text(plan.dependents)) +
             "\n";
    case PruneWay::with_resources:
      return "prune " + name +
             " with its custom resources (--prune-crds): " + counts_text(plan.dependents) + "\n";
    case PruneWay::held:
      return "keep " + name + ": " + counts_text(plan.dependents) +
             (total(plan.dependents) == 1 ? " remains" : " remain") +
             " (--prune-crds deletes them with it)\n";
    case PruneWay::not_ours:
    case PruneWay::gone:
      break;
  }
  return "";
}

json prune_json(const PrunePlan& plan) {
  if (plan.way == PruneWay::not_ours || plan.way == PruneWay::gone) return nullptr;
  json entry = ssa::object_json(plan.key);
  entry["action"] = plan.way == PruneWay::held ? "keep" : "delete";
  // What goes with it, or what stays (or holds it).
  bool taken = plan.way == PruneWay::with_resources;
  entry["takes"] = counts_json(taken ? plan.dependents : std::vector<ObjectCount>{});
  entry["keeps"] = counts_json(taken ? std::vector<ObjectCount>{} : plan.dependents);
  entry["fields"] = json::array();
  return entry;
}

}  // namespace fluxop::reconcile
