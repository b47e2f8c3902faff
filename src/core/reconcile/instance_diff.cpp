#include "core/reconcile/instance_diff.h"

#include "core/error.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/diff.h"
#include "core/reconcile/inventory.h"
#include "core/ssa/engine.h"
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

}  // namespace

InstanceDiff diff_instance(kube::Cluster& cluster, const instance::FluxInstance& flux,
                           const render::Rendered& rendered) {
  if (!cluster.dry_run()) throw Error("diff needs a dry-run cluster");
  kube::ObjectKey ref = instance_ref(flux.ns, flux.name);
  ssa::Engine engine(cluster, {}, owner_labels(ref));
  InstanceDiff result;
  // The instance is compared too: what the apply makes of it is the file.
  std::vector<json> objects = rendered_json(rendered);
  std::optional<json> live_instance = get_live_instance(cluster, ref);
  json instance = instance_object(flux);
  if (!live_instance || !instance_in_place(instance, *live_instance, cluster.field_manager())) {
    objects.push_back(std::move(instance));
  }
  std::vector<kube::ObjectKey> current;
  for (const ssa::PlannedChange& planned : engine.plan(objects)) {
    if (planned.key != ref) current.push_back(planned.key);
    if (planned.action == ssa::Action::Unchanged) continue;
    ++result.changed;
    json before = planned.live.is_null() ? json() : comparable(planned.live);
    json after = comparable(planned.merged);
    mask_secrets(before, after);
    std::string name = display_name(planned.key);
    std::string text =
        unified_diff(as_yaml(before), as_yaml(after),
                     planned.live.is_null() ? "/dev/null" : "live " + name, "merged " + name);
    if (planned.action == ssa::Action::Replaced) {
      text = "replace " + name + " (an immutable field changes)\n" + text;
    } else if (text.empty()) {
      text = "take over " + name + " (field managers change, not the content)\n";
    }
    result.text += text;
  }

  if (live_instance) {
    std::vector<kube::ObjectKey> inventory =
        read_inventory(live_instance->value("status", json::object()).value("inventory", json()));
    for (const ssa::PlannedPrune& prune :
         engine.plan_prune(stale_objects(inventory, current), owner_labels(ref))) {
      if (prune.action != ssa::PruneAction::Delete) continue;
      ++result.changed;
      result.text += "prune " + display_name(prune.key) + "\n";
    }
  }
  return result;
}

}  // namespace fluxop::reconcile
