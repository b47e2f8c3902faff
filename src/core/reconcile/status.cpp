#include "core/reconcile/status.h"

#include <algorithm>

#include "core/duration.h"
#include "core/redact.h"

namespace fluxop::reconcile {

Reason reason(Failure failure) {
  switch (failure) {
    case Failure::disabled:
      return Reason::reconciliation_disabled;
    case Failure::reconciliation:
      return Reason::reconciliation_failed;
    case Failure::health_check:
      return Reason::health_check_failed;
    case Failure::build:
      return Reason::build_failed;
    case Failure::artifact:
      return Reason::artifact_failed;
  }
  return Reason::reconciliation_failed;
}

using nlohmann::json;

namespace {

constexpr std::size_t kHistoryLimit = 5;

json& array_field(json& object, const char* name) {
  if (!object.contains(name) || !object[name].is_array()) object[name] = json::array();
  return object[name];
}

// A Docker Hub image named without its registry is index.docker.io's, in
// "library/" when it has one path element, as go-containerregistry reads it.
std::string full_repository(std::string repository) {
  std::size_t slash = repository.find('/');
  std::string first = repository.substr(0, slash);
  bool has_registry = slash != std::string::npos &&
                      (first.find_first_of(".:") != std::string::npos || first == "localhost");
  if (has_registry) return repository;
  return "index.docker.io/" + std::string(slash == std::string::npos ? "library/" : "") +
         repository;
}

// "ghcr.io/fluxcd/source-controller:v1.7.4@sha256:..." split into its parts.
json image_component(const std::string& component, const std::string& image) {
  std::string repository = image;
  std::string digest;
  std::string tag = "latest";
  if (std::size_t at = repository.find('@'); at != std::string::npos) {
    digest = repository.substr(at + 1);
    repository.resize(at);
  }
  if (std::size_t colon = repository.rfind(':');
      colon != std::string::npos && repository.find('/', colon) == std::string::npos) {
    tag = repository.substr(colon + 1);
    repository.resize(colon);
  }
  json entry = {{"name", component}, {"repository", full_repository(repository)}, {"tag", tag}};
  if (!digest.empty()) entry["digest"] = digest;
  return entry;
}

}  // namespace

void set_condition(json& status, const Condition& condition, std::int64_t generation,
                   const std::string& now) {
  json& conditions = array_field(status, "conditions");
  json entry = {{"type", condition.type},           {"status", condition.status},
                {"observedGeneration", generation}, {"lastTransitionTime", now},
                {"reason", name(condition.reason)}, {"message", redact_secrets(condition.message)}};
  for (json& existing : conditions) {
    if (existing.value("type", "") != condition.type) continue;
    if (existing.value("status", "") == condition.status && existing.contains("lastTransitionTime"))
      entry["lastTransitionTime"] = existing["lastTransitionTime"];
    existing = std::move(entry);
    return;
  }
  conditions.push_back(std::move(entry));
}

void remove_condition(json& status, std::string_view type) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) return;
  json& conditions = status["conditions"];
  conditions.erase(std::remove_if(conditions.begin(), conditions.end(),
                                  [&](const json& c) { return c.value("type", "") == type; }),
                   conditions.end());
}

void record_history(json& status, const Attempt& attempt) {
  json& history = array_field(status, "history");
  std::string duration = format_go_duration(attempt.duration);
  json entry = {{"digest", attempt.digest},
                {"firstReconciled", attempt.finished},
                {"lastReconciled", attempt.finished},
                {"lastReconciledDuration", duration},
                {"lastReconciledStatus", name(attempt.reason)},
                {"totalReconciliations", 1},
                {"metadata", {{"flux", attempt.flux_version}}}};
  for (auto it = history.begin(); it != history.end(); ++it) {
    if (it->value("digest", "") != attempt.digest ||
        it->value("lastReconciledStatus", "") != name(attempt.reason))
      continue;
    entry["firstReconciled"] = it->value("firstReconciled", attempt.finished);
    entry["totalReconciliations"] = it->value("totalReconciliations", 0) + 1;
    history.erase(it);
    break;
  }
  history.insert(history.begin(), std::move(entry));
  if (history.size() > kHistoryLimit) history.erase(history.begin() + kHistoryLimit, history.end());
}

json components_status(const std::vector<json>& objects,
                       const std::vector<std::string>& components) {
  json status = json::array();
  for (const std::string& component : components) {
    for (const json& object : objects) {
      if (object.value("kind", "") != "Deployment" ||
          object.value("metadata", json::object()).value("name", "") != component)
        continue;
      json::json_pointer containers("/spec/template/spec/containers");
      if (!object.contains(containers) || !object.at(containers).is_array()) continue;
      for (const json& container : object.at(containers)) {
        if (container.value("name", "") == "manager" && container.contains("image") &&
            container["image"].is_string()) {
          status.push_back(image_component(component, container["image"]));
          break;
        }
      }
      break;
    }
  }
  return status;
}

}  // namespace fluxop::reconcile
