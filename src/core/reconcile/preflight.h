// What `fluxopctl check` asks of a cluster before an instance is applied,
// and what apply asks of it before its first write: whether the cluster can
// run the Flux version, may be written by the caller, has what the instance
// names, and holds an installation the apply would take over. Each check is
// one line: ok, a warning (apply goes on), or failed (apply would fail or
// refuse). Nothing is written; the reads and access reviews are all.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/instance/instance.h"
#include "core/kube/cluster.h"
#include "core/reconcile/artifacts.h"
#include "core/reconcile/pipeline.h"
#include "core/reconcile/prune.h"

namespace fluxop::reconcile {

enum class CheckStatus {
  ok,
  warning,
  failed,
  count,  // not a status: the number of them
};

// "ok", "warning", "failed": as -o json and the table print it.
std::string_view status_name(CheckStatus status);

struct CheckResult {
  std::string name;  // "kubernetes-version", "permissions", ...
  CheckStatus status = CheckStatus::ok;
  std::string message;
  // False when the check's requests failed (failed, the error its message):
  // what it checks is not known.
  bool decided = true;

  friend bool operator==(const CheckResult&, const CheckResult&) = default;
};

// The API server's version against the range the rendered Flux version
// supports (distribution::kubernetes_range); a warning when none is known.
CheckResult check_kubernetes_version(kube::Cluster& cluster, const RenderedInstance& instance);
// The instance's namespace: failed while it is being deleted.
CheckResult check_namespace(kube::Cluster& cluster, const instance::FluxInstance& flux);
// Whether the namespace `live` is being deleted: nothing can be created in it.
bool namespace_terminating(const nlohmann::json& live);
// The same of the namespace `live` as read (nullopt: it does not exist).
CheckResult namespace_check(const instance::FluxInstance& flux,
                            const std::optional<nlohmann::json>& live);
// .spec.storage.class: failed when the cluster has no StorageClass so named.
CheckResult check_storage_class(kube::Cluster& cluster, const instance::FluxInstance& flux);
// The Secrets the instance names (reconcile/secrets.h): failed naming each
// that does not exist in its namespace or lacks the keys its reader needs.
CheckResult check_secrets(kube::Cluster& cluster, const instance::FluxInstance& flux);
// Other FluxInstances: failed when one is in the cluster (apply refuses a
// second instance).
CheckResult check_instances(kube::Cluster& cluster, const instance::FluxInstance& flux);
// Why apply refuses the instance `ref` beside the FluxInstances `instances`
// (in every namespace): another one manages Flux. nullopt when none does.
// apply, diff and check say it alike.
std::optional<std::string> another_instance(const std::vector<nlohmann::json>& instances,
                                            const kube::ObjectKey& ref);
// Objects of the installation present and managed by another tool (kubectl,
// Helm, flux bootstrap, flux install) or by another field manager of the
// operator: a warning naming them, since apply takes them over.
CheckResult check_installation(kube::Cluster& cluster, const RenderedInstance& instance);
// Whether the caller may get, create, patch and delete every kind the apply
// writes, where it writes them: one access review each, sent together.
CheckResult check_permissions(kube::Cluster& cluster, const RenderedInstance& instance);

// The Flux version against the one the instance (`live`, as read; nullopt
// when there is none) applied last: failed for a downgrade, in apply's words.
CheckResult version_change_check(const std::optional<nlohmann::json>& live,
                                 const RenderedInstance& instance);
// What the next apply would prune and what each prune takes with it or
// leaves (prune.h), from the instance's inventory: a warning for a CRD kept
// because its resources remain, or deleted with them (--prune-crds).
CheckResult check_prunes(kube::Cluster& cluster, const RenderedInstance& instance,
                         const std::optional<nlohmann::json>& live, const PruneOptions& options);
// The instance's objects being deleted (a CRD pruned and held Terminating):
// failed, naming each and what holds it; apply waits until they are gone.
CheckResult check_terminating(kube::Cluster& cluster, const RenderedInstance& instance);

// The checks that cost a request or two: the Kubernetes version, the
// namespace, the storage class, the Secrets (require_cheap_checks leaves the
// namespace to the apply, which reads it anyway).
std::vector<CheckResult> cheap_checks(kube::Cluster& cluster, const RenderedInstance& instance);

// Throws fluxop::Error "FILE: CHECK: MESSAGE" for the first cheap check that
// failed, before apply writes anything; a warning, or a check that could not
// tell (a caller who may not read StorageClasses), is `notice`d and the apply
// goes on: what it could not read may not matter to it.
void require_cheap_checks(kube::Cluster& cluster, const RenderedInstance& instance,
                          const std::function<void(const std::string&)>& notice);

// Every check: the distribution (located, pulled, rendered), then each above;
// those that need the render are left out when it failed. A check whose
// requests fail is failed with the error.
std::vector<CheckResult> run_checks(kube::Cluster& cluster, ArtifactPort& artifacts,
                                    instance::FluxInstance flux, const RenderRequest& request,
                                    const PruneOptions& prune = {});

// The same on an instance `render` renders (a fleet's one render), which
// throws the render's failure.
std::vector<CheckResult> run_checks(kube::Cluster& cluster, const instance::FluxInstance& flux,
                                    const std::function<const RenderedInstance&()>& render,
                                    const PruneOptions& prune = {});

}  // namespace fluxop::reconcile
