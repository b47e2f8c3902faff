#include "core/status/overview.h"

#include <algorithm>
#include <tuple>

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
