// The daemon's details page of one object (/resource?kind=K&namespace=N&name=X)
// and its JSON (/api/v1/resource?...): a Flux object of the last report, or
// the FluxInstance. What the report knows is shown from it; what only the
// cluster knows is read when the page is asked, through the page server's
// own connection and with the daemon's rights: the object's conditions, its
// Events, the source it reads, and what it applied (object_tree, at most
// kMaxPageTreeObjects objects read). A part that cannot be read (forbidden,
// the API server away) says so; the others are shown.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kube/cluster.h"
#include "core/report/report.h"
#include "core/status/html.h"
#include "core/status/object_tree.h"
#include "core/status/overview.h"

namespace fluxop::status {

struct ClusterStatus;

inline constexpr std::size_t kMaxPageTreeObjects = 500;

struct ObjectCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;  // redacted, escaped and cut as a resource's
  std::string last_transition;
};

struct ObjectDetails {
  kube::ObjectKey ref;  // as served
  std::string ready = "Unknown";
  std::vector<ObjectCondition> conditions;
  std::vector<ObjectEvent> events;
  std::optional<kube::ObjectKey>
      source;                       // .spec.sourceRef, .spec.chart.spec.sourceRef, .spec.chartRef
  std::optional<TreeNode> tree;     // when it keeps an inventory
  std::vector<std::string> errors;  // what could not be read, a line each
};

// The report's row of an object; null when it has none.
const report::FluxResource* find_reported(const ClusterStatus& status, std::string_view kind,
                                          std::string_view ns, std::string_view name);
// Whether the object has a details page: one of the report's Flux
// objects, or the instance. No other object is read through the pages.
bool has_details(const ClusterStatus& status, std::string_view kind, std::string_view ns,
                 std::string_view name);

// The key of a Flux kind, or of the FluxInstance, in the version the
// cluster serves; nullopt for another kind or one not served.
std::optional<kube::ObjectKey> served_object_kind(kube::Cluster& cluster, const std::string& kind);

// The details of `ref` (group and version as served); nullopt when it is
// gone from the cluster.
std::optional<ObjectDetails> read_details(kube::Cluster& cluster, const kube::ObjectKey& ref);

// The page's main part and the document of `details`, an object of
// `status` (whose resources give the source's state).
Html details_body(const ClusterStatus& status, const ObjectDetails& details);
nlohmann::json details_json(const ObjectDetails& details);

// The details page's path and query for an object.
std::string details_link(std::string_view kind, std::string_view ns, std::string_view name);

}  // namespace fluxop::status
