// The Flux objects of a cluster as the daemon's resources page and its API
// list them: each in one state, failing first, selected by a query (state,
// kind, namespace, a text) a page of rows at a time.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/report/report.h"

namespace fluxop::status {

enum class ResourceState {
  failed,       // what the report counts failing: Ready False, not for a dependency
  reconciling,  // neither failed nor Ready yet (Reconciling, or waiting on a dependency)
  suspended,    // .spec.suspend, whatever its conditions say
  ready,        // Ready True and not reconciling
  count,        // not a state: the number of them
};
ResourceState resource_state(const report::FluxResource& resource);
// "Failed", "Reconciling", "Suspended", "Ready".
std::string_view state_name(ResourceState state);

// Failing first, in the enum's order; by kind, namespace and name within a
// state.
void sort_by_state(std::vector<report::FluxResource>& resources);

// How many are in each state, indexed by the enum.
using StateCounts = std::array<std::size_t, static_cast<std::size_t>(ResourceState::count)>;
StateCounts count_states(const std::vector<report::FluxResource>& resources);

inline constexpr std::size_t kResourcesPerPage = 100;

struct ResourceQuery {
  std::optional<ResourceState> state;
  std::string kind;  // exact, as listed
  std::string ns;
  std::string name;      // exact: one object, the details page's
  std::string text;      // in the kind, namespace, name, message or revision, any letter case
  std::size_t page = 1;  // from 1
};

// The query of a query string ("state=Failed&kind=Kustomization&q=apps&page=2",
// "kind=Kustomization&namespace=apps&name=podinfo" for one object,
// as the page's form sends it; empty values are no filter). Throws
// fluxop::Error "<name>: <why>" for a state or page that is not one; other
// names are ignored.
ResourceQuery parse_resource_query(std::string_view query);
// The query string of `query` showing page `page`, for a link.
std::string query_string(const ResourceQuery& query, std::size_t page);

struct ResourcePage {
  std::vector<const report::FluxResource*> rows;  // this page's, in the list's order
  std::size_t matching = 0;                       // on every page
  std::size_t page = 1;                           // the query's, at most `pages`
  std::size_t pages = 1;                          // at least one
};
ResourcePage select_resources(const std::vector<report::FluxResource>& resources,
                              const ResourceQuery& query);

// How long ago `created` (RFC 3339) was at `now`, as kubectl's AGE column
// says it ("42s", "15m", "5h", "12d"); "-" when it does not parse.
std::string age(const std::string& created, std::chrono::system_clock::time_point now);

}  // namespace fluxop::status
