#include "core/status/details_page.h"

#include <algorithm>

#include "core/ascii.h"
#include "core/display.h"
#include "core/error.h"
#include "core/kube/meta.h"
#include "core/plural.h"
#include "core/reconcile/instance_object.h"
#include "core/report/report.h"
#include "core/status/cluster_pages.h"
#include "core/status/page_parts.h"
#include "core/status/resources.h"

namespace fluxop::status {

namespace {

using nlohmann::json;

// The source an object reads: a Kustomization's or a HelmChart's
// sourceRef, a HelmRelease's chart template's sourceRef or its chartRef;
// in the object's namespace unless it names another.
std::optional<kube::ObjectKey> source_of(const json& live) {
  for (const char* pointer : {"/spec/sourceRef", "/spec/chart/spec/sourceRef", "/spec/chartRef"}) {
    const json* source = kube::at(live, pointer);
    if (!source || !source->is_object()) continue;
    kube::ObjectKey ref;
    ref.kind = kube::string_member(*source, "kind");
    ref.name = kube::string_member(*source, "name");
    ref.ns = kube::string_member(*source, "namespace");
    if (ref.ns.empty()) ref.ns = kube::text_at(live, "/metadata/namespace");
    if (!ref.kind.empty() && !ref.name.empty()) return ref;
  }
  return std::nullopt;
}

std::vector<ObjectCondition> conditions_of(const json& live) {
  std::vector<ObjectCondition> conditions;
  for (const json& condition : kube::array_at(live, "/status/conditions")) {
    if (!condition.is_object()) continue;
    conditions.push_back(
        {kube::string_member(condition, "type"), kube::string_member(condition, "status"),
         kube::string_member(condition, "reason"),
         printable_within(kube::string_member(condition, "message"), report::kMaxResourceMessage),
         kube::string_member(condition, "lastTransitionTime")});
  }
  return conditions;
}

const report::FluxResource* reported(const ClusterStatus& status, const kube::ObjectKey& ref) {
  return find_reported(status, ref.kind, ref.ns, ref.name);
}

Escaped tree_state_class(TreeState state) { return text(lowercase(tree_state_name(state))); }

// An object's name, a link to its details page when it is one of the
// report's (or the instance).
Html object_name(const ClusterStatus& status, const kube::ObjectKey& ref) {
  Html html;
  if (has_details(status, ref.kind, ref.ns, ref.name)) {
    html << "<a href=\"" << text(details_link(ref.kind, ref.ns, ref.name)) << "\">"
         << text(kube::display_name(ref)) << "</a>";
  } else {
    html << text(kube::display_name(ref));
  }
  return html;
}

Html tree_items(const ClusterStatus& status, const TreeNode& node) {
  Html html;
  html << "<li><span class=\"" << tree_state_class(node.state) << "\">"
       << text(tree_state_name(node.state)) << "</span> " << object_name(status, node.ref);
  if (!node.message.empty()) html << " <span class=\"message\">" << text(node.message) << "</span>";
  if (!node.children.empty()) {
    html << "<ul>";
    for (const TreeNode& child : node.children) html << tree_items(status, child);
    html << "</ul>";
  }
  html << "</li>";
  return html;
}

Html tree_part(const ClusterStatus& status, const ObjectDetails& details) {
  Html html;
  html << "<h3>Inventory</h3>";
  if (!details.tree) {
    html << "<p>It keeps no inventory.</p>";
    return html;
  }
  const TreeNode& tree = *details.tree;
  html << "<p class=\"meta\">"
       << text(count_of(tree_size(tree) - 1, "object") + ", " +
               std::to_string(tree_count(tree, TreeState::ready)) + " ready")
       << "</p>";
  if (tree.children.empty()) {
    html << "<p>It applied nothing.</p>";
    return html;
  }
  html << "<ul class=\"tree\" id=\"tree\">";
  for (const TreeNode& child : tree.children) html << tree_items(status, child);
  html << "</ul>";
  return html;
}

Html conditions_part(const ObjectDetails& details) {
  Html rows;
  for (const ObjectCondition& condition : details.conditions) {
    rows << "<tr>" << cell(condition.type) << status_cell(condition.status)
         << cell(condition.reason) << message_cell(condition.message)
         << cell(condition.last_transition) << "</tr>";
  }
  return part("Conditions", "No conditions.",
              "<th>Type</th><th>Status</th><th>Reason</th><th>Message</th><th>Since</th>", rows,
              details.conditions.empty());
}

Html summary_part(const ClusterStatus& status, const ObjectDetails& details) {
  Html rows;
  if (const report::FluxResource* resource = reported(status, details.ref)) {
    ResourceState state = resource_state(*resource);
    rows << "<tr><th>State</th><td class=\"" << state_class(state) << "\">"
         << text(state_name(state)) << "</td></tr>"
         << "<tr><th>Revision</th>" << cell(resource->revision) << "</tr>"
         << "<tr><th>URL</th>" << cell(resource->url) << "</tr>"
         << "<tr><th>Path</th>" << cell(resource->path) << "</tr>"
         << "<tr><th>Created</th>" << cell(resource->created) << "</tr>";
  } else {
    rows << "<tr><th>Ready</th>" << status_cell(details.ready) << "</tr>";
  }
  rows << "<tr><th>API version</th>" << cell(kube::api_version(details.ref))
       << "</tr><tr><th>Source</th>";
  if (details.source) {
    const kube::ObjectKey& source = *details.source;
    rows << "<td>" << object_name(status, source);
    if (const report::FluxResource* read = reported(status, source)) {
      ResourceState state = resource_state(*read);
      rows << " <span class=\"" << state_class(state) << "\">" << text(state_name(state))
           << "</span>";
    }
    rows << "</td>";
  } else {
    rows << cell("");
  }
  rows << "</tr>";
  Html html;
  html << "<div class=\"scroll\"><table class=\"instance\" id=\"summary\"><tbody>" << rows
       << "</tbody></table></div>";
  return html;
}

json key_json(const kube::ObjectKey& ref) {
  return {{"kind", ref.kind}, {"namespace", ref.ns}, {"name", ref.name}};
}

}  // namespace

const report::FluxResource* find_reported(const ClusterStatus& status, std::string_view kind,
                                          std::string_view ns, std::string_view name) {
  for (const report::FluxResource& resource : status.resources) {
    if (resource.kind == kind && resource.ns == ns && resource.name == name) return &resource;
  }
  return nullptr;
}

bool has_details(const ClusterStatus& status, std::string_view kind, std::string_view ns,
                 std::string_view name) {
  const InstanceState& instance = status.overview.instance;
  if (kind == "FluxInstance") return instance.found && ns == instance.ns && name == instance.name;
  return find_reported(status, kind, ns, name) != nullptr;
}

std::optional<kube::ObjectKey> served_object_kind(kube::Cluster& cluster, const std::string& kind) {
  if (kind == "FluxInstance") return reconcile::instance_ref("", "");
  for (kube::ObjectKey served : cluster.served_kinds(kube::is_flux_group)) {
    if (served.kind == kind) return served;
  }
  return std::nullopt;
}

std::optional<ObjectDetails> read_details(kube::Cluster& cluster, const kube::ObjectKey& ref) {
  std::optional<json> live = cluster.get(ref);
  if (!live) return std::nullopt;
  ObjectDetails details;
  details.ref = ref;
  if (const json* ready = kube::condition_at(*live, "Ready")) {
    if (std::string status = kube::string_member(*ready, "status"); !status.empty())
      details.ready = status;
  }
  details.conditions = conditions_of(*live);
  details.source = source_of(*live);
  try {
    details.events = object_events(cluster, ref);
  } catch (const Error& error) {
    details.errors.push_back(std::string("Events: ") + error.what());
  }
  if (kube::at(*live, "/status/inventory")) {
    try {
      details.tree = object_tree(cluster, ref, kMaxPageTreeObjects);
    } catch (const Error& error) {
      details.errors.push_back(std::string("inventory: ") + error.what());
    }
  }
  return details;
}

Html details_body(const ClusterStatus& status, const ObjectDetails& details) {
  Html errors;
  for (const std::string& error : details.errors)
    errors << "<p class=\"failed\">" << text(error) << "</p>";
  Html html;
  html << "<h2>" << text(kube::display_name(details.ref)) << "</h2>" << errors
       << summary_part(status, details) << conditions_part(details) << events_table(details.events)
       << tree_part(status, details);
  return html;
}

json details_json(const ObjectDetails& details) {
  json conditions = json::array();
  for (const ObjectCondition& condition : details.conditions) {
    conditions.push_back({{"type", condition.type},
                          {"status", condition.status},
                          {"reason", condition.reason},
                          {"message", condition.message},
                          {"lastTransitionTime", condition.last_transition}});
  }
  json document = key_json(details.ref);
  document["apiVersion"] = kube::api_version(details.ref);
  document["ready"] = details.ready;
  document["conditions"] = std::move(conditions);
  document["events"] = events_json(details.events);
  document["source"] = details.source ? key_json(*details.source) : json();
  document["inventory"] = details.tree ? json(tree_json(*details.tree)) : json();
  document["errors"] = details.errors;
  return document;
}

std::string details_link(std::string_view kind, std::string_view ns, std::string_view name) {
  ResourceQuery query;
  query.kind = kind;
  query.ns = ns;
  query.name = name;
  return "/resource?" + query_string(query, 1);
}

}  // namespace fluxop::status
