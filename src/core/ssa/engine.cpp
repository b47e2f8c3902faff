#include "core/ssa/engine.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/kube/meta.h"
#include "core/plural.h"
#include "core/ssa/errors.h"
#include "core/ssa/field_ownership.h"
#include "core/ssa/health.h"
#include "core/ssa/takeover.h"

namespace fluxop::ssa {

using nlohmann::json;

namespace {

constexpr std::chrono::milliseconds kPollInterval{500};
// Waits poll at first this often, doubling up to kPollInterval: a CRD is
// established within tens of milliseconds, a rollout takes seconds.
constexpr std::chrono::milliseconds kFirstPoll{25};
constexpr std::chrono::seconds kRecreateTimeout{60};
// How long a CRD may stay not established before it is written again to
// requeue it: the API server establishes one within milliseconds.
constexpr std::chrono::seconds kEstablishGrace{5};
// How long, once the controllers have rolled out, a Flux object no
// controller has touched is waited for: a running controller picks its
// objects up within a second or two; none does when the controller is not
// installed or does not run (then the object is said, not waited for).
constexpr std::chrono::seconds kUntouchedGrace{5};
constexpr std::string_view kRequeueAnnotation = "fluxopctl.controlplane.io/requeued";
// How often a pending Deployment is diagnosed, from that long after the wait
// began: a rollout that goes well is not read for, the scheduler's and the
// kubelet's word is printed within seconds.
constexpr std::chrono::seconds kDiagnosisInterval{2};
// The pods of one Deployment whose events a diagnosis reads: they tend to
// say the same.
constexpr std::size_t kDiagnosedPods = 3;
// How often a take-over is tried from a fresh read of an object that moved
// under its guard, the tries kFirstPoll apart, doubling up to kPollInterval:
// a rollout writes a Deployment's status in bursts over a few seconds, which
// the later tries outlast.
constexpr int kTakeOverTries = 8;

std::string resource_version(const json& object) {
  return object.value("metadata", json::object()).value("resourceVersion", "");
}

// After the one pending object a wait names: how many more there are.
std::string and_others(std::size_t pending) {
  return pending > 1 ? " and " + count_of(pending - 1, "other object") : "";
}

}  // namespace

PruneAction prune_action(const std::optional<json>& live, const Owner& owner) {
  if (!live) return PruneAction::Gone;
  json metadata = live->value("metadata", json::object());
  json labels = metadata.value("labels", json::object());
  for (const auto& [key, value] : owner) {
    if (!labels.is_object() || labels.value(key, "") != value) return PruneAction::Keep;
  }
  if (kube::any_in_metadata(*live, "fluxcd.controlplane.io/prune", "disabled"))
    return PruneAction::Keep;
  return PruneAction::Delete;
}

bool is_first_stage(const json& object) {
  std::string kind = object.value("kind", "");
  return kind == "CustomResourceDefinition" || kind == "Namespace";
}

Engine::Engine(kube::Cluster& cluster, EngineHooks hooks, Labels selector)
    : cluster_(cluster), hooks_(std::move(hooks)), selector_(std::move(selector)) {}

void Engine::before_request() const {
  if (hooks_.before_request) hooks_.before_request();
}

void Engine::progress(const std::string& line) const {
  if (hooks_.on_progress) hooks_.on_progress(line);
}

void Engine::waiting(const std::string& what, const std::string& pending,
                     const std::string& cause) const {
  if (hooks_.wait_status) hooks_.wait_status->waiting(what, pending, cause);
}

bool Engine::namespace_exists(const std::string& ns) {
  auto known = namespaces_.find(ns);
  if (known != namespaces_.end()) return known->second;
  before_request();
  bool exists = cluster_.get({"", "v1", "Namespace", "", ns}).has_value();
  namespaces_[ns] = exists;
  return exists;
}

std::vector<Live> Engine::read_live(const std::vector<json>& objects) {
  std::vector<Live> live(objects.size());
  // The objects of one kind in one namespace, by their index.
  std::map<std::string, std::vector<std::size_t>> kinds;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    ObjectKey key = kube::object_key(objects[i]);
    if (!cluster_.has_kind(key) || empty_namespaces_.contains(key.ns)) continue;
    kinds[key.group + "/" + key.version + "/" + key.kind + "/" + key.ns].push_back(i);
  }
  // One list per kind, selected by the labels all its objects carry; one
  // by name for a kind of one object, or an object the first did not show
  // (there, perhaps, without the labels).
  std::vector<kube::ListQuery> queries;
  std::vector<std::vector<std::size_t>> asked;
  auto ask_by_name = [&](std::size_t i) {
    ObjectKey key = kube::object_key(objects[i]);
    std::string name = key.name;
    key.name.clear();
    queries.push_back({key, {}, name});
    asked.push_back({i});
  };
  for (const auto& [kind, members] : kinds) {
    if (members.size() == 1) {
      ask_by_name(members.front());
      continue;
    }
    auto labels_of = [&objects](std::size_t i) {
      return objects[i].value("metadata", json::object()).value("labels", Labels{});
    };
    Labels selector = selector_.empty() ? labels_of(members.front()) : selector_;
    for (std::size_t i : members) {
      Labels labels = labels_of(i);
      std::erase_if(selector, [&labels](const auto& label) {
        auto found = labels.find(label.first);
        return found == labels.end() || found->second != label.second;
      });
    }
    ObjectKey collection = kube::object_key(objects[members.front()]);
    collection.name.clear();
    queries.push_back({collection, std::move(selector), ""});
    asked.push_back(members);
  }
  while (!queries.empty()) {
    before_request();
    std::vector<std::vector<json>> lists = cluster_.list_all(queries);
    std::vector<kube::ListQuery> listed = std::move(queries);
    std::vector<std::vector<std::size_t>> listed_for = std::move(asked);
    queries.clear();
    asked.clear();
    for (std::size_t q = 0; q < listed.size(); ++q) {
      if (!listed[q].name.empty()) {
        if (!lists[q].empty()) live[listed_for[q].front()] = std::move(lists[q].front());
        continue;
      }
      for (std::size_t i : listed_for[q]) {
        ObjectKey key = kube::object_key(objects[i]);
        for (json& item : lists[q]) {
          ObjectKey found = kube::object_key(item);
          if (found.name == key.name && found.ns == key.ns) live[i] = std::move(item);
        }
        // Not selected, or namespaced without a namespace (in the context's).
        if (!live[i] && (!listed[q].selector.empty() || key.ns.empty())) ask_by_name(i);
      }
    }
  }
  return live;
}

bool Engine::is_unchanged(const json& object, const Live& live) const {
  return live && apply_is_noop(object, *live, cluster_.field_manager()) &&
         takeover_patch(*live, cluster_.field_manager()).is_null();
}

std::vector<PlannedChange> Engine::plan(const std::vector<json>& objects) {
  return plan(objects, read_live(objects));
}

std::vector<PlannedChange> Engine::plan(const std::vector<json>& objects,
                                        const std::vector<Live>& live) {
  std::vector<PlannedChange> planned(objects.size());
  std::vector<json> dry_runs;
  std::vector<std::size_t> dry_run_of;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    ObjectKey key = kube::object_key(objects[i]);
    planned[i] = {key, Action::Created, live[i] ? *live[i] : json(), objects[i]};
    if (is_unchanged(objects[i], live[i])) {
      planned[i].action = Action::Unchanged;
      planned[i].merged = *live[i];
      continue;
    }
    // A dry run cannot place an object whose kind or namespace does not
    // exist yet (a first install): it would be created as it is.
    if (!cluster_.has_kind(key)) continue;
    if (!live[i] && !key.ns.empty() && !namespace_exists(key.ns)) continue;
    dry_runs.push_back(objects[i]);
    dry_run_of.push_back(i);
  }
  if (dry_runs.empty()) return planned;
  before_request();
  std::vector<WriteResult> results = cluster_.apply_all(dry_runs, true);
  for (std::size_t j = 0; j < results.size(); ++j) {
    PlannedChange& change = planned[dry_run_of[j]];
    if (results[j].error) {
      try {
        std::rethrow_exception(results[j].error);
      } catch (const kube::ApiError& error) {
        if (change.live.is_null() || !is_immutable_field(error)) throw;
        change.action = Action::Replaced;
        continue;
      }
    }
    change.merged = std::move(results[j].object);
    if (change.live.is_null()) continue;
    // A no-op apply leaves the object as it is, managed fields included;
    // other managers' traces are a change of ownership still to make, and
    // once their fields are the manager's, the apply removes those it does
    // not set.
    const std::string& manager = cluster_.field_manager();
    bool take_over = !takeover_patch(change.live, manager).is_null();
    if (take_over) {
      change.merged =
          without_unapplied(std::move(change.merged), fields_after_takeover(change.live, manager),
                            objects[dry_run_of[j]]);
    }
    change.action =
        change.merged == change.live && !take_over ? Action::Unchanged : Action::Configured;
  }
  return planned;
}

std::vector<PlannedPrune> Engine::plan_prune(const std::vector<ObjectKey>& stale,
                                             const Owner& owner) {
  // Listed by the owner's labels: what a LIST does not show is not the
  // owner's to delete, or gone; a GET tells which.
  std::vector<json> objects;
  for (auto it = stale.rbegin(); it != stale.rend(); ++it) {
    json metadata = {{"name", it->name}, {"labels", owner}};
    if (!it->ns.empty()) metadata["namespace"] = it->ns;
    objects.push_back({{"apiVersion", kube::api_version(*it)},
                       {"kind", it->kind},
                       {"metadata", std::move(metadata)}});
  }
  std::vector<Live> live = read_live(objects);
  std::vector<PlannedPrune> planned;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    planned.push_back(
        {kube::object_key(objects[i]), prune_action(live[i], owner), live[i] ? *live[i] : json()});
  }
  return planned;
}

std::vector<Applied> Engine::apply(const std::vector<json>& objects, const std::vector<Live>& live,
                                   const std::function<void(const Change&)>& on_change) {
  std::vector<Applied> applied(objects.size());
  auto report = [&](std::size_t i) {
    if (on_change) on_change(applied[i].change);
  };
  if (cluster_.dry_run()) {
    std::vector<PlannedChange> planned = plan(objects, live);
    for (std::size_t i = 0; i < objects.size(); ++i) {
      applied[i] = {{planned[i].key, planned[i].action}, std::move(planned[i].merged)};
      report(i);
    }
    return applied;
  }
  std::vector<json> writes;
  std::vector<std::size_t> write_of;
  std::vector<bool> taken_over(objects.size(), false);
  for (std::size_t i = 0; i < objects.size(); ++i) {
    ObjectKey key = kube::object_key(objects[i]);
    if (is_unchanged(objects[i], live[i])) {
      applied[i] = {{key, Action::Unchanged}, *live[i]};
      continue;
    }
    if (live[i] && take_over(key, *live[i])) {
      taken_over[i] = true;
      progress(display_name(key) + ": taken over from its previous managers");
    }
    writes.push_back(objects[i]);
    write_of.push_back(i);
  }
  std::vector<WriteResult> results;
  if (!writes.empty()) {
    before_request();
    results = cluster_.apply_all(writes, false);
  }
  std::exception_ptr refusal;
  for (std::size_t j = 0; j < results.size(); ++j) {
    std::size_t i = write_of[j];
    ObjectKey key = kube::object_key(objects[i]);
    if (results[j].error) {
      try {
        std::rethrow_exception(results[j].error);
      } catch (const kube::ApiError& error) {
        if (!live[i] || !is_immutable_field(error)) {
          if (!refusal) refusal = results[j].error;
          continue;
        }
      } catch (const Error&) {
        if (!refusal) refusal = results[j].error;
        continue;
      }
      applied[i] = recreate(objects[i]);
      continue;
    }
    Action action = !live[i]        ? Action::Created
                    : taken_over[i] ? Action::Configured
                    : resource_version(*live[i]) == resource_version(results[j].object)
                        ? Action::Unchanged
                        : Action::Configured;
    // An object without managed fields gets them from this write, the
    // fields it had before named before-first-apply's: taken over and
    // applied again, what the object no longer has goes now.
    if (live[i] && take_over(key, results[j].object)) {
      before_request();
      results[j].object = cluster_.apply(objects[i]);
      action = Action::Configured;
    }
    if (key.kind == "Namespace" && key.group.empty()) {
      namespaces_[key.name] = true;
      if (action == Action::Created) empty_namespaces_.insert(key.name);
    }
    empty_namespaces_.erase(key.ns);
    applied[i] = {{key, action}, std::move(results[j].object)};
  }
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (!applied[i].object.is_null()) report(i);
  }
  if (refusal) std::rethrow_exception(refusal);
  return applied;
}

// The take-over patch is guarded by tests of the managed fields entries it
// edits, so that it never overwrites what another manager wrote since. An
// object whose entries moved is read again and the patch made anew: an
// entry's place changes when a status write sorts it past another, and a
// request retried once its first try went through finds the object taken
// over already.
bool Engine::take_over(const ObjectKey& key, json live) {
  std::chrono::milliseconds pause = kFirstPoll;
  for (int tries = 1;; ++tries) {
    json patch = takeover_patch(live, cluster_.field_manager());
    if (patch.is_null()) return tries > 1;
    before_request();
    try {
      cluster_.json_patch(key, patch);
      return true;
    } catch (const kube::ApiError& error) {
      if (!is_invalid(error)) throw;
      before_request();
      std::optional<json> now = cluster_.get(key);
      if (!now) return false;  // deleted meanwhile: the apply creates it
      if (resource_version(*now) == resource_version(live)) throw;  // refused for another reason
      if (tries == kTakeOverTries) {
        throw Error(display_name(key) +
                    ": cannot take it over from its previous managers: it "
                    "changed under each of " +
                    std::to_string(kTakeOverTries) + " tries");
      }
      live = std::move(*now);
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, kPollInterval);
    }
  }
}

// The API server establishes a CRD from a queue fed by its writes; one
// lost from it (the server restarted meanwhile) stays not established, and
// applying it unchanged writes nothing. An annotation set and removed again
// is two writes that change nothing of it, each of which queues it.
void Engine::requeue(const json& crd) {
  ObjectKey key = kube::object_key(crd);
  const json& metadata = crd.value("metadata", json::object());
  bool annotated = metadata.contains("annotations") && metadata["annotations"].is_object();
  // Into the annotations there are, or as the only one.
  std::string path = annotated ? "/metadata/annotations/fluxopctl.controlplane.io~1requeued"
                               : "/metadata/annotations";
  json value =
      annotated ? json("establishing") : json{{std::string(kRequeueAnnotation), "establishing"}};
  try {
    before_request();
    cluster_.json_patch(key, json::array({{{"op", "add"}, {"path", path}, {"value", value}}}));
    before_request();
    cluster_.json_patch(key, json::array({{{"op", "remove"}, {"path", path}}}));
  } catch (const kube::ApiError& error) {
    // Gone meanwhile, or refused: the wait says what stays not established.
    progress(display_name(key) + ": writing it again failed: " + error.what());
  }
}

Applied Engine::recreate(const json& object) {
  ObjectKey key = kube::object_key(object);
  progress(display_name(key) + ": immutable field changed, recreating");
  before_request();
  cluster_.remove(key);
  wait_deleted({key}, "the object to be recreated",
               std::chrono::steady_clock::now() + kRecreateTimeout);
  return {{key, Action::Replaced}, cluster_.apply(object)};
}

void Engine::wait_deleted(const std::vector<ObjectKey>& keys, const std::string& what,
                          std::chrono::steady_clock::time_point deadline, const StillThere& still) {
  std::vector<kube::ListQuery> queries;
  for (const ObjectKey& key : keys) {
    queries.push_back({{key.group, key.version, key.kind, key.ns, ""}, {}, key.name});
  }
  wait_none(queries, what, deadline, still);
}

void Engine::wait_none(const std::vector<kube::ListQuery>& queries, const std::string& what,
                       std::chrono::steady_clock::time_point deadline, const StillThere& still) {
  std::vector<kube::ListQuery> pending = queries;
  std::chrono::milliseconds poll = kFirstPoll;
  WaitScope scope(hooks_.wait_status);
  while (!pending.empty()) {
    before_request();
    std::vector<std::vector<json>> found = cluster_.list_all(pending);
    std::vector<kube::ListQuery> listing;
    std::vector<json> there;
    std::string message, first_hold;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      if (found[i].empty()) continue;
      listing.push_back(pending[i]);
      for (json& object : found[i]) {
        std::string hold = held_by(object);
        if (first_hold.empty()) first_hold = hold;
        message += " " + display_name(kube::object_key(object)) + " (" + hold + ")";
        there.push_back(std::move(object));
      }
    }
    pending = std::move(listing);
    if (pending.empty()) break;
    if (still) still(there);
    waiting(what, display_name(kube::object_key(there.front())) + and_others(there.size()),
            first_hold);
    if (std::chrono::steady_clock::now() >= deadline)
      throw Error("timeout waiting for " + what + ":" + message);
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, kPollInterval);
  }
}

std::vector<Applied> Engine::apply_staged(const std::vector<json>& objects,
                                          const std::vector<Live>& live,
                                          std::chrono::steady_clock::time_point deadline,
                                          const std::function<void(const Change&)>& on_change) {
  std::vector<json> first, rest;
  std::vector<Live> first_live, rest_live;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    bool early = is_first_stage(objects[i]);
    (early ? first : rest).push_back(objects[i]);
    (early ? first_live : rest_live).push_back(live[i]);
  }
  // The rest needs of the first stage only its namespaces and the CRDs of
  // its own custom resources (a sync's GitRepository), established. When
  // the namespaces are there and it has no custom resource of those CRDs,
  // everything goes together.
  std::set<std::string> kinds;
  for (const json& object : rest) {
    ObjectKey key = kube::object_key(object);
    kinds.insert(key.group + "/" + key.kind);
  }
  auto defined_kind = [](const json& crd) {
    const json& spec = crd.value("spec", json::object());
    return spec.value("group", "") + "/" + spec.value("names", json::object()).value("kind", "");
  };
  bool together = std::none_of(first.begin(), first.end(), [&](const json& object) {
    return object.value("kind", "") == "CustomResourceDefinition" &&
           kinds.contains(defined_kind(object));
  });
  for (std::size_t i = 0; i < first.size() && together; ++i) {
    ObjectKey key = kube::object_key(first[i]);
    if (key.kind == "Namespace" && key.group.empty() && first_live[i]) {
      namespaces_[key.name] = true;
    }
  }
  together =
      together && std::all_of(rest.begin(), rest.end(), [this](const json& object) {
        auto known = namespaces_.find(kube::object_key(object).ns);
        return kube::object_key(object).ns.empty() || (known != namespaces_.end() && known->second);
      });
  if (together) return apply(objects, live, on_change);

  std::vector<Applied> applied = apply(first, first_live, on_change);
  std::vector<json> needed;
  for (const Applied& one : applied) {
    if (one.change.ref.kind == "CustomResourceDefinition" &&
        kinds.contains(defined_kind(one.object))) {
      needed.push_back(one.object);
    }
  }
  if (!cluster_.dry_run()) wait_served(needed, "CRDs to be established", deadline);
  if (std::any_of(rest.begin(), rest.end(), [this](const json& object) {
        return !cluster_.has_kind(kube::object_key(object));
      })) {
    cluster_.refresh_kinds();
  }
  std::vector<Applied> more = apply(rest, rest_live, on_change);
  applied.insert(applied.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  return applied;
}

namespace {

// Lists asked for together, each answer handed to where it goes.
struct Reads {
  std::vector<kube::ListQuery> queries;
  std::vector<std::function<void(std::vector<json>)>> into;

  void ask(kube::ListQuery query, std::function<void(std::vector<json>)> then) {
    queries.push_back(std::move(query));
    into.push_back(std::move(then));
  }
};

}  // namespace

std::vector<Diagnosis> Engine::diagnose_pending(const std::vector<json>& deployments) {
  std::vector<Diagnosis> diagnoses(deployments.size());
  if (diagnosis_refused_) return diagnoses;
  std::vector<WorkloadState> states(deployments.size());
  auto read = [this](Reads& reads) {
    if (reads.queries.empty()) return;
    before_request();
    std::vector<std::vector<json>> lists = cluster_.list_all(reads.queries);
    for (std::size_t i = 0; i < lists.size(); ++i) reads.into[i](std::move(lists[i]));
  };
  auto append = [](std::vector<json>& to) {
    return [&to](std::vector<json> found) {
      to.insert(to.end(), std::make_move_iterator(found.begin()),
                std::make_move_iterator(found.end()));
    };
  };
  try {
    // What the Deployment's selector and pod template name, then the
    // events of what is not there yet and the classes its claims ask for.
    Reads owned;
    for (std::size_t d = 0; d < deployments.size(); ++d) {
      WorkloadState& state = states[d];
      state.deployment = deployments[d];
      std::string ns = kube::object_key(state.deployment).ns;
      kube::Labels selector = kube::string_map_at(state.deployment, "/spec/selector/matchLabels");
      if (!selector.empty()) {
        owned.ask({{"", "v1", "Pod", ns, ""}, selector, ""}, append(state.pods));
        owned.ask({{"apps", "v1", "ReplicaSet", ns, ""}, selector, ""}, append(state.replica_sets));
      }
      for (const std::string& claim : claim_names(state.deployment)) {
        owned.ask({{"", "v1", "PersistentVolumeClaim", ns, ""}, {}, claim}, append(state.claims));
      }
      owned.ask({{"", "v1", "Namespace", "", ""}, {}, ns}, [&state](std::vector<json> found) {
        if (!found.empty()) state.ns = std::move(found.front());
      });
    }
    read(owned);
    Reads related;
    for (WorkloadState& state : states) {
      std::string ns = kube::object_key(state.deployment).ns;
      FurtherReads further = further_reads(state, kDiagnosedPods);
      for (const std::string& uid : further.event_subjects) {
        related.ask({{"", "v1", "Event", ns, ""}, {}, "", "involvedObject.uid=" + uid},
                    append(state.events));
      }
      for (const std::string& name : further.storage_classes) {
        related.ask({{"storage.k8s.io", "v1", "StorageClass", "", ""}, {}, name},
                    append(state.storage_classes));
      }
    }
    read(related);
  } catch (const kube::ApiError& error) {
    // Not allowed to read pods or events: the wait goes on as before,
    // without asking again.
    if (!is_not_allowed(error)) throw;
    diagnosis_refused_ = true;
    return diagnoses;
  }
  for (std::size_t d = 0; d < states.size(); ++d) diagnoses[d] = diagnose(states[d]);
  return diagnoses;
}

void Engine::wait(const std::vector<json>& objects, const std::string& what,
                  std::chrono::steady_clock::time_point deadline) {
  std::vector<json> pending;
  for (const json& object : objects) {
    if (health_checked(object)) pending.push_back(object);
  }
  if (pending.empty()) return;
  progress("waiting for " + what + " (" + count_of(pending.size(), "object") + ")");
  WaitScope scope(hooks_.wait_status);
  std::map<std::string, std::string> reasons;
  std::map<std::string, std::string> causes;  // the diagnoses last reported, by name
  auto next_diagnosis = std::chrono::steady_clock::now() + kDiagnosisInterval;
  auto requeue_at = std::chrono::steady_clock::now() + kEstablishGrace;
  std::set<std::string> requeued;  // the CRDs written to be established again
  std::chrono::milliseconds poll = kFirstPoll;
  // Since when no Deployment is pending (max: not yet): the untouched
  // objects' grace.
  constexpr auto kNotYet = std::chrono::steady_clock::time_point::max();
  auto rolled_out = kNotYet;
  while (!pending.empty()) {
    std::vector<Live> live = read_live(pending);
    std::vector<json> still;
    std::vector<json> pending_deployments;  // live
    std::vector<json> establishing;         // live CRDs not established after the grace
    // It was applied: gone now, it was deleted, and will not come back.
    std::vector<Health> healths;
    bool deployments_pending = false;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      healths.push_back(live[i] ? object_health(*live[i])
                                : Health{false, true, "deleted while waiting"});
      deployments_pending =
          deployments_pending ||
          (kube::object_key(pending[i]).kind == "Deployment" && live[i] && !healths.back().ready);
    }
    if (deployments_pending) rolled_out = kNotYet;
    if (!deployments_pending && rolled_out == kNotYet)
      rolled_out = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < pending.size(); ++i) {
      ObjectKey key = kube::object_key(pending[i]);
      const Health& health = healths[i];
      if (health.untouched && rolled_out != kNotYet &&
          std::chrono::steady_clock::now() - rolled_out >= kUntouchedGrace) {
        progress("warning: " + display_name(key) + " was not reconciled by any controller " +
                 std::to_string(kUntouchedGrace.count()) +
                 "s after the controllers rolled out: not waited for (is its controller "
                 "installed and running?)");
        continue;
      }
      if (health.ready) {
        if (key.kind == "Deployment") progress(display_name(key) + " " + health.message);
        continue;
      }
      if (health.failed) throw Error(display_name(key) + ": " + health.message);
      reasons[display_name(key)] = health.message;
      still.push_back(pending[i]);
      if (key.kind == "Deployment") pending_deployments.push_back(*live[i]);
      if (key.kind == "CustomResourceDefinition" && !requeued.contains(display_name(key)) &&
          std::chrono::steady_clock::now() >= requeue_at)
        establishing.push_back(*live[i]);
    }
    pending = std::move(still);
    if (pending.empty()) break;
    for (const json& crd : establishing) {
      std::string name = display_name(kube::object_key(crd));
      requeued.insert(name);
      progress(name + " is not established after " + std::to_string(kEstablishGrace.count()) +
               "s (" + reasons[name] + "): written again to requeue it");
      requeue(crd);
    }
    if (!pending_deployments.empty() && std::chrono::steady_clock::now() >= next_diagnosis) {
      std::vector<Diagnosis> diagnoses = diagnose_pending(pending_deployments);
      for (std::size_t d = 0; d < diagnoses.size(); ++d) {
        std::string name = display_name(kube::object_key(pending_deployments[d]));
        const Diagnosis& diagnosis = diagnoses[d];
        if (diagnosis.permanent) throw Error(name + ": " + reasons[name] + ": " + diagnosis.cause);
        if (!hooks_.wait_status && !diagnosis.cause.empty() && diagnosis.cause != causes[name])
          progress(name + " pending (" + reasons[name] + "): " + diagnosis.cause);
        causes[name] = diagnosis.cause;
      }
      next_diagnosis = std::chrono::steady_clock::now() + kDiagnosisInterval;
    }
    // The first pending object with a cause said, else the first.
    std::string shown = display_name(kube::object_key(pending.front()));
    for (const json& object : pending) {
      std::string name = display_name(kube::object_key(object));
      if (!causes[name].empty()) {
        shown = name;
        break;
      }
    }
    waiting(what, shown + " pending (" + reasons[shown] + ")" + and_others(pending.size()),
            causes[shown]);
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string message = "timeout waiting for";
      for (const json& object : pending) {
        std::string name = display_name(kube::object_key(object));
        std::string cause = causes[name].empty() ? "" : ": " + causes[name];
        message += " " + name + " (" + reasons[name] + cause + ")";
      }
      throw Error(message);
    }
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, kPollInterval);
  }
}

void Engine::wait_served(const std::vector<json>& crds, const std::string& what,
                         std::chrono::steady_clock::time_point deadline) {
  std::vector<json> establishing;  // as applied: most are established at once
  std::copy_if(crds.begin(), crds.end(), std::back_inserter(establishing),
               [](const json& crd) { return !object_health(crd).ready; });
  wait(establishing, what, deadline);
  std::vector<ObjectKey> kinds;
  for (const json& crd : crds) {
    const json& spec = crd.value("spec", json::object());
    std::string group = spec.value("group", "");
    std::string kind = spec.value("names", json::object()).value("kind", "");
    for (const json& version : spec.value("versions", json::array())) {
      if (version.is_object() && version.value("served", false))
        kinds.push_back({group, version.value("name", ""), kind, "", ""});
    }
  }
  std::chrono::milliseconds poll = kFirstPoll;
  WaitScope scope(hooks_.wait_status);
  while (true) {
    std::string missing;
    for (const ObjectKey& kind : kinds) {
      if (!cluster_.has_kind(kind))
        missing += " " + kind.group + "/" + kind.version + " " + kind.kind;
    }
    if (missing.empty()) return;
    if (std::chrono::steady_clock::now() >= deadline)
      throw Error("timeout waiting for " + what + ": discovery does not serve" + missing);
    waiting(what, "discovery does not serve" + missing, "");
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, kPollInterval);
    before_request();
    cluster_.refresh_kinds();
  }
}

std::vector<Change> Engine::prune(const std::vector<ObjectKey>& stale, const Owner& owner,
                                  const std::function<void(const Change&)>& on_change) {
  std::vector<Change> changes;
  for (const PlannedPrune& planned : plan_prune(stale, owner)) {
    if (planned.action == PruneAction::Gone) continue;
    Action action = Action::Skipped;
    if (planned.action == PruneAction::Delete) {
      before_request();
      if (!cluster_.remove(planned.key)) continue;
      action = Action::Deleted;
    }
    changes.push_back({planned.key, action});
    if (on_change) on_change(changes.back());
  }
  return changes;
}

}  // namespace fluxop::ssa
