#include "core/reconcile/apply.h"

#include <algorithm>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/file.h"
#include "core/instance/duration.h"
#include "core/reconcile/health.h"
#include "core/reconcile/lease_lock.h"
#include "core/reconcile/migrate.h"
#include "core/reconcile/status.h"
#include "core/reconcile/takeover.h"
#include "core/share.h"
#include "core/yaml/json.h"
#include "core/yaml/parse.h"

namespace fluxop::reconcile {

using nlohmann::json;

namespace {

constexpr std::chrono::minutes kDefaultTimeout{5};
constexpr std::chrono::milliseconds kPollInterval{500};
constexpr std::string_view kInstanceGroup = "fluxcd.controlplane.io";

std::string now_rfc3339() { return utc_rfc3339(std::time(nullptr)); }

std::string resource_version(const json& object) {
  return object.value("metadata", json::object()).value("resourceVersion", "");
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The reconcileTimeout annotation, else 5m.
std::chrono::seconds instance_timeout(const json& instance) {
  json::json_pointer path("/metadata/annotations/fluxcd.controlplane.io~1reconcileTimeout");
  if (instance.contains(path) && instance.at(path).is_string()) {
    if (auto duration = instance::parse_go_duration(instance.at(path).get<std::string>()))
      return std::chrono::duration_cast<std::chrono::seconds>(*duration);
  }
  return kDefaultTimeout;
}

bool is_stage_one(const json& object) {
  std::string kind = object.value("kind", "");
  return kind == "CustomResourceDefinition" || kind == "Namespace";
}

// One reconciliation: the state the steps share.
class Reconciliation {
 public:
  Reconciliation(Cluster& cluster, const json& instance, const render::Rendered& rendered,
                 const ApplyOptions& options)
      : cluster_(cluster),
        instance_(instance),
        rendered_(rendered),
        options_(options),
        objects_(rendered_json(rendered)),
        ref_(object_ref(instance)),
        migrate_resources_(instance.value("spec", json::object()).value("migrateResources", true)),
        started_(std::chrono::steady_clock::now()) {}

  ApplyResult run();

 private:
  void check_interrupted() const {
    if (options_.interrupted && options_.interrupted()) throw Error("interrupted");
  }
  void progress(const std::string& line) const {
    if (options_.on_progress) options_.on_progress(line);
  }
  void report(const Change& change) {
    result_.changes.push_back(change);
    if (options_.on_change) options_.on_change(change);
  }
  std::chrono::steady_clock::time_point deadline() const {
    return started_ + options_.timeout.value_or(instance_timeout(instance_));
  }

  void ensure_namespace();
  void ensure_instance_crd();
  void apply_instance_object();
  void write_status(const std::function<void(json&)>& edit);
  Change apply_object(const json& object);
  void apply_stage(const std::vector<json>& objects);
  void wait_ready(const std::vector<json>& objects, const std::string& what);
  void prune(const std::vector<ObjectRef>& stale);
  void fail(std::string_view reason, const std::string& message);

  Cluster& cluster_;
  const json& instance_;
  const render::Rendered& rendered_;
  const ApplyOptions& options_;
  std::vector<json> objects_;
  ObjectRef ref_;
  bool migrate_resources_;
  std::chrono::steady_clock::time_point started_;
  std::optional<LeaseLock> lock_;
  json status_ = json::object();              // as last written
  std::set<std::string> missing_namespaces_;  // in a dry run
  std::int64_t generation_ = 0;
  std::vector<ObjectRef> previous_inventory_;
  ApplyResult result_;
};

void Reconciliation::ensure_namespace() {
  ObjectRef ns{"", "v1", "Namespace", "", ref_.ns};
  if (cluster_.get(ns)) return;
  if (cluster_.dry_run()) missing_namespaces_.insert(ref_.ns);
  auto rendered = std::find_if(objects_.begin(), objects_.end(),
                               [&](const json& object) { return object_ref(object) == ns; });
  json object =
      rendered != objects_.end()
          ? *rendered
          : json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ref_.ns}}}};
  report(apply_object(object));
}

void Reconciliation::ensure_instance_crd() {
  json ours = fluxinstance_crd();
  ObjectRef ref = object_ref(ours);
  std::optional<json> live = cluster_.get(ref);
  if (live) {
    // Another CRD (the upstream operator's, richer) or a newer one of ours stays.
    json labels = live->value("metadata", json::object()).value("labels", json::object());
    std::string schema = live->value("metadata", json::object())
                             .value("annotations", json::object())
                             .value("fluxopctl.controlplane.io/schema-version", "");
    std::string ours_schema =
        ours["metadata"]["annotations"]["fluxopctl.controlplane.io/schema-version"];
    if (labels.value("app.kubernetes.io/managed-by", "") != "fluxopctl" ||
        std::atoi(schema.c_str()) > std::atoi(ours_schema.c_str())) {
      return;
    }
  }
  Change change = apply_object(ours);
  report(change);
  if (change.action == Action::Unchanged || cluster_.dry_run()) return;
  wait_ready({ours}, "the FluxInstance CRD");
  cluster_.refresh_kinds();
}

void Reconciliation::apply_instance_object() {
  json object = {{"apiVersion", instance_.value("apiVersion", "")},
                 {"kind", instance_.value("kind", "")},
                 {"metadata", {{"name", ref_.name}, {"namespace", ref_.ns}}},
                 {"spec", instance_.value("spec", json::object())}};
  for (const char* field : {"labels", "annotations"}) {
    if (instance_["metadata"].contains(field))
      object["metadata"][field] = instance_["metadata"][field];
  }
  std::optional<json> live = cluster_.has_kind(ref_) ? cluster_.get(ref_) : std::nullopt;
  if (live) {
    status_ = live->value("status", json::object());
    previous_inventory_ = read_inventory(status_.value("inventory", json()));
  }
  if (cluster_.dry_run() && !cluster_.has_kind(ref_)) {
    report({ref_, Action::Created});
    return;
  }
  json applied = cluster_.apply(object);
  generation_ = applied.value("metadata", json::object()).value("generation", std::int64_t{0});
  report({ref_, !live                                                  ? Action::Created
                : resource_version(*live) == resource_version(applied) ? Action::Unchanged
                                                                       : Action::Configured});
}

void Reconciliation::write_status(const std::function<void(json&)>& edit) {
  edit(status_);
  if (cluster_.dry_run()) return;
  cluster_.apply_status(ref_, status_);
}

Change Reconciliation::apply_object(const json& object) {
  check_interrupted();
  if (lock_) lock_->renew();
  ObjectRef ref = object_ref(object);
  // A server-side dry run cannot place an object whose kind or namespace
  // does not exist yet (a first install): it would be created.
  if (cluster_.dry_run() && (!cluster_.has_kind(ref) || missing_namespaces_.contains(ref.ns)))
    return {ref, Action::Created};
  std::optional<json> live = cluster_.get(ref);
  if (live && !cluster_.dry_run()) {
    if (json patch = takeover_patch(*live); !patch.is_null()) {
      live = cluster_.json_patch(ref, patch);
      progress(display_name(ref) + ": taken over from its previous managers");
    }
  }
  try {
    json applied = cluster_.apply(object);
    if (!live) return {ref, Action::Created};
    return {ref, resource_version(applied) == resource_version(*live) ? Action::Unchanged
                                                                      : Action::Configured};
  } catch (const Error& e) {
    if (!live || std::string_view(e.what()).find("field is immutable") == std::string_view::npos)
      throw;
    // An immutable field changed (e.g. a Deployment's selector): recreate.
    progress(display_name(ref) + ": immutable field changed, recreating");
    cluster_.remove(ref);
    auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!cluster_.dry_run() && cluster_.get(ref)) {
      if (std::chrono::steady_clock::now() > gone_by)
        throw Error(display_name(ref) + ": still terminating after 60s; cannot recreate it");
      std::this_thread::sleep_for(kPollInterval);
    }
    cluster_.apply(object);
    return {ref, Action::Replaced};
  }
}

void Reconciliation::apply_stage(const std::vector<json>& objects) {
  for (const json& object : objects) report(apply_object(object));
}

void Reconciliation::wait_ready(const std::vector<json>& objects, const std::string& what) {
  std::vector<ObjectRef> pending;
  for (const json& object : objects) {
    if (health_checked(object.value("kind", ""))) pending.push_back(object_ref(object));
  }
  if (pending.empty()) return;
  progress("waiting for " + what + " (" + std::to_string(pending.size()) + " objects)");
  std::map<std::string, std::string> reasons;
  while (!pending.empty()) {
    check_interrupted();
    if (lock_) lock_->renew();
    std::vector<ObjectRef> still;
    for (const ObjectRef& ref : pending) {
      std::optional<json> live = cluster_.get(ref);
      Health health = live ? object_health(*live) : Health{false, false, "not found"};
      if (health.ready) {
        if (ref.kind == "Deployment") progress(display_name(ref) + " " + health.message);
        continue;
      }
      if (health.failed) throw Error(display_name(ref) + ": " + health.message);
      reasons[display_name(ref)] = health.message;
      still.push_back(ref);
    }
    pending = std::move(still);
    if (pending.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline()) {
      std::string message = "timeout waiting for";
      for (const ObjectRef& ref : pending)
        message += " " + display_name(ref) + " (" + reasons[display_name(ref)] + ")";
      throw Error(message);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void Reconciliation::prune(const std::vector<ObjectRef>& stale) {
  // In reverse apply order: workloads go before their CRDs and namespaces.
  for (const ObjectRef& ref : std::vector<ObjectRef>(stale.rbegin(), stale.rend())) {
    check_interrupted();
    std::optional<json> live = cluster_.get(ref);
    if (!live) continue;
    const json& metadata = live->value("metadata", json::object());
    json labels = metadata.value("labels", json::object());
    json annotations = metadata.value("annotations", json::object());
    // Only what this instance installed, unless pruning is disabled for it.
    bool ours = labels.value("fluxcd.controlplane.io/name", "") == ref_.name &&
                labels.value("fluxcd.controlplane.io/namespace", "") == ref_.ns;
    if (!ours || lowercase(annotations.value("fluxcd.controlplane.io/prune", "")) == "disabled") {
      report({ref, Action::Skipped});
      continue;
    }
    if (cluster_.remove(ref)) report({ref, Action::Deleted});
  }
}

void Reconciliation::fail(std::string_view reason, const std::string& message) {
  // The apply that took the lease owns the status now: ours would overwrite
  // its conditions and inventory.
  if (cluster_.dry_run() || (lock_ && !lock_->held())) return;
  try {
    write_status([&](json& status) {
      std::string now = now_rfc3339();
      set_condition(status, {"Ready", "False", std::string(reason), message}, generation_, now);
      remove_condition(status, "Reconciling");
      record_history(
          status, {rendered_.revision.substr(rendered_.revision.find('@') + 1), std::string(reason),
                   rendered_.version, now, std::chrono::steady_clock::now() - started_});
    });
  } catch (const Error&) {
    // The cluster may be what failed; the error that ends the apply says it.
  }
}

ApplyResult Reconciliation::run() {
  ensure_namespace();
  if (!cluster_.dry_run()) {
    lock_.emplace(cluster_, ref_.ns, "fluxopctl-" + ref_.name);
    lock_->acquire(options_.lock_timeout);
  }
  ensure_instance_crd();
  apply_instance_object();

  std::vector<ObjectRef> current;
  for (const json& object : objects_) current.push_back(object_ref(object));
  std::vector<ObjectRef> stale = stale_objects(previous_inventory_, current);
  // Until the apply succeeds, the inventory holds the old objects too: an
  // apply killed half-way leaves nothing untracked.
  std::vector<ObjectRef> tracking = current;
  tracking.insert(tracking.end(), stale.begin(), stale.end());
  write_status([&](json& status) {
    std::string now = now_rfc3339();
    set_condition(status,
                  {"Reconciling", "True", std::string(kProgressing), "Reconciliation in progress"},
                  generation_, now);
    set_condition(status,
                  {"Ready", "Unknown", std::string(kProgressing), "Reconciliation in progress"},
                  generation_, now);
    status["lastAttemptedRevision"] = rendered_.revision;
    status["inventory"] = inventory_json(tracking);
  });

  std::string_view reason = kFailed;
  try {
    std::vector<json> first, rest;
    for (const json& object : objects_) (is_stage_one(object) ? first : rest).push_back(object);
    apply_stage(first);
    if (!cluster_.dry_run()) wait_ready(first, "CRDs to be established");
    cluster_.refresh_kinds();
    apply_stage(rest);
    if (migrate_resources_ && !cluster_.dry_run())
      migrate_resources(cluster_, first, [this](const std::string& line) { progress(line); });
    prune(stale);
    if (options_.wait && !cluster_.dry_run()) {
      reason = kHealthCheckFailed;
      wait_ready(rest, "the components to roll out");
    }
  } catch (const Error& e) {
    fail(reason, e.what());
    throw;
  }

  auto elapsed = std::chrono::steady_clock::now() - started_;
  result_.revision = rendered_.revision;
  result_.message =
      "Reconciliation finished in " +
      instance::format_go_duration(std::chrono::duration_cast<std::chrono::seconds>(elapsed));
  write_status([&](json& status) {
    std::string now = now_rfc3339();
    set_condition(status, {"Ready", "True", std::string(kSucceeded), result_.message}, generation_,
                  now);
    remove_condition(status, "Reconciling");
    remove_condition(status, "Stalled");
    status["observedGeneration"] = generation_;
    status["inventory"] = inventory_json(current);
    status["lastAppliedRevision"] = rendered_.revision;
    status["lastAttemptedRevision"] = rendered_.revision;
    status["components"] = components_status(objects_);
    record_history(status, {rendered_.revision.substr(rendered_.revision.find('@') + 1),
                            std::string(kSucceeded), rendered_.version, now, elapsed});
  });
  if (lock_) lock_->release();
  return result_;
}

}  // namespace

std::vector<json> rendered_json(const render::Rendered& rendered) {
  std::vector<json> objects;
  objects.reserve(rendered.objects.size());
  for (const yaml::Node& object : rendered.objects) objects.push_back(yaml::to_sorted_json(object));
  return objects;
}

json fluxinstance_crd() {
  std::vector<yaml::Node> documents =
      yaml::parse_documents(std::string(share_manifest("fluxinstance-crd.yaml")),
                            "share/manifests/fluxinstance-crd.yaml");
  return yaml::to_sorted_json(documents.at(0));
}

ApplyResult apply_instance(Cluster& cluster, const json& instance, const render::Rendered& rendered,
                           const ApplyOptions& options) {
  if (object_ref(instance).group != kInstanceGroup) throw Error("not a FluxInstance");
  return Reconciliation(cluster, instance, rendered, options).run();
}

}  // namespace fluxop::reconcile
