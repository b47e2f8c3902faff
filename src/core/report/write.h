// Writing the report as the operator keeps it: the FluxReport `flux`
// (fluxcd.controlplane.io/v1) in the instance's namespace, its spec applied
// server-side, a Ready condition saying when the report was made.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/kube/cluster.h"
#include "core/report/report.h"
#include "core/ssa/change_set.h"

namespace fluxop::report {

// The FluxReport CRD fluxopctl installs (share/manifests/fluxreport-crd.yaml).
nlohmann::json fluxreport_crd();

struct WriteTiming {
  std::chrono::nanoseconds took{};  // to compute the report: "Reporting finished in 272ms"
  std::string now;                  // RFC 3339, the condition's lastTransitionTime
  std::chrono::steady_clock::time_point deadline;  // for our CRD to be established
};

// Writes the report as FluxReport `flux` in `ns`. Our CRD is installed first
// when the cluster has no FluxReport CRD (an existing one, maybe the
// operator's and newer, is never applied over). A report annotated
// fluxcd.controlplane.io/reconcile: disabled is left as it is (Skipped), as
// the operator pauses it. The changes are returned (the CRD's, then the
// report's spec's); the status is written every time, as each of the
// operator's reports does.
std::vector<ssa::Change> write(kube::Cluster& cluster, const ReportSpec& spec,
                               const std::string& ns, const WriteTiming& timing);

}  // namespace fluxop::report
