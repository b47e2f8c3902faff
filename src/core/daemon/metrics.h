// The daemon's Prometheus metrics, named and labelled as the Flux Operator
// exports them, so that its dashboards and alerts work unchanged: the
// instance's flux_instance_info, controller-runtime's reconcile metrics for
// the "fluxinstance" controller, and the process collector's process_*.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/reason.h"
#include "core/report/report.h"

namespace fluxop::daemon {

// The labels of flux_instance_info, as upstream fills them from the instance.
struct InstanceInfo {
  std::string uid;
  std::string kind = "FluxInstance";
  std::string name;
  std::string ns;                // the exported_namespace label
  std::string ready;             // the Ready condition's status: "True", "False" or "Unknown"
  std::optional<Reason> reason;  // the Ready condition's; none before the first reconcile
  std::string registry;          // .spec.distribution.registry
  std::string revision;          // .status.lastAppliedRevision
  bool suspended = false;
};

// Thread-safe: the daemon's loop writes while the HTTP threads render.
class Metrics {
 public:
  // The results controller-runtime counts a reconcile under. Upstream's
  // successful reconcile of an instance that has an interval ends in
  // "requeue_after"; one without an interval in "success".
  static constexpr std::array<std::string_view, 4> kResults{"error", "requeue", "requeue_after",
                                                            "success"};

  // Replaces the instance exported, as upstream does on every reconcile.
  void set_instance(const InstanceInfo& info);
  // None exported any more: the instance is gone.
  void clear_instance();
  // Replaces the Flux resources exported as flux_resource_info (the
  // report's), as upstream does with each report.
  void set_resources(const std::vector<report::FluxResource>& resources);
  // One reconcile ended with `result` (one of kResults; std::invalid_argument
  // otherwise), after `seconds`.
  void observe_reconcile(std::string_view result, std::chrono::duration<double> seconds);

  // Everything, in the Prometheus text exposition format (version 0.0.4).
  std::string render() const;

 private:
  // controller-runtime's reconcile_time_seconds buckets (their upper bounds).
  static constexpr std::array<double, 40> kBuckets{
      0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
      0.7,   0.8,  0.9,   1,    1.25, 1.5,  1.75, 2,    2.5, 3,    3.5, 4,    4.5, 5,
      6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};

  mutable std::mutex mutex_;
  std::optional<InstanceInfo> instance_;
  // flux_resource_info's samples, sorted as the Go client sorts them.
  std::string resource_samples_;
  std::array<std::uint64_t, kResults.size()> reconciles_{};  // by kResults' index
  // Observations per bucket: in the first bucket whose bound they do not
  // exceed, kBuckets.size() for those above every bound.
  std::array<std::uint64_t, kBuckets.size() + 1> observations_{};
  double seconds_sum_ = 0;
};

}  // namespace fluxop::daemon
