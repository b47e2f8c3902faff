// The FluxReport: what Flux runs on a cluster and how healthy it is, computed
// as the Flux Operator's reporter computes the `.spec` of its FluxReport
// (fluxcd.controlplane.io/v1), so that a tool reading one reads the other:
// the distribution from the Flux CRDs' labels, the cluster from the API
// server, the components from the controllers' Deployments (kstatus), the
// reconcilers' statistics from every Flux custom resource, the cluster sync
// from the instance's sync Kustomization and its source.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/cluster.h"

namespace fluxop::report {

struct Distribution {
  std::string entitlement = "Unknown";  // "Issued[ by <vendor>]" with an entitlement secret
  std::string status = "Unknown";       // "Installed" or "Not Installed"
  std::string version;                  // the CRDs' app.kubernetes.io/version
  std::string managed_by;               // their app.kubernetes.io/managed-by, or "flux bootstrap"
};

struct Cluster {
  std::string server_version;
  std::string platform;
  int nodes = 0;
};

struct Component {
  std::string name;  // the Deployment's
  bool ready = false;
  std::string status;  // kstatus' status and message: "Current Deployment is available. ..."
  std::string image;   // of the first container
};

struct ReconcilerStats {
  int running = 0;  // not suspended
  int failing = 0;  // Ready False for a reason other than DependencyNotReady, not suspended
  int suspended = 0;
  std::string total_size;  // of the artifacts in storage ("5.5 MiB"); "" for none
};

struct Reconciler {
  std::string api_version;
  std::string kind;
  ReconcilerStats stats;
};

struct Sync {
  std::string id;  // "kustomization/<name>"
  std::string path;
  bool ready = false;
  std::string status;
  std::string source;  // the source's URL
};

// The FluxReport's spec. Upstream's `operator` field is left out: no
// operator runs.
struct ReportSpec {
  Distribution distribution;
  std::optional<Cluster> cluster;
  std::vector<Component> components;    // by name
  std::vector<Reconciler> reconcilers;  // by apiVersion and kind
  std::optional<Sync> sync;
};

// One custom resource of the Flux CRDs as the report lists it: what the
// daemon exports of it (flux_resource_info), `get all` lists and the status
// pages show.
struct FluxResource {
  std::string uid;
  std::string kind;
  std::string name;
  std::string ns;
  std::string created;            // .metadata.creationTimestamp, RFC 3339
  std::string ready = "Unknown";  // the Ready condition's status and reason
  std::string reason;
  // And its message as a page or a line shows it: redacted, escaped and cut
  // (printable_within, core/display.h) to kMaxResourceMessage columns. A
  // controller's message can be a whole build log; 10,000 of them are held.
  std::string message;
  bool suspended = false;    // .spec.suspend
  bool reconciling = false;  // its Reconciling condition is True
  std::string revision;      // the artifact's, or the last attempted
  std::string url;
  std::string ref;
  std::string source_name;
  std::string path;
};
inline constexpr std::size_t kMaxResourceMessage = 1024;

// The labels of the flux_resource_info metric for one Flux custom resource,
// by name (uid, kind, name, exported_namespace, ready, reason, suspended,
// revision, url, ref, source_name, path), as upstream exports them.
using ResourceLabels = std::map<std::string, std::string>;
ResourceLabels resource_labels(const FluxResource& resource);

struct Report {
  ReportSpec spec;
  // Every custom resource of the Flux CRDs (not the operator's kinds), as
  // upstream exports them with the report.
  std::vector<FluxResource> resources;
  // What could not be computed, as upstream's reporter words it (e.g. "no
  // Flux CRDs found"); the spec holds what could.
  std::vector<std::string> errors;
};

// Whether Report::resources is filled: the daemon exports and shows them; a
// report printed leaves them out (10,000 resources' labels are 15 MB).
enum class Resources { listed, left_out };

// The report of the Flux installation in `ns`; `manager` names the
// entitlement secret (<manager>-entitlement), as the operator's name does.
// Errors talking to the cluster throw.
Report compute(kube::Cluster& cluster, const std::string& ns, const std::string& manager,
               Resources resources = Resources::listed);

// The spec as upstream serializes it (empty optional fields left out).
nlohmann::json spec_json(const ReportSpec& spec);

// The FluxReport object `flux` in `ns` with that spec.
nlohmann::json report_object(const ReportSpec& spec, const std::string& ns);

// Whether the object's labels or annotations set
// fluxcd.controlplane.io/reconcile to "disabled" (in any case): the
// operator's kinds are suspended so, and so is the report itself.
bool reconcile_disabled(const nlohmann::json& object);

// kstatus' status of a Deployment ("Current", "InProgress", "Failed",
// "Terminating") and its message, as the operator words a component's.
struct DeploymentStatus {
  std::string status;
  std::string message;
};
DeploymentStatus deployment_status(const nlohmann::json& deployment);

// A byte count as upstream writes totalSize: "512 B", "1.5 KiB", "" for 0.
std::string format_size(std::int64_t bytes);

}  // namespace fluxop::report
