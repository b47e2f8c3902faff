#include "core/status/cluster_pages.h"

#include <set>

#include "core/error.h"
#include "core/plural.h"
#include "core/redact.h"
#include "core/status/details_page.h"
#include "core/status/fleet_page.h"
#include "core/status/page_parts.h"
#include "core/status/resources.h"

namespace fluxop::status {

namespace {

using nlohmann::json;

constexpr std::string_view kHtml = "text/html; charset=utf-8";
constexpr std::string_view kJson = "application/json";
constexpr std::string_view kText = "text/plain; charset=utf-8";

// Every string of a document redacted: messages and URLs read from the
// cluster reach scripts as they reach the pages.
json redacted(json document) {
  if (document.is_string()) return redact_secrets(document.get_ref<const std::string&>());
  // A number or a boolean iterates as itself: only containers are walked.
  if (document.is_structured()) {
    for (json& value : document) value = redacted(std::move(value));
  }
  return document;
}

PageResponse json_response(const json& document) {
  return {200, std::string(kJson),
          printable_json(redacted(document).dump(-1, ' ', false, json::error_handler_t::replace)) +
              "\n"};
}

Html navigation(bool resources) {
  Html html;
  html << "<nav><a href=\"/\"" << (resources ? Markup("") : Markup(" class=\"current\""))
       << ">Overview</a><a href=\"/resources\""
       << (resources ? Markup(" class=\"current\"") : Markup("")) << ">Resources</a></nav>";
  return html;
}

// The title and the header of a page of `status`.
Html page_start(const ClusterStatus& status, Markup page) {
  Health state = health(status.overview);
  Html html;
  html << document_head(text(status.overview.context + " - Flux status"),
                        content_security_policy("'self'"))
       << "<body><header><h1>" << page << " of " << text(status.overview.context)
       << " <span class=\"" << health_class(state) << "\">" << text(health_name(state))
       << "</span></h1><p class=\"meta\">Reported " << text(status.reported_at) << " by fluxopctl; "
       << text(count_of(status.resources.size(), "Flux object")) << "</p></header>\n";
  return html;
}

Html states_table(const StateCounts& counts) {
  Html rows;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    auto state = static_cast<ResourceState>(i);
    ResourceQuery query;
    query.state = state;
    rows << "<tr><td class=\"" << state_class(state) << "\"><a href=\"/resources?"
         << text(query_string(query, 1)) << "\">" << text(state_name(state)) << "</a></td>"
         << number_cell(static_cast<std::int64_t>(counts[i])) << "</tr>";
  }
  Html html;
  html << "<h3>Flux objects</h3><div class=\"scroll\"><table id=\"states\" "
          "class=\"states\"><thead><tr>"
          "<th>State</th><th>Objects</th></tr></thead><tbody>"
       << rows << "</tbody></table></div>";
  return html;
}

std::string overview_page(const ClusterStatus& status) {
  Html page;
  Html instance;
  if (const InstanceState& state = status.overview.instance; state.found) {
    instance << "<p id=\"instance-details\"><a href=\""
             << text(details_link("FluxInstance", state.ns, state.name))
             << "\">What the FluxInstance applied</a>, its conditions and Events</p>";
  }
  page << page_start(status, "Flux") << "<main>" << navigation(false)
       << states_table(count_states(status.resources)) << instance
       << cluster_overview(status.overview) << "</main></body></html>\n";
  return page.str();
}

// A <select> of the form: "All", then each of `values`, the query's selected.
Html select(Markup label, Markup name, const std::vector<std::string>& values,
            const std::string& selected) {
  Html options;
  for (const std::string& value : values) {
    options << "<option value=\"" << text(value) << "\""
            << (value == selected ? Markup(" selected") : Markup("")) << ">" << text(value)
            << "</option>";
  }
  Html html;
  html << "<label>" << label << "<select name=\"" << name << "\"><option value=\"\">All</option>"
       << options << "</select></label>";
  return html;
}

Html filters(const ClusterStatus& status, const ResourceQuery& query) {
  std::vector<std::string> states;
  for (std::size_t i = 0; i < static_cast<std::size_t>(ResourceState::count); ++i)
    states.emplace_back(state_name(static_cast<ResourceState>(i)));
  std::set<std::string> kinds, namespaces;
  for (const report::FluxResource& resource : status.resources) {
    kinds.insert(resource.kind);
    namespaces.insert(resource.ns);
  }
  Html html;
  html << "<form class=\"filters\" method=\"get\" action=\"/resources\">"
       << select("State", "state", states,
                 query.state ? std::string(state_name(*query.state)) : std::string())
       << select("Kind", "kind", {kinds.begin(), kinds.end()}, query.kind)
       << select("Namespace", "namespace", {namespaces.begin(), namespaces.end()}, query.ns)
       << "<label>Search<input type=\"search\" name=\"q\" value=\"" << text(query.text)
       << "\"></label><button type=\"submit\">Filter</button></form>";
  return html;
}

Html resource_row(const report::FluxResource& resource, std::chrono::system_clock::time_point now) {
  ResourceState state = resource_state(resource);
  Html row;
  row << "<tr><td class=\"" << state_class(state) << "\">" << text(state_name(state)) << "</td>"
      << cell(resource.kind) << cell(resource.ns) << "<td><a href=\""
      << text(details_link(resource.kind, resource.ns, resource.name)) << "\">"
      << text(resource.name) << "</a></td>" << message_cell(resource.message)
      << cell(resource.revision) << cell(age(resource.created, now)) << "</tr>";
  return row;
}

Html pager(const ResourceQuery& query, const ResourcePage& page) {
  Html html;
  html << "<div class=\"pager\">";
  if (page.page > 1) {
    html << "<a rel=\"prev\" href=\"/resources?" << text(query_string(query, page.page - 1))
         << "\">Previous</a>";
  }
  if (page.page < page.pages) {
    html << "<a rel=\"next\" href=\"/resources?" << text(query_string(query, page.page + 1))
         << "\">Next</a>";
  }
  html << "</div>";
  return html;
}

std::string resources_page(const ClusterStatus& status, const ResourceQuery& query,
                           std::chrono::system_clock::time_point now) {
  ResourcePage selected = select_resources(status.resources, query);
  Html rows;
  for (const report::FluxResource* resource : selected.rows) rows << resource_row(*resource, now);
  Html page;
  page << page_start(status, "Flux objects") << "<main>" << navigation(true)
       << filters(status, query) << "<p class=\"meta\" id=\"matching\">"
       << text(count_of(selected.matching, "object")) << " matching, page "
       << number(static_cast<std::int64_t>(selected.page)) << " of "
       << number(static_cast<std::int64_t>(selected.pages))
       << "</p><div class=\"scroll\"><table id=\"resources\"><thead><tr><th>State</th>"
          "<th>Kind</th><th>Namespace</th><th>Name</th><th>Message</th><th>Revision</th>"
          "<th>Age</th></tr></thead><tbody>"
       << rows << "</tbody></table></div>" << pager(query, selected) << "</main></body></html>\n";
  return page.str();
}

json instance_json(const InstanceState& instance) {
  return {{"found", instance.found},
          {"ready", instance.ready},
          {"reason", instance.reason},
          {"message", instance.message},
          {"versionRange", instance.version_range},
          {"artifact", instance.artifact},
          {"lastAppliedRevision", instance.last_applied_revision},
          {"lastArtifactRevision", instance.last_artifact_revision},
          {"lastReconciled", instance.last_reconciled},
          {"lastHandledReconcileAt", instance.last_handled_request},
          {"suspended", instance.suspended},
          {"inventorySize", instance.inventory_size},
          {"nextReconcile", instance.next_reconcile},
          {"verification", instance.verification}};
}

json overview_json(const ClusterStatus& status) {
  json states = json::object();
  StateCounts counts = count_states(status.resources);
  for (std::size_t i = 0; i < counts.size(); ++i)
    states[std::string(state_name(static_cast<ResourceState>(i)))] = counts[i];
  return {{"context", status.overview.context},
          {"reportedAt", status.reported_at},
          {"health", health_name(health(status.overview))},
          {"instance", instance_json(status.overview.instance)},
          {"events", events_json(status.overview.events)},
          {"report", status.overview.report ? report::spec_json(*status.overview.report) : json()},
          {"resources", {{"total", status.resources.size()}, {"states", states}}}};
}

json resources_json(const ClusterStatus& status, const ResourceQuery& query) {
  ResourcePage selected = select_resources(status.resources, query);
  json items = json::array();
  for (const report::FluxResource* resource : selected.rows) {
    items.push_back({{"kind", resource->kind},
                     {"namespace", resource->ns},
                     {"name", resource->name},
                     {"state", state_name(resource_state(*resource))},
                     {"ready", resource->ready},
                     {"reason", resource->reason},
                     {"message", resource->message},
                     {"suspended", resource->suspended},
                     {"revision", resource->revision},
                     {"created", resource->created}});
  }
  return {{"matching", selected.matching},
          {"page", selected.page},
          {"pages", selected.pages},
          {"pageSize", kResourcesPerPage},
          {"items", std::move(items)}};
}

// The details of the object `query` names (kind, namespace, name), read
// from `cluster`: a page (`html`) or its document.
PageResponse answer_details(const ClusterStatus& status, const ResourceQuery& query,
                            kube::Cluster* cluster, bool html) {
  if (query.kind.empty() || query.ns.empty() || query.name.empty())
    return plain_page(400, "kind, namespace, name: each is needed");
  std::string named = kube::display_name({"", "", query.kind, query.ns, query.name});
  if (!has_details(status, query.kind, query.ns, query.name))
    return plain_page(404, named + ": not a Flux object of the last report");
  if (!cluster) return plain_page(503, "no connection to the cluster");
  std::optional<ObjectDetails> details;
  try {
    std::optional<kube::ObjectKey> kind = served_object_kind(*cluster, query.kind);
    if (kind) {
      kind->ns = query.ns;
      kind->name = query.name;
      details = read_details(*cluster, *kind);
    }
  } catch (const Error& error) {
    return plain_page(503, std::string("the cluster could not be read: ") + error.what());
  }
  if (!details) return plain_page(404, named + ": gone from the cluster since the last report");
  if (!html) return json_response(details_json(*details));
  Html page;
  page << page_start(status, "Flux object") << "<main>" << navigation(true)
       << details_body(status, *details) << "</main></body></html>\n";
  return {200, std::string(kHtml), page.str()};
}

}  // namespace

PageResponse plain_page(int status, std::string message) {
  return {status, std::string(kText), std::move(message) + "\n"};
}

PageResponse answer_status_request(const ClusterStatus* status, std::string_view target,
                                   std::chrono::system_clock::time_point now,
                                   kube::Cluster* cluster) {
  std::size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  bool resources = path == "/resources" || path == "/api/v1/resources";
  bool details = path == "/resource" || path == "/api/v1/resource";
  if (!resources && !details && path != "/" && path != "/api/v1/overview")
    return plain_page(404, "not found");
  if (!status) return plain_page(503, "no report yet: the daemon's first one is under way");
  if (!resources && !details) {
    if (path == "/") return {200, std::string(kHtml), overview_page(*status)};
    return json_response(overview_json(*status));
  }
  ResourceQuery parsed;
  try {
    parsed = parse_resource_query(query);
  } catch (const Error& error) {
    return plain_page(400, error.what());
  }
  if (details) return answer_details(*status, parsed, cluster, path == "/resource");
  if (path == "/resources") return {200, std::string(kHtml), resources_page(*status, parsed, now)};
  return json_response(resources_json(*status, parsed));
}

std::vector<std::pair<std::string, std::string>> status_headers() {
  return {
      {"Content-Security-Policy", content_security_policy("'self'") + "; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"Cache-Control", "no-store"},
      {"Referrer-Policy", "no-referrer"}};
}

void StatusBoard::publish(ClusterStatus status) {
  sort_by_state(status.resources);
  auto published = std::make_shared<const ClusterStatus>(std::move(status));
  std::lock_guard lock(mutex_);
  status_ = std::move(published);
}

PageResponse StatusBoard::answer(std::string_view target, kube::Cluster* cluster) const {
  std::shared_ptr<const ClusterStatus> status;
  {
    std::lock_guard lock(mutex_);
    status = status_;
  }
  return answer_status_request(status.get(), target, std::chrono::system_clock::now(), cluster);
}

}  // namespace fluxop::status
