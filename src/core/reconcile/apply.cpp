#include "core/reconcile/apply.h"

#include <algorithm>
#include <exception>
#include <iterator>
#include <set>
#include <utility>

#include "core/distribution/version.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/file.h"
#include "core/kube/answer.h"
#include "core/reconcile/instance_requests.h"
#include "core/reconcile/instance_run.h"
#include "core/reconcile/lease_lock.h"
#include "core/reconcile/migrate.h"
#include "core/reconcile/preflight.h"
#include "core/reconcile/prune.h"
#include "core/reconcile/status.h"
#include "core/reconcile/uninstall.h"
#include "core/rfc3339.h"
#include "core/ssa/diagnosis.h"
#include "core/ssa/engine.h"
#include "core/ssa/health.h"
#include "core/yaml/json.h"

namespace fluxop::reconcile {

using nlohmann::json;

namespace {

using ssa::Action;
using ssa::Change;

constexpr std::chrono::minutes kDefaultTimeout{5};
constexpr std::string_view kTimeoutAnnotation = "fluxcd.controlplane.io/reconcileTimeout";

std::string annotation(const instance::StringMap& annotations, std::string_view name) {
  auto found = annotations.find(std::string(name));
  return found == annotations.end() ? "" : found->second;
}

// A forceAt annotation not handled yet: every custom resource is migrated.
bool force_requested(const instance::StringMap& annotations, const json& status) {
  std::string force = annotation(annotations, kForceAtAnnotation);
  return !force.empty() && force != status.value("lastHandledForceAt", "");
}

// The applied objects being deleted (a claim pruned a moment ago, going as
// soon as the pods that mount it are gone; a CRD pruned before, held
// Terminating by its resources' finalizers). Applied or unchanged, such an
// object is going: the installation is not healthy until it is gone and
// applied again.
std::vector<std::size_t> terminating_objects(const std::vector<ssa::Applied>& applied) {
  std::vector<std::size_t> going;
  for (std::size_t i = 0; i < applied.size(); ++i) {
    if (ssa::is_terminating(applied[i].object)) going.push_back(i);
  }
  return going;
}

// One reconciliation: the state the steps share.
class InstanceApply {
 public:
  InstanceApply(kube::Cluster& cluster, const instance::FluxInstance& flux,
                const render::Rendered& rendered, const ApplyOptions& options)
      : cluster_(cluster),
        flux_(flux),
        rendered_(rendered),
        options_(options),
        run_(cluster, instance_ref(flux.ns, flux.name), options.interruption, options.on_progress,
             options.on_change, options.wait_status),
        engine_(cluster, run_.engine_hooks(), owner_labels(instance_ref(flux.ns, flux.name))),
        objects_(rendered_json(rendered)),
        ref_(instance_ref(flux.ns, flux.name)),
        started_(std::chrono::steady_clock::now()),
        deadline_(started_ + apply_timeout(flux, options.timeout, options.on_progress)),
        requests_(flux.annotations) {}

  ApplyResult run();

 private:
  void progress(const std::string& line) const { run_.progress(line); }
  void report(const Change& change) { run_.report(change); }
  // Held while the instance is not created yet (its CRD new), so that each
  // names it by its uid, as the operator's do.
  void event(Reason reason, const std::string& message, const std::string& revision) {
    if (!options_.on_event || cluster_.dry_run()) return;
    if (hold_events_) {
      held_events_.push_back({reason, message, revision});
      return;
    }
    options_.on_event({reason, message, revision, uid_});
  }

  // What the apply starts from, read together.
  struct Start {
    std::vector<json> instances;  // in every namespace
    std::optional<json> ns, lease, crd;
  };
  Start read_start();
  // Another instance than this one; this one's absence when it is read
  // from the cluster (there is nothing to reconcile).
  void refuse_another_instance(const std::vector<json>& instances);
  // Suspended (`fluxopctl suspend`, the file's annotation): not applied
  // unless forced. The daemon decides this itself.
  void refuse_suspended(const std::vector<json>& instances) const;
  void ensure_namespace(const std::optional<json>& live);
  // Applies the FluxInstance CRD unless another stays; the CRD when it is
  // not established yet.
  std::optional<json> ensure_instance_crd(const std::optional<json>& live);
  // Once the CRD is established, the instance new to the cluster.
  void apply_new_instance(const json& crd, const json& instance);
  // The objects as the cluster has them, those `known` gives (the same
  // length, an object where known) not read again.
  std::vector<ssa::Live> read_live_but(const std::vector<json>& objects,
                                       std::vector<ssa::Live> known);
  // The live instance's status, inventory, generation and uid.
  void read_instance(const json& live);
  void read_metadata(const json& live);
  // Applies the instance; whether it changed.
  bool apply_instance_object(const json& object, const ssa::Live& live);
  // The instance read once the lock is held at another generation than
  // the one rendered (ApplyOptions::generation): StaleRender.
  void refuse_stale_render(const ssa::Live& live) const;
  void refuse_dropped_versions(const std::vector<ssa::Live>& live) const;
  // Waits, within the apply's timeout and saying on what, until the objects
  // of `applied` at `going` (being deleted) are gone, then applies them
  // again in their place.
  void apply_again_once_gone(std::vector<ssa::Applied>& applied,
                             const std::vector<std::size_t>& going,
                             const std::function<void(const Change&)>& on_change);
  // An empty inventory while objects labelled the instance's are there (its
  // status was removed or rewritten): those objects, found by their labels.
  void rebuild_lost_inventory(const std::vector<ssa::Live>& live);
  void refuse_downgrade();
  void write_status(const std::function<void(json&)>& edit);
  // The lock confirmed before a status write (a compare-and-swap of the
  // Lease, unless written within `older_than`); lost, an Event says to
  // whom, once, and it throws.
  void confirm_lock_or_tell(std::chrono::milliseconds older_than);
  bool lock_loss_told_ = false;
  bool inventory_labelled_ = false;  // what is labelled the instance's is in previous_inventory_
  void fail(Failure failure, const std::string& message);

  kube::Cluster& cluster_;
  const instance::FluxInstance& flux_;
  const render::Rendered& rendered_;
  const ApplyOptions& options_;
  InstanceRun run_;
  ssa::Engine engine_;
  std::vector<json> objects_;
  kube::ObjectKey ref_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point deadline_;
  json status_ = json::object();  // as last written, or about to be
  // As last read or written: another writer's shows as a difference.
  json written_status_ = json::object();
  std::int64_t generation_ = 0;
  std::string uid_;  // the live instance's
  // The live instance's, as last read or written: the status is written
  // onto that version only.
  std::string resource_version_;
  std::vector<kube::ObjectKey> previous_inventory_;
  bool migrated_ = false;  // the migration ran, a forceAt request's included
  // The annotations whose requests this reconcile handles: the live
  // instance's, once read (`fluxopctl reconcile` annotates the object, not
  // the file an `apply --watch FILE` reads).
  instance::StringMap requests_;
  std::vector<std::string> kept_;  // what the prune kept, said (kept_messages)
  bool hold_events_ = false;       // until the new instance is applied
  std::vector<InstanceEvent> held_events_;
  ApplyResult result_;
};

// One FluxInstance per cluster, as the operator allows: a second one would
// take over the cluster-wide objects (CRDs) and prune them from under the
// first, custom resources and all.
InstanceApply::Start InstanceApply::read_start() {
  kube::ObjectKey every_namespace = ref_;
  every_namespace.ns.clear();
  every_namespace.name.clear();
  json crd = fluxinstance_crd();
  std::vector<std::vector<json>> found = cluster_.list_all({
      {every_namespace, {}, ""},
      {{"", "v1", "Namespace", "", ""}, {}, ref_.ns},
      {{"coordination.k8s.io", "v1", "Lease", ref_.ns, ""}, {}, LeaseLock::name_for(ref_.name)},
      {kube::object_key(crd), {}, crd["metadata"].value("name", "")},
  });
  auto one = [&found](std::size_t i) {
    return found[i].empty() ? std::nullopt : std::optional<json>(std::move(found[i].front()));
  };
  return {std::move(found[0]), one(1), one(2), one(3)};
}

void InstanceApply::refuse_another_instance(const std::vector<json>& instances) {
  if (std::optional<std::string> why = another_instance(instances, ref_)) {
    // Said on this instance too, when it exists (the daemon's, one created
    // by hand): its status would say nothing of why it is not installed.
    record_failure(cluster_, flux_, Failure::reconciliation, *why, options_.on_event);
    throw Error(flux_.file + ": " + *why);
  }
  if (options_.instance_from_cluster && instances.empty())
    throw Error("FluxInstance/" + ref_.ns + "/" + ref_.name + ": not found");
}

void InstanceApply::refuse_suspended(const std::vector<json>& instances) const {
  if (options_.force || options_.instance_from_cluster) return;
  bool suspended = reconcile_disabled(flux_.annotations);
  for (const json& live : instances) {
    kube::ObjectKey key = kube::object_key(live);
    if (key.ns == ref_.ns && key.name == ref_.name)
      suspended = suspended || reconcile_disabled(live);
  }
  if (suspended)
    throw ReconcileError(Failure::disabled,
                         display_name(ref_) + ": its reconciliation is disabled (" +
                             std::string(kReconcileAnnotation) +
                             ": disabled); `fluxopctl resume` it, or apply --force");
}

void InstanceApply::ensure_namespace(const std::optional<json>& live) {
  kube::ObjectKey ns{"", "v1", "Namespace", "", ref_.ns};
  if (live) {
    CheckResult check = namespace_check(flux_, live);
    if (check.status == CheckStatus::failed)
      throw Error(flux_.file + ": " + check.name + ": " + check.message);
    return;
  }
  auto rendered = std::find_if(objects_.begin(), objects_.end(),
                               [&](const json& object) { return kube::object_key(object) == ns; });
  json object =
      rendered != objects_.end()
          ? *rendered
          : json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ref_.ns}}}};
  engine_.apply({object}, {std::nullopt}, [this](const Change& change) { report(change); });
}

std::optional<json> InstanceApply::ensure_instance_crd(const std::optional<json>& live) {
  json ours = fluxinstance_crd();
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
      return std::nullopt;
    }
  }
  ssa::Applied applied = std::move(
      engine_.apply({ours}, {live}, [this](const Change& change) { report(change); }).front());
  if (cluster_.dry_run() || ssa::object_health(applied.object).ready) return std::nullopt;
  return applied.object;
}

void InstanceApply::apply_new_instance(const json& crd, const json& instance) {
  engine_.wait_served({crd}, "the FluxInstance CRD", deadline_);
  apply_instance_object(instance, std::nullopt);
  hold_events_ = false;
  for (const InstanceEvent& held : std::exchange(held_events_, {}))
    event(held.reason, held.message, held.revision);
}

std::vector<ssa::Live> InstanceApply::read_live_but(const std::vector<json>& objects,
                                                    std::vector<ssa::Live> known) {
  std::vector<json> unknown;
  std::vector<std::size_t> unknown_at;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (known[i]) continue;
    unknown.push_back(objects[i]);
    unknown_at.push_back(i);
  }
  std::vector<ssa::Live> found = engine_.read_live(unknown);
  for (std::size_t j = 0; j < found.size(); ++j) known[unknown_at[j]] = std::move(found[j]);
  return known;
}

void InstanceApply::read_instance(const json& live) {
  status_ = live.value("status", json::object());
  written_status_ = status_;
  previous_inventory_ = read_inventory(status_.value("inventory", json()));
  read_metadata(live);
}

void InstanceApply::read_metadata(const json& live) {
  json metadata = live.value("metadata", json::object());
  generation_ = metadata.value("generation", std::int64_t{0});
  uid_ = metadata.value("uid", "");
  resource_version_ = kube::resource_version(live);
  requests_ = annotations_of(live);
}

bool InstanceApply::apply_instance_object(const json& object, const ssa::Live& live) {
  if (live) {
    read_instance(*live);
    if (instance_in_place(object, *live, cluster_.field_manager())) return false;
  }
  ssa::Applied applied = std::move(
      engine_.apply({object}, {live}, [this](const Change& change) { report(change); }).front());
  read_metadata(applied.object);
  return applied.change.action != Action::Unchanged;
}

void InstanceApply::refuse_stale_render(const ssa::Live& live) const {
  if (options_.generation == 0 || !live) return;
  std::int64_t generation =
      live->value("metadata", json::object()).value("generation", std::int64_t{0});
  if (generation == options_.generation) return;
  throw StaleRender(display_name(ref_) + ": generation " + std::to_string(generation) +
                        " is in the cluster, generation " + std::to_string(options_.generation) +
                        " was rendered: nothing applied, the instance is rendered again",
                    generation);
}

void InstanceApply::rebuild_lost_inventory(const std::vector<ssa::Live>& live) {
  if (!previous_inventory_.empty() || !inventory_lost(live, owner_labels(ref_))) return;
  run_.before_request();
  previous_inventory_ = labelled_objects(cluster_, ref_);
  inventory_labelled_ = true;
  // None found: nothing to rebuild, nothing to say.
  if (previous_inventory_.empty()) return;
  progress("warning: " + display_name(ref_) + " has no inventory, but objects labelled its: " +
           std::to_string(previous_inventory_.size()) + " found by their labels are its inventory");
}

void InstanceApply::apply_again_once_gone(std::vector<ssa::Applied>& applied,
                                          const std::vector<std::size_t>& going,
                                          const std::function<void(const Change&)>& on_change) {
  std::vector<kube::ObjectKey> keys;
  std::string names;
  for (std::size_t i : going) {
    keys.push_back(applied[i].change.ref);
    names += (names.empty() ? "" : ", ") + display_name(applied[i].change.ref) + " (" +
             ssa::held_by(applied[i].object) + ")";
  }
  const std::string what = "being deleted, so not healthy until it is gone and applied again";
  // A dry run deletes nothing: what it waits on never goes.
  if (cluster_.dry_run()) throw Error(what + ": " + names);
  progress("waiting for what is " + what + ": " + names);
  engine_.wait_deleted(keys, "what is " + what, deadline_);
  std::vector<json> again;
  for (const kube::ObjectKey& key : keys) {
    again.push_back(*std::find_if(objects_.begin(), objects_.end(), [&key](const json& object) {
      return kube::object_key(object) == key;
    }));
  }
  std::vector<ssa::Applied> reapplied =
      engine_.apply(again, std::vector<ssa::Live>(again.size()), on_change);
  for (std::size_t i = 0; i < going.size(); ++i) applied[going[i]] = std::move(reapplied[i]);
}

// The API server refuses a CRD that no longer lists a version its objects
// are stored in (an upgrade that skips minors): said before any object is
// written, with the version to go through.
void InstanceApply::refuse_dropped_versions(const std::vector<ssa::Live>& live) const {
  auto join = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : " and ") + name;
    return text;
  };
  for (std::size_t i = 0; i < objects_.size(); ++i) {
    const json& crd = objects_[i];
    if (crd.value("kind", "") != "CustomResourceDefinition" || !live[i]) continue;
    std::set<std::string> listed;
    for (const json& version : crd["spec"].value("versions", json::array())) {
      listed.insert(version.value("name", ""));
    }
    std::vector<std::string> dropped;
    for (const json& stored :
         live[i]->value("status", json::object()).value("storedVersions", json::array())) {
      if (stored.is_string() && !listed.contains(stored.get<std::string>())) {
        dropped.push_back(stored);
      }
    }
    if (dropped.empty()) continue;
    std::string storage = storage_version(crd);
    std::vector<std::string> needed = dropped;
    needed.push_back(storage);
    std::string name = crd["metadata"].value("name", "");
    std::string through =
        options_.intermediate_version ? options_.intermediate_version(name, needed) : "";
    throw Error(display_name(kube::object_key(crd)) + ": objects are stored as " + join(dropped) +
                ", which Flux " + rendered_.version.original + " no longer serves: apply " +
                (through.empty() ? "an earlier Flux version that serves " + join(needed)
                                 : "Flux " + through) +
                " first (with migrateResources, it stores them as " + storage + "), then this one");
  }
}

// As the operator: a lower minor than the one applied last is refused
// (the CRDs' stored versions and the controllers' state may not go back); the
// instance is Stalled until its spec changes.
void InstanceApply::refuse_downgrade() {
  std::optional<std::string> message = downgrade_refusal(status_, rendered_.version);
  if (!message) return;
  fail(Failure::build, "build failed: " + *message);
  throw ReconcileError(Failure::build, flux_.file + ": .spec.distribution.version: " + *message);
}

void InstanceApply::confirm_lock_or_tell(std::chrono::milliseconds older_than) {
  try {
    run_.confirm_lock(older_than);
  } catch (const Error& lost) {
    if (!lock_loss_told_) {
      lock_loss_told_ = true;
      event(Reason::reconciliation_failed,
            std::string(lost.what()) + ": this apply's outcome is not written", "");
    }
    throw;
  }
}

void InstanceApply::write_status(const std::function<void(json&)>& edit) {
  edit(status_);
  if (cluster_.dry_run()) return;
  // Written by the holder of the lock only, onto the instance as this apply
  // last read or wrote it: a writer that lost the lease while it waited
  // (paused past it, or another took it) finds out here, writes nothing,
  // and says who took it. The Lease written within the last second (a
  // no-op apply's one status write follows its taking at once) is not
  // written again: no wait lay in between, and the request is spared.
  confirm_lock_or_tell(std::chrono::seconds(1));
  try {
    resource_version_ =
        kube::resource_version(cluster_.apply_status(ref_, status_, resource_version_));
    written_status_ = status_;
    return;
  } catch (const kube::ApiError& e) {
    if (e.reason() != "Conflict") throw;
  }
  // Moved by another writer: a user's request (an annotation), or another
  // apply that took the lock. Written again only while the lock is ours.
  std::optional<json> live = get_live_instance(cluster_, ref_);
  if (!live) throw Error(display_name(ref_) + ": deleted during the apply");
  run_.confirm_lock(std::chrono::milliseconds(0));
  // Holding the lock, no apply of fluxopctl wrote it: another controller did.
  if (live->value("status", json::object()) != written_status_) {
    std::string message = display_name(ref_) +
                          ": its status was written by another controller during this apply: "
                          "an operator may reconcile it too, each writing over the other";
    progress("warning: " + message);
    event(Reason::controller_conflict, message, "");
  }
  resource_version_ = kube::resource_version(*live);
  resource_version_ =
      kube::resource_version(cluster_.apply_status(ref_, status_, resource_version_));
  written_status_ = status_;
}

void InstanceApply::fail(Failure failure, const std::string& message) {
  // The apply that took the lease owns the status now: ours would overwrite
  // its conditions and inventory.
  if (cluster_.dry_run()) return;
  try {
    confirm_lock_or_tell(std::chrono::milliseconds(0));
  } catch (const Error&) {
    return;
  }
  event(reason(failure), message, status_.value("lastAttemptedRevision", ""));
  try {
    write_status([&](json& status) {
      std::string now = now_rfc3339();
      mark_failed(status, failure, message, generation_, now);
      mark_handled(status, requests_, migrated_);
      record_history(
          status, {rendered_.revision.substr(rendered_.revision.find('@') + 1), reason(failure),
                   rendered_.version.original, now, std::chrono::steady_clock::now() - started_});
    });
  } catch (const Error&) {
    // The cluster may be what failed; the error that ends the apply says it.
  }
}

ApplyResult InstanceApply::run() {
  Start start = read_start();
  refuse_another_instance(start.instances);
  refuse_suspended(start.instances);
  ensure_namespace(start.ns);
  bool start_current = false;
  try {
    start_current = run_.lock(options_.lock_timeout, std::move(start.lease));
  } catch (const Error& e) {
    // Who holds the lock and since when, said on the instance too (the
    // holder's next status write replaces it): a daemon that cannot take it
    // does not leave the instance "in progress" without a word.
    record_failure(cluster_, flux_, Failure::reconciliation, e.what(), options_.on_event);
    throw;
  }
  std::optional<json> new_crd = ensure_instance_crd(start.crd);

  // The instance and every object, read together once the lease is held;
  // but the namespace and the instance as the start read them are still
  // current when the lease was taken at once over what that read of it:
  // no other apply ran in between (and no new CRD changed the instance).
  json instance = instance_object(flux_);
  std::vector<json> reads = objects_;
  reads.push_back(instance);
  std::vector<ssa::Live> known(reads.size());
  if (start_current && !new_crd) {
    for (std::size_t i = 0; i < reads.size(); ++i) {
      kube::ObjectKey key = kube::object_key(reads[i]);
      if (start.ns && key == kube::ObjectKey{"", "v1", "Namespace", "", ref_.ns})
        known[i] = start.ns;
      for (const json& other : start.instances) {
        if (key == kube::object_key(other)) known[i] = other;
      }
    }
  }
  std::vector<ssa::Live> live = read_live_but(reads, std::move(known));
  ssa::Live live_instance = std::move(live.back());
  live.pop_back();
  if (live_instance) live_instance = conform_instance(std::move(*live_instance));
  refuse_stale_render(live_instance);
  // With its CRD just installed, the instance is new: it has no inventory to
  // keep, so it goes once the objects are applied, and the CRD is
  // established meanwhile.
  bool instance_later = new_crd && !live_instance;
  hold_events_ = instance_later;
  bool instance_changed = false;
  if (options_.instance_from_cluster) {
    // Its users own it; only its status is written.
    if (!live_instance) throw Error(display_name(kube::object_key(instance)) + ": not found");
    read_instance(*live_instance);
    // As the operator's: deleting the instance is then its uninstall.
    if (!cluster_.dry_run()) {
      if (std::optional<json> patched = ensure_finalizer(cluster_, *live_instance))
        resource_version_ = kube::resource_version(*patched);
    }
  } else if (!instance_later) {
    instance_changed = apply_instance_object(instance, live_instance);
  }
  refuse_downgrade();
  rebuild_lost_inventory(live);
  if (options_.outdated_version) event(Reason::outdated_version, *options_.outdated_version, "");
  std::string attempted = status_.value("lastAttemptedRevision", "");
  if (attempted != rendered_.revision) {
    event(Reason::progressing,
          (attempted.empty() ? "Installing revision " : "Upgrading to revision ") +
              rendered_.revision,
          "");
  }
  bool force_migration = force_requested(requests_, status_);

  std::vector<kube::ObjectKey> current;
  for (const json& object : objects_) current.push_back(kube::object_key(object));
  std::vector<kube::ObjectKey> stale = stale_objects(previous_inventory_, current);
  bool changes_ahead = instance_changed || !stale.empty();
  for (std::size_t i = 0; i < objects_.size() && !changes_ahead; ++i) {
    changes_ahead = !engine_.is_unchanged(objects_[i], live[i]);
  }
  // The inventory acted on is the status's entries with what is labelled
  // the instance's: an entry lost (a status rewritten) does not leave its
  // object behind when its component goes. Looked for when the apply
  // changes anything (dropping a component does), not on every no-op.
  if (changes_ahead && !inventory_labelled_) {
    run_.before_request();
    previous_inventory_ = with_labelled(previous_inventory_, labelled_objects(cluster_, ref_));
    stale = stale_objects(previous_inventory_, current);
  }
  // Until the apply succeeds, the inventory holds the old objects too: an
  // apply killed half-way leaves nothing untracked. With nothing to change,
  // the end's status is all there is to write.
  std::vector<kube::ObjectKey> tracking = current;
  tracking.insert(tracking.end(), stale.begin(), stale.end());
  if (changes_ahead && !instance_later)
    write_status([&](json& status) {
      std::string now = now_rfc3339();
      set_condition(status,
                    {"Reconciling", "True", Reason::progressing, "Reconciliation in progress"},
                    generation_, now);
      set_condition(status, {"Ready", "Unknown", Reason::progressing, "Reconciliation in progress"},
                    generation_, now);
      status["lastAttemptedRevision"] = rendered_.revision;
      status["inventory"] = inventory_json(tracking);
    });

  Failure failure = Failure::reconciliation;
  auto on_change = [this](const Change& change) { report(change); };
  try {
    refuse_dropped_versions(live);
    std::vector<ssa::Applied> applied = engine_.apply_staged(objects_, live, deadline_, on_change);
    if (instance_later) {
      apply_new_instance(*new_crd, instance);
      instance_later = false;
    }
    if (std::vector<std::size_t> going = terminating_objects(applied); !going.empty()) {
      failure = Failure::health_check;
      apply_again_once_gone(applied, going, on_change);
      failure = Failure::reconciliation;
    }
    if (flux_.migrate_resources && !cluster_.dry_run()) {
      std::vector<json> after;
      for (ssa::Applied& one : applied) after.push_back(std::move(one.object));
      migrate_resources(cluster_, after, force_migration,
                        [this](const std::string& line) { progress(line); });
      migrated_ = true;
    }
    std::vector<PrunePlan> prunes =
        plan_prunes(cluster_, engine_, stale, owner_labels(ref_), {options_.prune_crds});
    kept_ = kept_messages(prunes);
    for (const std::string& kept : kept_) progress("warning: " + kept);
    carry_out(
        cluster_, prunes, [this] { run_.before_request(); }, on_change);
    // A CRD kept stays in the inventory: the next apply prunes it once its
    // resources are gone.
    for (const PrunePlan& plan : prunes) {
      if (plan.way == PruneWay::held) current.push_back(plan.key);
    }
    if (options_.wait.value_or(flux_.wait) && !cluster_.dry_run()) {
      failure = Failure::health_check;
      engine_.wait(objects_, "the components to roll out", deadline_);
    }
    // Stopped (SIGTERM) before the last write, as between two others: a
    // failure, written only while the lock is still this apply's.
    run_.before_request();
  } catch (const Error& e) {
    // The failure is recorded on the instance, there or not yet.
    std::exception_ptr first = std::current_exception();
    if (instance_later) {
      try {
        apply_new_instance(*new_crd, instance);
      } catch (const Error&) {
        std::rethrow_exception(first);
      }
    }
    // An interruption cuts a request short ("<URL>: cancelled"): the
    // record says what happened instead.
    std::string stopped = run_.interruption();
    std::string message = stopped.empty() ? e.what() : stopped;
    fail(failure, message);
    throw ReconcileError(failure, message);
  }

  auto elapsed = std::chrono::steady_clock::now() - started_;
  result_.revision = rendered_.revision;
  result_.message =
      message(Reason::reconciliation_succeeded,
              {format_go_duration(std::chrono::duration_cast<std::chrono::seconds>(elapsed))});
  for (const std::string& kept : kept_) result_.message += "; " + kept;
  write_status([&](json& status) {
    std::string now = now_rfc3339();
    set_condition(status, {"Ready", "True", Reason::reconciliation_succeeded, result_.message},
                  generation_, now);
    remove_condition(status, "Reconciling");
    remove_condition(status, "Stalled");
    status["inventory"] = inventory_json(current);
    status["lastAppliedRevision"] = rendered_.revision;
    status["lastAttemptedRevision"] = rendered_.revision;
    if (options_.artifact_revision.empty())
      status.erase("lastArtifactRevision");
    else
      status["lastArtifactRevision"] = options_.artifact_revision;
    status["components"] = components_status(objects_, flux_.components);
    mark_handled(status, requests_, migrated_ || !flux_.migrate_resources);
    record_history(status,
                   {rendered_.revision.substr(rendered_.revision.find('@') + 1),
                    Reason::reconciliation_succeeded, rendered_.version.original, now, elapsed});
  });
  if (LeaseLock* lock = run_.held_lock()) lock->release();
  result_.changes = run_.changes();
  for (const std::string& kept : kept_) event(Reason::prune_skipped, kept, rendered_.revision);
  event(Reason::reconciliation_succeeded, result_.message, rendered_.revision);
  return result_;
}

}  // namespace

std::optional<std::string> downgrade_refusal(const json& status, const distribution::Version& to) {
  std::string applied = status.is_object() ? status.value("lastAppliedRevision", "") : "";
  std::optional<distribution::Version> from =
      distribution::parse_version(std::string_view(applied).substr(0, applied.find('@')));
  if (!from) return std::nullopt;
  if (to.major > from->major || (to.major == from->major && to.minor >= from->minor))
    return std::nullopt;
  return "downgrading from " + from->original + " to " + to.original +
         " is not supported, reinstall needed";
}

std::chrono::seconds apply_timeout(const instance::FluxInstance& flux,
                                   std::optional<std::chrono::seconds> flag,
                                   const std::function<void(const std::string&)>& warn) {
  if (flag) return *flag;
  auto annotation = flux.annotations.find(std::string(kTimeoutAnnotation));
  if (annotation == flux.annotations.end()) return kDefaultTimeout;
  std::optional<std::chrono::nanoseconds> duration = parse_go_duration(annotation->second);
  if (duration && duration->count() > 0) {
    return std::chrono::duration_cast<std::chrono::seconds>(*duration);
  }
  if (warn) {
    warn("warning: " + flux.file + ": .metadata.annotations." + std::string(kTimeoutAnnotation) +
         ": '" + annotation->second + "' is not a duration such as 5m; using 5m");
  }
  return kDefaultTimeout;
}

ApplyResult apply_instance(kube::Cluster& cluster, const instance::FluxInstance& flux,
                           const render::Rendered& rendered, const ApplyOptions& options) {
  try {
    return InstanceApply(cluster, flux, rendered, options).run();
  } catch (const ReconcileError&) {
    throw;
  } catch (const StaleRender&) {
    throw;
  } catch (const Error& e) {
    // Before the objects: the cluster could not be read, the lock not had.
    throw ReconcileError(Failure::reconciliation, e.what());
  }
}

}  // namespace fluxop::reconcile
