#include "core/reconcile/instance_diff.h"

#include "core/error.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/diff.h"
#include "core/reconcile/inventory.h"
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

// The object after a dry-run apply, or the rendered one when the server
// cannot tell (its kind or namespace does not exist yet).
json merged_object(Cluster& cluster, const json& object, const std::optional<json>& live) {
  ObjectRef ref = object_ref(object);
  if (!cluster.has_kind(ref)) return object;
  if (!live && !ref.ns.empty() && !cluster.get({"", "v1", "Namespace", "", ref.ns})) return object;
  return cluster.apply(object);
}

}  // namespace

InstanceDiff diff_instance(Cluster& cluster, const json& instance, const render::Rendered& rendered,
                           bool color) {
  if (!cluster.dry_run()) throw Error("diff needs a dry-run cluster");
  InstanceDiff result;
  std::vector<ObjectRef> current;
  for (const json& object : rendered_json(rendered)) {
    ObjectRef ref = object_ref(object);
    current.push_back(ref);
    std::optional<json> live = cluster.has_kind(ref) ? cluster.get(ref) : std::nullopt;
    json before = live ? comparable(*live) : json();
    json after = comparable(merged_object(cluster, object, live));
    mask_secrets(before, after);
    std::string name = display_name(ref);
    std::string text = unified_diff(as_yaml(before), as_yaml(after),
                                    live ? "live " + name : "/dev/null", "merged " + name, color);
    if (text.empty()) continue;
    ++result.changed;
    result.text += text;
  }

  ObjectRef instance_ref = object_ref(instance);
  std::optional<json> live_instance =
      cluster.has_kind(instance_ref) ? cluster.get(instance_ref) : std::nullopt;
  if (live_instance) {
    std::vector<ObjectRef> inventory =
        read_inventory(live_instance->value("status", json::object()).value("inventory", json()));
    for (const ObjectRef& ref : stale_objects(inventory, current)) {
      if (!cluster.get(ref)) continue;
      ++result.changed;
      result.text += "prune " + display_name(ref) + "\n";
    }
  }
  return result;
}

}  // namespace fluxop::reconcile
