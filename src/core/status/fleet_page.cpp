#include "core/status/fleet_page.h"

#include <algorithm>

#include "core/plural.h"
#include "core/status/page_parts.h"

namespace fluxop::status {

namespace {

// A row of what only the instance's reconciler knows: none in the fleet
// file, where nothing says it.
Html known_row(Markup name, const std::string& value) {
  Html html;
  if (!value.empty()) html << "<tr><th>" << name << "</th>" << cell(value) << "</tr>";
  return html;
}

// A newer version in range, flagged; "none" and "unknown" as they are.
Html newer_cell(const std::string& newer) {
  Html html;
  if (newer.starts_with("v"))
    html << "<td class=\"suspended\">" << text(newer) << "</td>";
  else
    html << cell(newer);
  return html;
}

Html instance_table(const InstanceState& instance, const report::ReportSpec& spec) {
  Html html;
  html << "<h3>FluxInstance</h3>";
  if (!instance.found) {
    html << "<p class=\"not-ready\">No FluxInstance.</p>";
    return html;
  }
  html << "<div class=\"scroll\"><table class=\"instance\"><tbody>"
       << "<tr><th>Flux</th>" << cell(spec.distribution.version) << "</tr>"
       << "<tr><th>Version range</th>" << cell(instance.version_range) << "</tr>"
       << "<tr><th>Artifact</th>" << cell(instance.artifact) << "</tr>"
       << "<tr><th>Artifact revision</th>" << cell(instance.last_artifact_revision) << "</tr>"
       << "<tr><th>Ready</th>" << status_cell(instance.ready) << "</tr>"
       << "<tr><th>Reason</th>" << cell(instance.reason) << "</tr>"
       << "<tr><th>Message</th>" << message_cell(instance.message) << "</tr>"
       << "<tr><th>Suspended</th>" << cell(instance.suspended ? "yes" : "no") << "</tr>"
       << "<tr><th>Last applied revision</th>" << cell(instance.last_applied_revision) << "</tr>"
       << "<tr><th>Last reconcile</th>" << cell(instance.last_reconciled) << "</tr>"
       << "<tr><th>Last handled request</th>" << cell(instance.last_handled_request) << "</tr>"
       << known_row("Next reconcile", instance.next_reconcile)
       << known_row("Signatures", instance.verification) << "<tr><th>Inventory</th>"
       << number_cell(static_cast<std::int64_t>(instance.inventory_size))
       << "</tr></tbody></table></div>";
  return html;
}

Html components_table(const report::ReportSpec& spec) {
  Html rows;
  for (const report::Component& component : spec.components) {
    rows << "<tr>" << cell(component.name) << yes_no_cell(component.ready)
         << message_cell(component.status) << cell(component.image) << "</tr>";
  }
  return part("Components", "No Flux components.",
              "<th>Component</th><th>Ready</th><th>Status</th><th>Image</th>", rows,
              spec.components.empty());
}

Html reconcilers_table(const report::ReportSpec& spec) {
  Html rows;
  for (const report::Reconciler& reconciler : spec.reconcilers) {
    const report::ReconcilerStats& stats = reconciler.stats;
    rows << "<tr>" << cell(reconciler.kind) << cell(reconciler.api_version)
         << number_cell(stats.running) << number_cell(stats.failing) << number_cell(stats.suspended)
         << cell(stats.total_size) << "</tr>";
  }
  return part("Reconcilers", "No Flux reconcilers.",
              "<th>Kind</th><th>API version</th><th>Running</th><th>Failing</th>"
              "<th>Suspended</th><th>Storage</th>",
              rows, spec.reconcilers.empty());
}

Html sync_table(const report::ReportSpec& spec) {
  Html rows;
  if (spec.sync) {
    const report::Sync& sync = *spec.sync;
    rows << "<tr>" << cell(sync.id) << yes_no_cell(sync.ready) << cell(sync.path)
         << cell(sync.source) << message_cell(sync.status) << "</tr>";
  }
  return part("Cluster sync", "No cluster sync.",
              "<th>Sync</th><th>Ready</th><th>Path</th><th>Source</th><th>Status</th>", rows,
              !spec.sync);
}

}  // namespace

Html cluster_overview(const ClusterOverview& cluster) {
  Html html;
  if (!cluster.error.empty() || !cluster.report) {
    html << "<p class=\"unreachable\">" << text(cluster.error) << "</p>";
    return html;
  }
  html << instance_table(cluster.instance, *cluster.report) << events_table(cluster.events)
       << components_table(*cluster.report) << reconcilers_table(*cluster.report)
       << sync_table(*cluster.report);
  return html;
}

std::string fleet_page(std::vector<ClusterOverview> clusters, std::string_view generated_at) {
  sort_worst_first(clusters);
  Html rows;
  Html sections;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const ClusterOverview& cluster = clusters[i];
    Health state = health(cluster);
    Escaped anchor = text("cluster-" + std::to_string(i));
    rows << "<tr><td><a href=\"#" << anchor << "\">" << text(cluster.context) << "</a></td>"
         << "<td class=\"" << health_class(state) << "\">" << text(health_name(state)) << "</td>";
    if (cluster.report) {
      ReconcilerTotals totals = reconciler_totals(*cluster.report);
      rows << cell(cluster.report->distribution.version) << cell(cluster.instance.version_range)
           << newer_cell(cluster.newer_in_range)
           << status_cell(cluster.instance.found ? cluster.instance.ready : "False")
           << number_cell(totals.failing) << number_cell(totals.suspended)
           << cell(cluster.instance.last_reconciled)
           << message_cell(cluster.instance.found ? cluster.instance.message : "no FluxInstance");
    } else {
      rows << cell("") << cell("") << cell("") << status_cell("Unknown") << cell("") << cell("")
           << cell("") << message_cell(cluster.error);
    }
    rows << "</tr>";
    sections << "<section class=\"cluster\" id=\"" << anchor << "\"><h2>" << text(cluster.context)
             << " <span class=\"" << health_class(state) << "\">" << text(health_name(state))
             << "</span></h2>" << cluster_overview(cluster) << "</section>";
  }
  Html page;
  page << document_head(text("Flux fleet"), content_security_policy("'none'"))
       << "<body><header><h1>Flux fleet</h1><p class=\"meta\">"
       << text(count_of(clusters.size(), "cluster")) << ", worst first; made " << text(generated_at)
       << " by fluxopctl</p></header>\n<main><div class=\"scroll\"><table id=\"clusters\"><thead>"
          "<tr><th>Context</th><th>Health</th><th>Flux</th><th>Version range</th>"
          "<th>Newer in range</th><th>Ready</th>"
          "<th>Failing</th><th>Suspended</th><th>Last reconcile</th><th>Message</th></tr>"
          "</thead><tbody>"
       << rows << "</tbody></table></div>\n"
       << sections << "</main></body></html>\n";
  return page.str();
}

}  // namespace fluxop::status
