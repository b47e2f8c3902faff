#include "core/status/resources.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "core/ascii.h"
#include "core/enum_table.h"
#include "core/error.h"
#include "core/net/http.h"
#include "core/rfc3339.h"

namespace fluxop::status {

namespace {

constexpr EnumName<ResourceState> kStates[] = {{ResourceState::failed, "Failed"},
                                               {ResourceState::reconciling, "Reconciling"},
                                               {ResourceState::suspended, "Suspended"},
                                               {ResourceState::ready, "Ready"}};
static_assert(covers_enum(kStates));

std::optional<ResourceState> state_named(std::string_view name) {
  for (const EnumName<ResourceState>& row : kStates) {
    if (row.name == name) return row.value;
  }
  return std::nullopt;
}

bool contains_folded(std::string_view haystack, std::string_view lowered_needle) {
  return lowercase(haystack).find(lowered_needle) != std::string::npos;
}

bool matches(const report::FluxResource& resource, const ResourceQuery& query,
             const std::string& lowered_text) {
  if (query.state && resource_state(resource) != *query.state) return false;
  if (!query.kind.empty() && resource.kind != query.kind) return false;
  if (!query.ns.empty() && resource.ns != query.ns) return false;
  if (!query.name.empty() && resource.name != query.name) return false;
  if (lowered_text.empty()) return true;
  for (const std::string* field :
       {&resource.kind, &resource.ns, &resource.name, &resource.message, &resource.revision}) {
    if (contains_folded(*field, lowered_text)) return true;
  }
  return false;
}

}  // namespace

ResourceState resource_state(const report::FluxResource& resource) {
  if (resource.suspended) return ResourceState::suspended;
  if (resource.ready == "False" && resource.reason != "DependencyNotReady")
    return ResourceState::failed;
  if (resource.ready == "True" && !resource.reconciling) return ResourceState::ready;
  return ResourceState::reconciling;
}

std::string_view state_name(ResourceState state) { return enum_row(kStates, state).name; }

void sort_by_state(std::vector<report::FluxResource>& resources) {
  auto key = [](const report::FluxResource& resource) {
    return std::tuple(resource_state(resource), std::string_view(resource.kind),
                      std::string_view(resource.ns), std::string_view(resource.name));
  };
  std::sort(resources.begin(), resources.end(),
            [&](const report::FluxResource& a, const report::FluxResource& b) {
              return key(a) < key(b);
            });
}

StateCounts count_states(const std::vector<report::FluxResource>& resources) {
  StateCounts counts{};
  for (const report::FluxResource& resource : resources)
    ++counts[static_cast<std::size_t>(resource_state(resource))];
  return counts;
}

ResourceQuery parse_resource_query(std::string_view query) {
  ResourceQuery parsed;
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    std::size_t equals = pair.find('=');
    std::string name = net::url_unescape_form(pair.substr(0, equals));
    std::string value =
        equals == std::string_view::npos ? "" : net::url_unescape_form(pair.substr(equals + 1));
    if (value.empty()) continue;
    if (name == "state") {
      parsed.state = state_named(value);
      if (!parsed.state)
        throw Error("state: " + quote(value) + " is not Failed, Reconciling, Suspended or Ready");
    } else if (name == "kind") {
      parsed.kind = value;
    } else if (name == "namespace") {
      parsed.ns = value;
    } else if (name == "name") {
      parsed.name = value;
    } else if (name == "q") {
      parsed.text = value;
    } else if (name == "page") {
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed.page);
      if (error != std::errc() || end != value.data() + value.size() || parsed.page == 0)
        throw Error("page: " + quote(value) + " is not a page number (1, 2, ...)");
    }
  }
  return parsed;
}

std::string query_string(const ResourceQuery& query, std::size_t page) {
  std::string out;
  auto add = [&out](std::string_view name, std::string_view value) {
    if (value.empty()) return;
    if (!out.empty()) out += '&';
    out += name;
    out += '=';
    out += net::url_escape(value);
  };
  if (query.state) add("state", state_name(*query.state));
  add("kind", query.kind);
  add("namespace", query.ns);
  add("name", query.name);
  add("q", query.text);
  if (page > 1) add("page", std::to_string(page));
  return out;
}

ResourcePage select_resources(const std::vector<report::FluxResource>& resources,
                              const ResourceQuery& query) {
  std::string lowered_text = lowercase(query.text);
  std::vector<const report::FluxResource*> matching;
  for (const report::FluxResource& resource : resources) {
    if (matches(resource, query, lowered_text)) matching.push_back(&resource);
  }
  ResourcePage page;
  page.matching = matching.size();
  page.pages =
      std::max<std::size_t>(1, (matching.size() + kResourcesPerPage - 1) / kResourcesPerPage);
  page.page = std::min(query.page, page.pages);
  auto first = matching.begin() + static_cast<std::ptrdiff_t>(std::min(
                                      matching.size(), (page.page - 1) * kResourcesPerPage));
  auto last = matching.begin() +
              static_cast<std::ptrdiff_t>(std::min(matching.size(), page.page * kResourcesPerPage));
  page.rows.assign(first, last);
  return page;
}

std::string age(const std::string& created, std::chrono::system_clock::time_point now) {
  std::optional<std::chrono::system_clock::time_point> since = parse_rfc3339(created);
  if (!since) return "-";
  auto seconds = std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::seconds>(now - *since).count());
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 180 * 60) return std::to_string(seconds / 60) + "m";
  if (seconds < 48 * 3600) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

}  // namespace fluxop::status
