#include "core/ssa/engine.h"

#include <algorithm>
#include <cctype>
#include <thread>

#include "core/error.h"
#include "core/ssa/errors.h"
#include "core/ssa/health.h"
#include "core/ssa/takeover.h"

namespace fluxop::ssa {

using nlohmann::json;

namespace {

constexpr std::chrono::milliseconds kPollInterval{500};
constexpr std::chrono::seconds kRecreateTimeout{60};

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

PruneAction prune_action(const std::optional<json>& live, const Owner& owner) {
  if (!live) return PruneAction::Gone;
  json metadata = live->value("metadata", json::object());
  json labels = metadata.value("labels", json::object());
  json annotations = metadata.value("annotations", json::object());
  for (const auto& [key, value] : owner) {
    if (!labels.is_object() || labels.value(key, "") != value) return PruneAction::Keep;
  }
  if (annotations.is_object() &&
      lowercase(annotations.value("fluxcd.controlplane.io/prune", "")) == "disabled") {
    return PruneAction::Keep;
  }
  return PruneAction::Delete;
}

bool is_first_stage(const json& object) {
  std::string kind = object.value("kind", "");
  return kind == "CustomResourceDefinition" || kind == "Namespace";
}

Engine::Engine(ClusterApi& cluster, EngineHooks hooks)
    : cluster_(cluster), hooks_(std::move(hooks)) {}

void Engine::before_request() const {
  if (hooks_.before_request) hooks_.before_request();
}

void Engine::progress(const std::string& line) const {
  if (hooks_.on_progress) hooks_.on_progress(line);
}

bool Engine::namespace_exists(const std::string& ns) {
  auto known = namespaces_.find(ns);
  if (known != namespaces_.end()) return known->second;
  bool exists = cluster_.get({"", "v1", "Namespace", "", ns}).has_value();
  namespaces_[ns] = exists;
  return exists;
}

PlannedChange Engine::plan(const json& object) {
  before_request();
  ObjectKey key = kube::object_key(object);
  // A dry run cannot place an object whose kind or namespace does not exist
  // yet (a first install): it would be created as it is.
  if (!cluster_.has_kind(key)) return {key, Action::Created, json(), object};
  std::optional<json> live = cluster_.get(key);
  if (!live && !key.ns.empty() && !namespace_exists(key.ns)) {
    return {key, Action::Created, json(), object};
  }
  json merged;
  try {
    merged = cluster_.apply_dry_run(object);
  } catch (const kube::ApiError& error) {
    if (live && is_immutable_field(error)) return {key, Action::Replaced, *live, object};
    throw;
  }
  if (!live) return {key, Action::Created, json(), std::move(merged)};
  // A no-op apply leaves the object as it is, managed fields included;
  // other managers' traces are a change of ownership still to make.
  bool unchanged = merged == *live && takeover_patch(*live).is_null();
  return {key, unchanged ? Action::Unchanged : Action::Configured, *live, std::move(merged)};
}

std::vector<PlannedPrune> Engine::plan_prune(const std::vector<ObjectKey>& stale,
                                             const Owner& owner) {
  std::vector<PlannedPrune> planned;
  for (auto it = stale.rbegin(); it != stale.rend(); ++it) {
    before_request();
    planned.push_back({*it, prune_action(cluster_.get(*it), owner)});
  }
  return planned;
}

Change Engine::apply(const json& object) {
  PlannedChange planned = plan(object);
  if (planned.action == Action::Unchanged || cluster_.dry_run()) {
    return {planned.key, planned.action};
  }
  if (planned.action == Action::Replaced) return recreate(object);
  if (!planned.live.is_null()) {
    if (json patch = takeover_patch(planned.live); !patch.is_null()) {
      before_request();
      cluster_.json_patch(planned.key, patch);
      progress(display_name(planned.key) + ": taken over from its previous managers");
    }
  }
  before_request();
  cluster_.apply(object);
  if (planned.key.kind == "Namespace" && planned.key.group.empty()) {
    namespaces_[planned.key.name] = true;
  }
  return {planned.key, planned.action};
}

Change Engine::recreate(const json& object) {
  ObjectKey key = kube::object_key(object);
  progress(display_name(key) + ": immutable field changed, recreating");
  before_request();
  cluster_.remove(key);
  auto gone_by = std::chrono::steady_clock::now() + kRecreateTimeout;
  while (cluster_.get(key)) {
    if (std::chrono::steady_clock::now() > gone_by) {
      throw Error(display_name(key) + ": still terminating after 60s; cannot recreate it");
    }
    std::this_thread::sleep_for(kPollInterval);
    before_request();
  }
  cluster_.apply(object);
  return {key, Action::Replaced};
}

std::vector<Change> Engine::apply_staged(const std::vector<json>& objects,
                                         std::chrono::steady_clock::time_point deadline,
                                         const std::function<void(const Change&)>& on_change) {
  std::vector<json> first;
  std::vector<json> rest;
  for (const json& object : objects) (is_first_stage(object) ? first : rest).push_back(object);
  std::vector<Change> changes;
  auto apply_all = [&](const std::vector<json>& stage) {
    for (const json& object : stage) {
      changes.push_back(apply(object));
      if (on_change) on_change(changes.back());
    }
  };
  apply_all(first);
  if (!cluster_.dry_run()) wait(first, "CRDs to be established", deadline);
  cluster_.refresh_kinds();
  apply_all(rest);
  return changes;
}

void Engine::wait(const std::vector<json>& objects, const std::string& what,
                  std::chrono::steady_clock::time_point deadline) {
  std::vector<ObjectKey> pending;
  for (const json& object : objects) {
    if (health_checked(object.value("kind", ""))) pending.push_back(kube::object_key(object));
  }
  if (pending.empty()) return;
  progress("waiting for " + what + " (" + std::to_string(pending.size()) + " objects)");
  std::map<std::string, std::string> reasons;
  while (!pending.empty()) {
    std::vector<ObjectKey> still;
    for (const ObjectKey& key : pending) {
      before_request();
      std::optional<json> live = cluster_.get(key);
      // It was applied: gone now, it was deleted, and will not come back.
      Health health = live ? object_health(*live) : Health{false, true, "deleted while waiting"};
      if (health.ready) {
        if (key.kind == "Deployment") progress(display_name(key) + " " + health.message);
        continue;
      }
      if (health.failed) throw Error(display_name(key) + ": " + health.message);
      reasons[display_name(key)] = health.message;
      still.push_back(key);
    }
    pending = std::move(still);
    if (pending.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string message = "timeout waiting for";
      for (const ObjectKey& key : pending) {
        message += " " + display_name(key) + " (" + reasons[display_name(key)] + ")";
      }
      throw Error(message);
    }
    std::this_thread::sleep_for(kPollInterval);
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
