#include "core/reconcile/instance_diff.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/inventory.h"
#include "core/reconcile/preflight.h"
#include "core/ssa/diagnosis.h"
#include "core/ssa/diff.h"
#include "core/ssa/engine.h"
#include "core/ssa/health.h"
#include "core/yaml/emit.h"
#include "core/yaml/json.h"

namespace fluxop::reconcile {

using nlohmann::json;

namespace {

// YAML as kubectl prints it; null (no object) as nothing.
std::string as_yaml(const json& object) {
  if (object.is_null()) return "";
  return yaml::emit(yaml::from_json(nlohmann::ordered_json::parse(object.dump())));
}

// The verbs of `diff -o json`: what will be done, where the change set's
// participles say what was.
std::string_view diff_action(ssa::Action action) {
  switch (action) {
    case ssa::Action::Created:
      return "create";
    case ssa::Action::Configured:
      return "update";
    case ssa::Action::Replaced:
      return "replace";
    case ssa::Action::Deleted:
      return "delete";
    case ssa::Action::Unchanged:
    case ssa::Action::Skipped:
    case ssa::Action::count:
      break;
  }
  return "unchanged";
}

}  // namespace

std::string diff_summary(const InstanceDiff& diff) {
  if (diff.changed == 0) return "";
  std::map<std::string_view, int> actions;
  std::vector<std::pair<std::string, std::string>> images;  // old, new; in the objects' order
  for (const ObjectDiff& object : diff.objects) {
    ++actions[diff_action(object.action)];
    for (const ssa::FieldChange& field : object.fields) {
      if (!field.path.ends_with("/image") || !field.before || !field.after ||
          !field.before->is_string() || !field.after->is_string())
        continue;
      std::pair<std::string, std::string> change{field.before->get<std::string>(),
                                                 field.after->get<std::string>()};
      if (std::find(images.begin(), images.end(), change) == images.end())
        images.push_back(std::move(change));
    }
  }
  std::string text = "Summary:";
  bool first = true;
  for (std::string_view action : {"create", "update", "replace", "delete", "unchanged"}) {
    auto count = actions.find(action);
    if (count == actions.end()) continue;
    text += std::string(first ? " " : ", ") + std::to_string(count->second) + " " +
            (action == "unchanged" ? "unchanged" : "to " + std::string(action));
    first = false;
  }
  text += "\n";
  for (const auto& [before, after] : images)
    text += "Image: " + printable(before) + " -> " + printable(after) + "\n";
  return text;
}

json diff_json(const InstanceDiff& diff) {
  json objects = json::array();
  for (const ObjectDiff& object : diff.objects) {
    if (object.prune) {
      objects.push_back(prune_json(*object.prune));
      continue;
    }
    json entry = ssa::object_json(object.key);
    entry["action"] = diff_action(object.action);
    json fields = json::array();
    for (const ssa::FieldChange& field : object.fields) {
      json change = {{"path", field.path}};
      if (field.before) change["before"] = *field.before;
      if (field.after) change["after"] = *field.after;
      fields.push_back(std::move(change));
    }
    entry["fields"] = std::move(fields);
    if (!object.terminating.empty()) entry["terminating"] = object.terminating;
    objects.push_back(std::move(entry));
  }
  return {{"changed", diff.changed}, {"objects", std::move(objects)}};
}

InstanceDiff diff_instance(kube::Cluster& cluster, const instance::FluxInstance& flux,
                           const render::Rendered& rendered, const PruneOptions& prune) {
  if (!cluster.dry_run()) throw Error("diff needs a dry-run cluster");
  kube::ObjectKey ref = instance_ref(flux.ns, flux.name);
  ssa::Engine engine(cluster, {}, owner_labels(ref));
  InstanceDiff result;
  // The instance is compared too: what the apply makes of it is the file.
  std::vector<json> objects = rendered_json(rendered);
  // What apply refuses, diff refuses with its reason, rather than plan it.
  if (std::optional<std::string> refused =
          another_instance(cluster.list(instance_ref("", ""), {}), ref))
    throw Error(flux.file + ": " + *refused);
  std::optional<json> live_instance = get_live_instance(cluster, ref);
  if (live_instance) {
    if (std::optional<std::string> refused =
            downgrade_refusal(live_instance->value("status", json::object()), rendered.version))
      throw Error(flux.file + ": .spec.distribution.version: " + *refused);
  }
  json instance = instance_object(flux);
  bool instance_unchanged =
      live_instance && instance_in_place(instance, *live_instance, cluster.field_manager());
  if (!instance_unchanged) objects.push_back(std::move(instance));
  std::vector<kube::ObjectKey> current;
  std::vector<std::optional<json>> live;  // of the render, to tell a lost inventory
  for (const ssa::PlannedChange& planned : engine.plan(objects)) {
    if (planned.key != ref) current.push_back(planned.key);
    if (!planned.live.is_null()) live.push_back(planned.live);
    ObjectDiff& object = result.objects.emplace_back(ObjectDiff{planned.key, planned.action, {}});
    std::string name = display_name(planned.key);
    if (!planned.live.is_null() && ssa::is_terminating(planned.live)) {
      // Unchanged or not, it is going: apply waits until it is gone.
      object.terminating = ssa::held_by(planned.live);
      ++result.changed;
      result.text += "terminating " + name + " (being deleted; " + object.terminating +
                     "): apply waits until it is gone, then applies it again\n";
    }
    if (planned.action == ssa::Action::Unchanged) continue;
    ++result.changed;
    json before = planned.live.is_null() ? json() : ssa::comparable(planned.live);
    json after = ssa::comparable(planned.merged);
    ssa::mask_secrets(before, after);
    if (!planned.live.is_null()) object.fields = ssa::field_changes(before, after);
    std::string text =
        ssa::unified_diff(as_yaml(before), as_yaml(after),
                          planned.live.is_null() ? "/dev/null" : "live " + name, "merged " + name);
    if (planned.action == ssa::Action::Replaced) {
      text = "replace " + name + " (an immutable field changes)\n" + text;
    } else if (text.empty()) {
      text = "take over " + name + " (field managers change, not the content)\n";
    }
    result.text += text;
  }
  if (instance_unchanged) result.objects.push_back({ref, ssa::Action::Unchanged, {}});

  if (live_instance) {
    std::vector<kube::ObjectKey> inventory =
        read_inventory(live_instance->value("status", json::object()).value("inventory", json()));
    // As apply: an inventory lost is found again by the objects' labels,
    // and one that lost an entry has it back when anything changes.
    if (inventory.empty() ? inventory_lost(live, owner_labels(ref))
                          : result.changed > 0 || !stale_objects(inventory, current).empty())
      inventory = with_labelled(std::move(inventory), labelled_objects(cluster, ref));
    for (PrunePlan& plan : plan_prunes(cluster, engine, stale_objects(inventory, current),
                                       owner_labels(ref), prune)) {
      std::string text = prune_text(plan);
      if (text.empty()) continue;
      result.text += text;
      bool deleted = plan.way != PruneWay::held;
      if (deleted) ++result.changed;
      kube::ObjectKey key = plan.key;
      result.objects.push_back(
          {key, deleted ? ssa::Action::Deleted : ssa::Action::Skipped, {}, "", std::move(plan)});
    }
  }
  return result;
}

}  // namespace fluxop::reconcile
