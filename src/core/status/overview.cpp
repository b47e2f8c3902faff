#include "core/status/overview.h"

#include <algorithm>
#include <tuple>

#include "core/display.h"
#include "core/enum_table.h"
#include "core/kube/meta.h"
#include "core/report/report.h"

namespace fluxop::status {

namespace {

constexpr EnumName<Health> kHealths[] = {{Health::unreachable, "unreachable"},
                                         {Health::not_ready, "not ready"},
                                         {Health::failing, "failing"},
                                         {Health::suspended, "suspended"},
                                         {Health::healthy, "healthy"}};
static_assert(covers_enum(kHealths));

}  // namespace

InstanceState instance_state(const nlohmann::json* live) {
  InstanceState state;
  if (!live) return state;
  state.found = true;
  state.ns = kube::text_at(*live, "/metadata/namespace");
  state.name = kube::text_at(*live, "/metadata/name");
  if (const nlohmann::json* ready = kube::condition_at(*live, "Ready")) {
    state.ready = kube::string_member(*ready, "status");
    state.reason = kube::string_member(*ready, "reason");
    state.message = kube::string_member(*ready, "message");
    if (state.ready.empty()) state.ready = "Unknown";
  }
  state.version_range = kube::text_at(*live, "/spec/distribution/version");
  state.artifact = kube::text_at(*live, "/spec/distribution/artifact");
  state.last_applied_revision = kube::text_at(*live, "/status/lastAppliedRevision");
  state.last_artifact_revision = kube::text_at(*live, "/status/lastArtifactRevision");
  state.inventory_size = kube::array_at(*live, "/status/inventory/entries").size();
  state.last_handled_request = kube::text_at(*live, "/status/lastHandledReconcileAt");
  const nlohmann::json& history = kube::array_at(*live, "/status/history");
  if (!history.empty())
    state.last_reconciled = kube::string_member(history.front(), "lastReconciled");
  state.suspended = report::reconcile_disabled(*live);
  return state;
}

std::vector<ObjectEvent> object_events(kube::Cluster& cluster, const kube::ObjectKey& ref) {
  std::vector<ObjectEvent> events;
  kube::ListQuery query{{"", "v1", "Event", ref.ns, ""},
                        {},
                        "",
                        "involvedObject.kind=" + ref.kind + ",involvedObject.name=" + ref.name};
  std::vector<std::vector<nlohmann::json>> lists = cluster.list_all({query});
  for (const nlohmann::json& event : lists.front()) {
    ObjectEvent shown;
    // An Event of the events.k8s.io API has an eventTime and a series
    // instead of the core API's timestamps and count.
    for (const char* pointer : {"/lastTimestamp", "/series/lastObservedTime", "/eventTime",
                                "/metadata/creationTimestamp"}) {
      shown.last_seen = kube::text_at(event, pointer);
      if (!shown.last_seen.empty()) break;
    }
    shown.type = kube::text_at(event, "/type");
    shown.reason = kube::text_at(event, "/reason");
    shown.message = printable_within(kube::text_at(event, "/message"), report::kMaxResourceMessage);
    shown.count = kube::integer_at(event, "/count").value_or(1);
    events.push_back(std::move(shown));
  }
  // RFC 3339 in UTC sorts as time does; a second's ties keep the list's order.
  std::stable_sort(events.begin(), events.end(), [](const ObjectEvent& a, const ObjectEvent& b) {
    return a.last_seen > b.last_seen;
  });
  if (events.size() > kMaxObjectEvents) events.resize(kMaxObjectEvents);
  return events;
}

nlohmann::json events_json(const std::vector<ObjectEvent>& events) {
  nlohmann::json shown = nlohmann::json::array();
  for (const ObjectEvent& event : events) {
    shown.push_back({{"lastSeen", event.last_seen},
                     {"type", event.type},
                     {"reason", event.reason},
                     {"count", event.count},
                     {"message", event.message}});
  }
  return shown;
}

ReconcilerTotals reconciler_totals(const report::ReportSpec& spec) {
  ReconcilerTotals totals;
  for (const report::Reconciler& reconciler : spec.reconcilers) {
    totals.running += reconciler.stats.running;
    totals.failing += reconciler.stats.failing;
    totals.suspended += reconciler.stats.suspended;
  }
  return totals;
}

Health health(const ClusterOverview& cluster) {
  if (!cluster.error.empty() || !cluster.report) return Health::unreachable;
  if (!cluster.instance.found || cluster.instance.ready != "True") return Health::not_ready;
  for (const report::Component& component : cluster.report->components) {
    if (!component.ready) return Health::not_ready;
  }
  ReconcilerTotals totals = reconciler_totals(*cluster.report);
  if (totals.failing > 0) return Health::failing;
  if (cluster.instance.suspended || totals.suspended > 0) return Health::suspended;
  return Health::healthy;
}

std::string_view health_name(Health health) { return enum_row(kHealths, health).name; }

void sort_worst_first(std::vector<ClusterOverview>& clusters) {
  auto key = [](const ClusterOverview& cluster) {
    int failing = cluster.report ? reconciler_totals(*cluster.report).failing : 0;
    return std::tuple<Health, int, const std::string&>(health(cluster), -failing, cluster.context);
  };
  std::stable_sort(
      clusters.begin(), clusters.end(),
      [&](const ClusterOverview& a, const ClusterOverview& b) { return key(a) < key(b); });
}

}  // namespace fluxop::status
