// `fluxopctl delete`, and the daemon's answer to a FluxInstance being
// deleted: the clean uninstall the Flux Operator performs behind its
// finalizer. The controllers go first and are waited for, so that none runs
// while the finalizers of the Flux custom resources are removed; then the
// inventory goes (its CRDs take the custom resources with them) and is waited
// for; the FluxInstance last, so that an uninstall stopped half-way is done
// by running it again. Objects annotated `fluxcd.controlplane.io/prune:
// disabled` (the namespace) stay, and nothing outside the inventory is
// deleted: the workloads Flux deployed are never touched.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/cluster.h"
#include "core/reconcile/inventory.h"
#include "core/ssa/change_set.h"
#include "core/wait_status.h"

namespace fluxop::reconcile {

// The FluxInstance finalizer, the operator's.
inline constexpr std::string_view kInstanceFinalizer = "fluxcd.controlplane.io/finalizer";

struct UninstallOptions {
  // Keep the CRDs and the Flux custom resources (with their finalizers), so
  // that a reinstall resumes where it stopped.
  bool keep_crds = false;
  // Wait for what was deleted to be gone (the controllers are always waited
  // for: none may run once the finalizers are removed).
  bool wait = true;
  std::chrono::seconds timeout{300};
  std::chrono::seconds lock_timeout{60};
  // The daemon's uninstall of an instance being deleted, as the operator's
  // behind its finalizer: nothing to do without the finalizer; a disabled
  // instance is only released (its finalizer removed); else every step is
  // tried, what fails is a warning, and the instance is released rather
  // than deleted.
  bool behind_finalizer = false;
  std::function<void(const ssa::Change&)> on_change;
  std::function<void(const std::string&)> on_progress;
  WaitStatus* wait_status = nullptr;          // told how each wait goes
  std::function<std::string()> interruption;  // as ApplyOptions::interruption
  // Asked, before anything is written, whether to go on, with what the
  // uninstall removes ("FluxInstance flux-system/flux and its inventory: 4
  // Deployment (flux-system: 4), ...; with the CRDs, every Flux custom
  // resource: ..."); false stops it, nothing deleted. None: not asked.
  std::function<bool(const std::string& removes)> confirm;
};

struct UninstallResult {
  bool found = false;  // whether there was an instance to uninstall
  std::vector<ssa::Change> changes;
  std::string message;                // "Uninstallation completed in 12s"
  std::vector<std::string> warnings;  // of an uninstall behind the finalizer
};

// Uninstalls what the instance `ref` installed: its inventory, and the
// objects labelled its that the inventory lacks (a status removed or
// rewritten). Throws fluxop::Error naming the object that blocks (unless
// behind_finalizer), or the objects labelled its still there once done;
// nothing is then lost: the instance and its inventory stay for the next
// attempt, its Ready condition False with Reason::uninstalling. Never says
// complete while such objects remain.
UninstallResult uninstall_instance(kube::Cluster& cluster, const kube::ObjectKey& ref,
                                   const UninstallOptions& options);

// Adds the finalizer to the live instance when it lacks it, as the operator
// does before its first reconcile, so that deleting the instance uninstalls.
// The instance as patched; nullopt when it had the finalizer.
std::optional<nlohmann::json> ensure_finalizer(kube::Cluster& cluster, const nlohmann::json& live);

}  // namespace fluxop::reconcile
