// The daemon's status pages (`apply --watch --status-addr`): its cluster as
// of its last report, read-only. Two pages rendered on the server, with no
// script, and the JSON they are views of, for scripts:
//
//   /                   the overview: the instance, components, reconcilers,
//                       sync, and the Flux objects counted by state
//   /resources          every Flux object, failing first, filtered by the
//                       query (state, kind, namespace, q), 100 a page (page)
//   /api/v1/overview    the overview's data
//   /api/v1/resources   the resources' rows, the same query
//   /resource           one of them, or the instance (kind, namespace, name):
//                       its conditions, Events, source and inventory tree
//   /api/v1/resource    the same as JSON
//
// docs/status.md documents them. Answering reads only what the loop
// published, but for the details of one object (details_page.h), read from
// the cluster when asked: only of the objects the report holds.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/kube/cluster.h"
#include "core/report/report.h"
#include "core/status/overview.h"

namespace fluxop::status {

// What the pages show.
struct ClusterStatus {
  ClusterOverview overview;
  std::vector<report::FluxResource> resources;
  std::string reported_at;  // RFC 3339
};

struct PageResponse {
  int status = 200;
  std::string content_type;
  std::string body;
};

// A text/plain answer of `status` saying `message` (a refusal, an error).
PageResponse plain_page(int status, std::string message);

// The answer to a GET of `target` (a path and its query) at `now`, from
// `status` (null before the first report: 503), the details read from
// `cluster` (null: 503). 404 for another path, 400 for a query that is
// not one. `status->resources` in sort_by_state's order.
PageResponse answer_status_request(const ClusterStatus* status, std::string_view target,
                                   std::chrono::system_clock::time_point now,
                                   kube::Cluster* cluster = nullptr);

// The headers of every answer: the pages' Content-Security-Policy with
// frame-ancestors 'none' (no other site frames them), nosniff, no caching,
// no referrer.
std::vector<std::pair<std::string, std::string>> status_headers();

// Where the daemon's loop publishes the status and the page server's thread
// reads it: each request answers from one whole status, never a half-replaced one.
class StatusBoard {
 public:
  // Replaces what the pages show; sorts the resources.
  void publish(ClusterStatus status);
  // The details are read from `cluster`, the page server's.
  PageResponse answer(std::string_view target, kube::Cluster* cluster) const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const ClusterStatus> status_;
};

}  // namespace fluxop::status
