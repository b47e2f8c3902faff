#include "core/reconcile/instance_requests.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <thread>

#include "core/enum_table.h"
#include "core/error.h"
#include "core/kube/lease.h"
#include "core/kube/meta.h"
#include "core/reason.h"
#include "core/reconcile/instance_object.h"
#include "core/ssa/health.h"

namespace fluxop::reconcile {

using kube::pointer_token;
using nlohmann::json;

namespace {

// A wait polls this often once the first readings showed nothing yet.
constexpr std::chrono::milliseconds kPollInterval{2000};
constexpr std::chrono::milliseconds kFirstPoll{250};

const json& metadata_of(const json& object) {
  static const json empty = json::object();
  auto found = object.find("metadata");
  return found != object.end() && found->is_object() ? *found : empty;
}

// The components of the instance's inventory that are not rolled out.
std::string components_not_ready(kube::Cluster& cluster, const json& live) {
  std::string text;
  for (const kube::ObjectKey& ref :
       read_inventory(live.value("status", json::object()).value("inventory", json::object()))) {
    if (ref.group != "apps" || ref.kind != "Deployment") continue;
    std::optional<json> deployment = cluster.get(ref);
    std::string why = deployment ? ssa::object_health(*deployment).message : "not found";
    if (deployment && ssa::object_health(*deployment).ready) continue;
    text += (text.empty() ? "" : ", ") + display_name(ref) + " (" + why + ")";
  }
  return text;
}

}  // namespace

namespace {

const kube::Labels kOperatorLabels = {{"app.kubernetes.io/name", "flux-operator"}};
const kube::Labels kDaemonLabels = {{"app.kubernetes.io/name", "fluxopctl"}};

// A Deployment scaled to zero runs nothing.
bool has_replicas(const json& deployment) {
  json spec = deployment.value("spec", json::object());
  json replicas = spec.is_object() ? spec.value("replicas", json(1)) : json(1);
  return replicas.is_number_integer() && replicas.get<std::int64_t>() > 0;
}

}  // namespace

std::vector<std::string> running_operators(kube::Cluster& cluster, const std::string& ns) {
  std::vector<std::string> running;
  for (const json& deployment : cluster.list({"apps", "v1", "Deployment", ns, ""}, kOperatorLabels))
    if (has_replicas(deployment)) running.push_back(display_name(kube::object_key(deployment)));
  return running;
}

std::optional<std::string> find_reconciler(kube::Cluster& cluster, const std::string& ns) {
  kube::ObjectKey lease = kube::lease_key(ns, "");
  kube::ObjectKey deployment{"apps", "v1", "Deployment", ns, ""};
  std::vector<std::vector<json>> found;
  try {
    found = cluster.list_all({{lease, {}, std::string(kOperatorLease)},
                              {lease, {}, std::string(kWatchLease)},
                              {deployment, kOperatorLabels, ""},
                              {deployment, kDaemonLabels, ""}});
  } catch (const kube::ApiError& e) {
    if (e.status() == 401 || e.status() == 403) return std::nullopt;
    throw;
  }
  // A holder that stopped renewing is gone (a few seconds allowed for the
  // clocks of two hosts).
  auto now = std::chrono::system_clock::now() - std::chrono::seconds(5);
  for (std::size_t i = 0; i < 2; ++i) {
    for (const json& held : found[i]) {
      kube::LeaseRecord record = kube::lease_record(held);
      if (!record.holder.empty() &&
          kube::parse_micro_time(record.renew_time) + record.duration >= now)
        return display_name(kube::object_key(held)) + " (held by " + record.holder + ")";
    }
  }
  for (std::size_t i = 2; i < found.size(); ++i) {
    for (const json& running : found[i])
      if (has_replicas(running)) return display_name(kube::object_key(running));
  }
  return "";
}

std::string request_time(std::chrono::system_clock::time_point now) {
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch());
  std::time_t seconds = static_cast<std::time_t>(nanos.count() / 1'000'000'000);
  long long fraction = nanos.count() % 1'000'000'000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::string time(text, n);
  if (fraction > 0) {
    std::snprintf(text, sizeof text, ".%09lld", fraction);
    std::string digits = text;
    digits.erase(digits.find_last_not_of('0') + 1);
    time += digits;
  }
  return time + "Z";
}

namespace {

// What each request did.
constexpr EnumName<InstanceRequest> kRequests[] = {
    {InstanceRequest::reconcile, "requested"},
    {InstanceRequest::suspend, "suspended"},
    {InstanceRequest::resume, "resumed"},
};
static_assert(covers_enum(kRequests));

}  // namespace

std::string_view request_done(InstanceRequest request) { return enum_row(kRequests, request).name; }

std::map<std::string, std::string> request_annotations(InstanceRequest request,
                                                       const std::string& now, bool force) {
  std::map<std::string, std::string> annotations;
  if (request == InstanceRequest::suspend) {
    annotations[std::string(kReconcileAnnotation)] = "disabled";
    return annotations;
  }
  annotations[std::string(kRequestedAtAnnotation)] = now;
  if (force) annotations[std::string(kForceAtAnnotation)] = now;
  if (request == InstanceRequest::resume)
    annotations[std::string(kReconcileAnnotation)] = "enabled";
  return annotations;
}

bool request_answered(InstanceRequest request) { return request != InstanceRequest::suspend; }

std::string nothing_reconciles(kube::Cluster& cluster, const kube::ObjectKey& ref) {
  std::optional<std::string> reconciler = find_reconciler(cluster, ref.ns);
  if (!reconciler || !reconciler->empty()) return "";
  return display_name(ref) + ": nothing reconciles it (no operator Deployment in " + ref.ns +
         ", no Lease " + ref.ns + "/" + std::string(kOperatorLease) + " or " + ref.ns + "/" +
         std::string(kWatchLease) +
         " renewed by `fluxopctl apply --watch`): the request waits for one; to reconcile now, "
         "run `fluxopctl apply FILE`, or start `fluxopctl apply --watch --from-cluster -n " +
         ref.ns + "`";
}

void annotate_instance(kube::Cluster& cluster, const kube::ObjectKey& ref,
                       const std::map<std::string, std::string>& annotations) {
  std::optional<json> live = get_live_instance(cluster, ref);
  if (!live) throw Error(display_name(ref) + ": not found");
  json patch = json::array();
  // The resourceVersion read: a concurrent write makes the patch fail
  // rather than be applied to what was not read.
  patch.push_back({{"op", "test"},
                   {"path", "/metadata/resourceVersion"},
                   {"value", metadata_of(*live).value("resourceVersion", "")}});
  if (!metadata_of(*live).contains("annotations")) {
    patch.push_back({{"op", "add"}, {"path", "/metadata/annotations"}, {"value", annotations}});
  } else {
    for (const auto& [key, value] : annotations) {
      patch.push_back({{"op", "add"},
                       {"path", "/metadata/annotations/" + pointer_token(key)},
                       {"value", value}});
    }
  }
  cluster.json_patch(ref, patch);
}

void mark_handled(json& status, const std::map<std::string, std::string>& annotations,
                  bool migrated) {
  for (auto [annotation, handled] : {std::pair{kRequestedAtAnnotation, "lastHandledReconcileAt"},
                                     std::pair{kForceAtAnnotation, "lastHandledForceAt"}}) {
    if (annotation == kForceAtAnnotation && !migrated) continue;
    auto found = annotations.find(std::string(annotation));
    if (found != annotations.end() && !found->second.empty()) status[handled] = found->second;
  }
}

std::map<std::string, std::string> annotations_of(const json& object) {
  std::map<std::string, std::string> annotations;
  json all = metadata_of(object).value("annotations", json::object());
  for (const auto& [key, value] : all.items()) {
    if (value.is_string()) annotations[key] = value.get<std::string>();
  }
  return annotations;
}

bool reconcile_disabled(const std::map<std::string, std::string>& annotations) {
  auto found = annotations.find(std::string(kReconcileAnnotation));
  return found != annotations.end() && kube::equal_fold(found->second, "disabled");
}

bool reconcile_disabled(const json& object) {
  return kube::annotation_is(object, kReconcileAnnotation, "disabled");
}

Readiness instance_readiness(const json& live, const std::string& requested_at) {
  using State = Readiness::State;
  std::string name = metadata_of(live).value("name", "");
  if (reconcile_disabled(live)) return {State::failed, "Reconciliation is disabled for " + name};
  // Being uninstalled, it is never to be ready again.
  if (metadata_of(live).contains("deletionTimestamp"))
    return {State::failed, "being deleted since " +
                               metadata_of(live).value("deletionTimestamp", "") + ": uninstalling"};
  if (!requested_at.empty()) {
    std::string handled = live.value("status", json::object()).value("lastHandledReconcileAt", "");
    if (handled != requested_at)
      return {State::waiting, "the reconcile requested at " + requested_at + " is not handled yet"};
  }
  const json* ready = kube::condition_at(live, "Ready");
  if (!ready) return {State::waiting, "no Ready condition yet"};
  std::int64_t generation = metadata_of(live).value("generation", std::int64_t{0});
  if (ready->value("observedGeneration", std::int64_t{0}) != generation)
    return {State::waiting, "generation " + std::to_string(generation) + " not reconciled yet"};
  std::string status = ready->value("status", "");
  std::string reason = ready->value("reason", "");
  std::string message = ready->value("message", "");
  if (status == "True") return {State::ready, message};
  if (status == "False" && reason != fluxop::name(Reason::health_check_canceled))
    return {State::failed, reason + ": " + message};
  return {State::waiting, (reason.empty() ? "" : reason + ": ") + message};
}

std::string wait_ready(kube::Cluster& cluster, const kube::ObjectKey& ref,
                       const std::string& requested_at,
                       std::chrono::steady_clock::time_point deadline,
                       const std::function<std::string()>& interruption, WaitStatus* status) {
  std::chrono::milliseconds poll = kFirstPoll;
  WaitScope scope(status);
  const std::string what =
      display_name(ref) + (requested_at.empty() ? " to be ready" : " to be reconciled");
  for (;;) {
    if (std::string stopped = interruption ? interruption() : ""; !stopped.empty())
      throw Error(stopped);
    std::optional<json> live = get_live_instance(cluster, ref);
    Readiness readiness = live ? instance_readiness(*live, requested_at)
                               : Readiness{Readiness::State::waiting, "not found"};
    if (readiness.state == Readiness::State::ready) return readiness.message;
    if (readiness.state == Readiness::State::failed)
      throw Error(display_name(ref) + ": " + readiness.message);
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string components = live ? components_not_ready(cluster, *live) : "";
      throw Error("timeout waiting for " + display_name(ref) + " to be ready: " +
                  readiness.message + (components.empty() ? "" : "; not ready: " + components));
    }
    if (status) status->waiting(what, "", readiness.message);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    std::this_thread::sleep_for(std::clamp(left, std::chrono::milliseconds(0), poll));
    poll = std::min(poll * 2, kPollInterval);
  }
}

}  // namespace fluxop::reconcile
