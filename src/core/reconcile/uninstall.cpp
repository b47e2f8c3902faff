#include "core/reconcile/uninstall.h"

#include <algorithm>
#include <ctime>
#include <optional>

#include "core/duration.h"
#include "core/error.h"
#include "core/file.h"
#include "core/kube/meta.h"
#include "core/kube/patch_listed.h"
#include "core/plural.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/instance_requests.h"
#include "core/reconcile/instance_run.h"
#include "core/reconcile/preflight.h"
#include "core/reconcile/prune.h"
#include "core/reconcile/status.h"
#include "core/rfc3339.h"
#include "core/ssa/diagnosis.h"
#include "core/ssa/engine.h"
#include "core/ssa/health.h"

namespace fluxop::reconcile {

using nlohmann::json;

namespace {

using ssa::Action;
using ssa::Change;

json finalizers_of(const json& object) {
  json finalizers = object.value("metadata", json::object()).value("finalizers", json::array());
  return finalizers.is_array() ? finalizers : json::array();
}

// The patch removing `finalizer` from the object (all when nullopt), each
// at its index after a `test` that it is still there: refused when the
// finalizers moved, the patch is made again from them read again.
std::optional<kube::ObjectPatch> finalizers_patch(const json& object,
                                                  const std::optional<std::string>& finalizer) {
  json finalizers = finalizers_of(object);
  json patch = json::array();
  for (std::size_t i = finalizers.size(); i-- > 0;) {
    if (finalizer && finalizers[i] != *finalizer) continue;
    std::string path = "/metadata/finalizers/" + std::to_string(i);
    patch.push_back({{"op", "test"}, {"path", path}, {"value", finalizers[i]}});
    patch.push_back({{"op", "remove"}, {"path", path}});
  }
  if (patch.empty()) return std::nullopt;
  return kube::ObjectPatch{kube::object_key(object), kube::ObjectPatch::Type::Json,
                           std::move(patch)};
}

// The patch that releases a Flux object: suspended and its finalizers
// removed in one write. A controller still running then finds it suspended
// whatever it does next: it acts on nothing (kustomize-controller prunes
// nothing of a suspended Kustomization being deleted, helm-controller
// uninstalls no suspended HelmRelease), even if it puts its finalizer back.
std::optional<kube::ObjectPatch> flux_release_patch(const json& object) {
  std::optional<kube::ObjectPatch> patch = finalizers_patch(object, std::nullopt);
  const json* spec = kube::at(object, "/spec");
  if (!spec || !spec->is_object() || kube::true_at(object, "/spec/suspend")) return patch;
  if (!patch)
    patch =
        kube::ObjectPatch{kube::object_key(object), kube::ObjectPatch::Type::Json, json::array()};
  patch->patch.push_back({{"op", "add"}, {"path", "/spec/suspend"}, {"value", true}});
  return patch;
}

class Uninstall {
 public:
  Uninstall(kube::Cluster& cluster, const kube::ObjectKey& ref, const UninstallOptions& options)
      : cluster_(cluster),
        ref_(ref),
        options_(options),
        run_(cluster, ref, options.interruption, options.on_progress, options.on_change,
             options.wait_status),
        engine_(cluster_, run_.engine_hooks(), owner_labels(ref)),
        started_(std::chrono::steady_clock::now()),
        deadline_(started_ + options.timeout) {}

  UninstallResult run();

 private:
  void before_request() { run_.before_request(); }
  void progress(const std::string& line) const { run_.progress(line); }
  void report(const Change& change) { run_.report(change); }
  // Runs one step; behind the finalizer its failure is a warning and the
  // next step runs.
  void step(const std::string& what, const std::function<void()>& action);
  // Deletes the objects (those the prune rules allow) and waits for them;
  // those deleted.
  std::vector<kube::ObjectKey> remove(const std::vector<kube::ObjectKey>& keys,
                                      const std::string& what, bool wait);
  // Deletes the controllers and waits until their pods are gone too: a
  // Deployment goes at once, its pods (the controllers running) after it.
  void remove_controllers(const std::vector<kube::ObjectKey>& controllers);
  // While Flux objects (or their CRDs) are still being deleted, every 2 s:
  // one with a finalizer again (its controller put it back before it
  // stopped: a controller outlives its pod by its grace period) is released
  // again, suspended: nothing acts on it then, and nothing else would ever
  // remove that finalizer.
  void release_again(const std::vector<nlohmann::json>& still);
  void remove_flux_finalizers();
  // Removes `finalizer` of the object (all when nullopt), retried when
  // they changed meanwhile; false when the object is gone.
  bool remove_finalizers(const json& live, const std::optional<std::string>& finalizer);
  void remove_instance(const json& live);
  // What the uninstall of `inventory` removes, said before it starts.
  std::string removes(const std::vector<kube::ObjectKey>& inventory);
  // The objects labelled the instance's still there that the uninstall
  // deletes (not those annotated prune: disabled, not the CRDs and Flux
  // objects --keep-crds keeps); none on a dry-run cluster.
  std::vector<std::string> remaining();
  // Ready=False, Reason::uninstalling, for the instance's generation.
  void mark_uninstalling(const json& live);

  kube::Cluster& cluster_;
  const kube::ObjectKey& ref_;
  const UninstallOptions& options_;
  InstanceRun run_;
  ssa::Engine engine_;
  std::chrono::steady_clock::time_point started_, deadline_;
  std::chrono::steady_clock::time_point next_release_;  // release_again's
  UninstallResult result_;
};

void Uninstall::step(const std::string& what, const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    if (!options_.behind_finalizer) throw;
    result_.warnings.push_back(what + ": " + e.what());
    progress("warning: " + result_.warnings.back());
  }
}

std::vector<kube::ObjectKey> Uninstall::remove(const std::vector<kube::ObjectKey>& keys,
                                               const std::string& what, bool wait) {
  std::vector<kube::ObjectKey> deleted;
  for (const Change& change :
       engine_.prune(keys, owner_labels(ref_), [this](const Change& c) { report(c); })) {
    if (change.action == Action::Deleted) deleted.push_back(change.ref);
  }
  if (wait && !deleted.empty() && !cluster_.dry_run())
    engine_.wait_deleted(deleted, what, deadline_,
                         [this](const std::vector<json>& still) { release_again(still); });
  return deleted;
}

void Uninstall::release_again(const std::vector<json>& still) {
  if (options_.keep_crds) return;
  auto now = std::chrono::steady_clock::now();
  if (now < next_release_) return;
  // A Flux object, or a CRD of one held by its resources.
  bool flux_held = std::any_of(still.begin(), still.end(), [](const json& object) {
    kube::ObjectKey key = kube::object_key(object);
    return ssa::is_terminating(object) &&
           (kube::is_flux_group(key.group) ||
            (is_crd(key) && kube::is_flux_group(kube::text_at(object, "/spec/group"))));
  });
  if (!flux_held) return;
  next_release_ = now + std::chrono::seconds(2);
  try {
    before_request();
    cluster_.refresh_kinds();  // CRDs are going: a kind gone is not listed
    remove_flux_finalizers();
  } catch (const Error& e) {
    // A kind gone between discovery and its list: tried again in 2 s, and
    // the wait names what stays at its deadline (an interruption is seen
    // again by the wait's next request).
    progress("warning: releasing the Flux objects again: " + std::string(e.what()));
  }
}

void Uninstall::remove_controllers(const std::vector<kube::ObjectKey>& controllers) {
  std::vector<json> live;  // their selectors, read before they go
  if (!controllers.empty() && !cluster_.dry_run()) {
    std::vector<kube::ListQuery> named;
    for (const kube::ObjectKey& key : controllers)
      named.push_back({{key.group, key.version, key.kind, key.ns, ""}, {}, key.name});
    before_request();
    for (std::vector<json>& found : cluster_.list_all(named)) {
      for (json& deployment : found) live.push_back(std::move(deployment));
    }
  }
  std::vector<kube::ObjectKey> deleted =
      remove(controllers, "the controllers to stop", /*wait=*/true);
  std::vector<kube::ListQuery> pods;
  for (const json& deployment : live) {
    kube::ObjectKey key = kube::object_key(deployment);
    kube::Labels selector = kube::string_map_at(deployment, "/spec/selector/matchLabels");
    if (selector.empty() || std::find(deleted.begin(), deleted.end(), key) == deleted.end())
      continue;
    // Its ReplicaSets too: one still there could start a pod again.
    pods.push_back({{"apps", "v1", "ReplicaSet", key.ns, ""}, selector, ""});
    pods.push_back({{"", "v1", "Pod", key.ns, ""}, std::move(selector), ""});
  }
  if (!pods.empty()) engine_.wait_none(pods, "the controllers' pods to be gone", deadline_);
}

bool Uninstall::remove_finalizers(const json& live, const std::optional<std::string>& finalizer) {
  before_request();
  return kube::patch_one(cluster_, live, [&finalizer](const json& object) {
    return finalizers_patch(object, finalizer);
  });
}

void Uninstall::remove_flux_finalizers() {
  std::vector<kube::ObjectKey> kinds = cluster_.served_kinds(kube::is_flux_group);
  kube::ListedPatches work;
  for (const kube::ObjectKey& kind : kinds) work.queries.push_back({kind, {}, ""});
  work.patch_for = [](std::size_t, const json& object) { return flux_release_patch(object); };
  work.before_batch = [this] { before_request(); };
  before_request();
  std::vector<int> removed = kube::patch_listed(cluster_, work);
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (removed[i] > 0)
      progress("suspended and removed the finalizers of " + std::to_string(removed[i]) + " " +
               kinds[i].kind + (removed[i] == 1 ? "" : " objects"));
  }
}

std::string Uninstall::removes(const std::vector<kube::ObjectKey>& inventory) {
  std::vector<kube::ObjectKey> deleted;
  for (const ssa::PlannedPrune& planned : engine_.plan_prune(inventory, owner_labels(ref_))) {
    const kube::ObjectKey& key = planned.key;
    if (planned.action == ssa::PruneAction::Delete &&
        (!options_.keep_crds || !(is_crd(key) || kube::is_flux_group(key.group))))
      deleted.push_back(key);
  }
  std::string text = display_name(ref_) + " and " + count_of(deleted.size(), "object") +
                     " of its inventory: " + counts_text(count_objects(deleted));
  if (options_.keep_crds)
    return text + "; the CRDs and the Flux custom resources stay (--keep-crds)";
  std::vector<kube::ListQuery> queries;
  for (const kube::ObjectKey& kind : cluster_.served_kinds(kube::is_flux_group))
    queries.push_back({kind, {}, ""});
  before_request();
  std::vector<kube::ObjectKey> resources = list_keys(cluster_, queries);
  return text + "; with the CRDs, every Flux custom resource in the cluster" +
         (resources.empty() ? " (none)" : ": " + counts_text(count_objects(resources)));
}

std::vector<std::string> Uninstall::remaining() {
  if (cluster_.dry_run()) return {};
  before_request();
  // The uninstall deleted CRDs: their kinds are no longer served, and a list
  // of one would be a 404.
  cluster_.refresh_kinds();
  std::vector<kube::ObjectKey> labelled = labelled_objects(cluster_, ref_);
  std::vector<std::string> left;
  for (const ssa::PlannedPrune& planned : engine_.plan_prune(labelled, owner_labels(ref_))) {
    if (planned.action != ssa::PruneAction::Delete) continue;
    if (options_.keep_crds && (is_crd(planned.key) || kube::is_flux_group(planned.key.group)))
      continue;
    left.push_back(display_name(planned.key) + (ssa::is_terminating(planned.live)
                                                    ? " (" + ssa::held_by(planned.live) + ")"
                                                    : ""));
  }
  return left;
}

void Uninstall::mark_uninstalling(const json& live) {
  json status = live.value("status", json::object());
  set_condition(status,
                {"Ready", "False", Reason::uninstalling,
                 "Uninstallation in progress: `fluxopctl delete` completes one that stopped"},
                live.value("metadata", json::object()).value("generation", std::int64_t{0}),
                utc_rfc3339(std::time(nullptr)));
  remove_condition(status, "Reconciling");
  before_request();
  cluster_.apply_status(ref_, status);
}

void Uninstall::remove_instance(const json& live) {
  std::optional<json> now = live;
  if (!finalizers_of(live).empty()) {
    // The finalizer is the uninstall this is: nobody else is to run it.
    if (!remove_finalizers(live, std::string(kInstanceFinalizer))) return;
  }
  if (options_.behind_finalizer) return;  // being deleted: it goes once released
  before_request();
  if (!cluster_.remove(ref_)) return;
  report({ref_, Action::Deleted});
  if (options_.wait && !cluster_.dry_run())
    engine_.wait_deleted({ref_}, "the FluxInstance to be gone", deadline_);
}

UninstallResult Uninstall::run() {
  before_request();
  std::optional<json> live = get_live_instance(cluster_, ref_);
  if (!live) {
    result_.message = display_name(ref_) + " not found: nothing to uninstall";
    return result_;
  }
  result_.found = true;
  if (options_.behind_finalizer) {
    json finalizers = finalizers_of(*live);
    if (std::find(finalizers.begin(), finalizers.end(), kInstanceFinalizer) == finalizers.end()) {
      result_.message = display_name(ref_) + " has no finalizer of ours: nothing to uninstall";
      return result_;
    }
    if (reconcile_disabled(*live)) {
      remove_finalizers(*live, std::string(kInstanceFinalizer));
      result_.message = display_name(ref_) + " released: its reconciliation is disabled";
      return result_;
    }
  }
  // In a namespace being deleted nothing can be created, the lock neither;
  // no apply runs there (each refuses such a namespace), so the uninstall
  // goes on without it rather than failing until the namespace is gone, which
  // the instance's finalizer holds.
  std::optional<json> ns = cluster_.get({"", "v1", "Namespace", "", ref_.ns});
  bool terminating = ns && namespace_terminating(*ns);
  // The inventory, and what is labelled the instance's but missing from
  // it: a status removed or rewritten loses no object.
  before_request();
  std::vector<kube::ObjectKey> inventory = with_labelled(
      read_inventory(live->value("status", json::object()).value("inventory", json::object())),
      labelled_objects(cluster_, ref_));
  if (options_.confirm && !options_.confirm(removes(inventory)))
    throw Error("the uninstall of " + display_name(ref_) + " was not confirmed: nothing deleted");
  if (!cluster_.dry_run()) {
    if (!terminating) {
      kube::ObjectKey lease{"coordination.k8s.io", "v1", "Lease", ref_.ns,
                            LeaseLock::name_for(ref_.name)};
      run_.lock(options_.lock_timeout, cluster_.get(lease));
    }
    // Behind the finalizer, the deletionTimestamp says it already.
    if (!options_.behind_finalizer) mark_uninstalling(*live);
  }

  std::vector<kube::ObjectKey> controllers, rest;
  std::size_t kept = 0;
  for (const kube::ObjectKey& key : inventory) {
    if (key.group == "apps" && key.kind == "Deployment")
      controllers.push_back(key);
    else if (options_.keep_crds && (is_crd(key) || kube::is_flux_group(key.group)))
      ++kept;
    else
      rest.push_back(key);
  }

  step("deleting the controllers", [&] { remove_controllers(controllers); });
  if (options_.keep_crds) {
    progress("keeping " + std::to_string(kept) +
             " CRDs and Flux objects of the inventory, and the Flux custom resources");
  } else {
    step("removing the finalizers of the Flux custom resources", [&] { remove_flux_finalizers(); });
  }
  step("deleting the inventory",
       [&] { remove(rest, "the deleted objects to be gone", options_.wait); });
  std::vector<std::string> left;
  step("checking that nothing labelled the instance's is left", [&] { left = remaining(); });
  if (!left.empty() && options_.wait && !options_.behind_finalizer)
    throw Error("the uninstall of " + display_name(ref_) + " is not complete: " +
                count_of(left.size(), "object") + " labelled its remain: " + some_of(left) +
                "; `fluxopctl delete` again finishes it");
  step("removing the FluxInstance", [&] { remove_instance(*live); });
  if (LeaseLock* lock = run_.held_lock()) lock->remove();
  result_.changes = run_.changes();

  auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_);
  if (left.empty()) {
    result_.message = "Uninstallation completed in " + format_go_duration(elapsed);
    if (terminating)
      result_.message += " (Namespace/" + ref_.ns +
                         " is being deleted: uninstalled without taking the Lease, which cannot be "
                         "created there)";
  } else {
    result_.message = "Uninstallation not complete after " + format_go_duration(elapsed) + ": " +
                      count_of(left.size(), "object") +
                      " labelled its still there: " + some_of(left);
    if (options_.behind_finalizer) result_.warnings.push_back(result_.message);
  }
  return result_;
}

}  // namespace

UninstallResult uninstall_instance(kube::Cluster& cluster, const kube::ObjectKey& ref,
                                   const UninstallOptions& options) {
  return Uninstall(cluster, ref, options).run();
}

std::optional<json> ensure_finalizer(kube::Cluster& cluster, const json& live) {
  json finalizers = finalizers_of(live);
  for (const json& finalizer : finalizers) {
    if (finalizer == kInstanceFinalizer) return std::nullopt;
  }
  json patch = live.value("metadata", json::object()).contains("finalizers")
                   ? json::array({{{"op", "add"},
                                   {"path", "/metadata/finalizers/-"},
                                   {"value", std::string(kInstanceFinalizer)}}})
                   : json::array({{{"op", "add"},
                                   {"path", "/metadata/finalizers"},
                                   {"value", {std::string(kInstanceFinalizer)}}}});
  return cluster.json_patch(kube::object_key(live), patch);
}

}  // namespace fluxop::reconcile
