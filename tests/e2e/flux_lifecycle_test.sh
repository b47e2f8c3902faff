#!/usr/bin/env bash
# What a user keeps while the real Flux controllers act (issue 52): the
# source-, kustomize- and helm-controller of Flux 2.9.4 run as host processes
# while their pods run (scripts/flux-controllers), the sync's artifact and the
# user's workloads are OCI artifacts in a loopback registry. The user's
# objects are checked by uid before and after. Each case sets up what it
# needs from whatever state the cluster is in, so that any of them runs alone:
#   delete        `fluxopctl delete` with 20 Kustomizations reconciling every
#                 second (and two HelmReleases, when helm-controller is built):
#                 every object they applied stays, same uid; the
#                 controllers' pods are gone before any finalizer is removed
#   failing_sync  a sync whose artifact does not exist: apply waits for it as
#                 the operator does and fails at its --timeout naming the
#                 sync's cause; the instance is not Ready
#   restored_sync dropping the sync while an admission policy refuses its
#                 deletion leaves it suspended; putting .spec.sync back,
#                 diff names the suspension and apply undoes it
#   kept_count    kustomize-controller and the sync dropped in one apply: the
#                 kept CRD counts the user's Kustomization, not the sync's
#   renamed_sync  a renamed sync takes over what the old one applied, same uid
#   prune_crds    kustomize-controller dropped with --prune-crds while 20
#                 Kustomizations reconcile: they go, what they applied stays
#   daemon_uninstall
#                 `kubectl delete fluxinstance` under the daemon (apply
#                 --watch --from-cluster), the workloads of delete
#                 reconciling: the daemon uninstalls, the instance goes,
#                 every object they applied stays, same uid; the pods are
#                 gone before any finalizer is removed (etcd's order)
#   upgrade       Flux 2.8 to 2.9 with the sync and the workloads reconciling:
#                 same uids, the sync reconciles again (not suspended), the
#                 2.9 images rolled out, diff then changes nothing
#   daemon_beside the daemon (from a file) beside the controllers for 60 s,
#                 re-applying every 20 s (FLUX_LIFECYCLE_BESIDE_WINDOW,
#                 FLUX_LIFECYCLE_BESIDE_EVERY): no re-apply loop, no fight
#                 over a field (no Deployment written, the sync's specs
#                 unchanged, no object changed), its reconciles and its
#                 writes of the instance bounded, the instance Ready
#                 throughout, same uids
#   adopt         a flux bootstrap installation kustomize-controller
#                 reconciles, its sync written by hand (interval 10m, wait,
#                 decryption, ignore): adopt --from-cluster generates no patch
#                 for what the server defaulted, carries the sync's settings;
#                 its apply and the sync's next reconcile recreate nothing
#   tree          `fluxopctl tree` of what the real controllers applied: the
#                 sync's lines are the flux CLI's `flux tree kustomization`
#                 lines, each object Ready; the FluxInstance's tree holds the
#                 sync and what it applied; a HelmRelease's, the chart's
#                 objects; -o json counts the inventory kubectl reads; a
#                 Secret applied by a Kustomization is named, never read
#                 (the audit-free proof: its read is refused by RBAC)
#
#   tests/e2e/flux_lifecycle_test.sh BIN ROOT [CASE...]
#
# Prints `ok NAME` / `FAIL NAME: reason` and closes with `N passed, M
# failed`. A skip (exit 77, a failure when CI=true) only when kubectl, Go (the
# controllers, the flux CLI, the cluster), docker-registry or the
# distribution are missing.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
run_limit=300
apply_timeout=3m
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2
# shellcheck source=scripts/lib/flux-controllers.sh
source "$root/scripts/lib/flux-controllers.sh"
# shellcheck source=tests/adopt/lib.sh
source "$root/tests/adopt/lib.sh"

controllers=$work/controllers
# A safety net should the test be killed before its cleanup.
export REGISTRY_LIFETIME=1800
e2e_cleanup_hook() { flux_controllers_cleanup "$controllers"; }

all_cases=(delete failing_sync restored_sync kept_count renamed_sync prune_crds daemon_uninstall upgrade
  daemon_beside adopt tree)
e2e_select_cases "$@"

e2e_needs "building source- and kustomize-controller" flux_controllers_ensure_built source-controller kustomize-controller
e2e_needs "building the flux CLI" flux_cli_ensure_built "$flux_controllers_flux_version"
# helm-controller's cases run where it is built (scripts/flux-controllers
# build helm-controller): the heaviest of the three.
helm=0
[ -x "$("$root/scripts/flux-controllers" bin helm-controller 2>/dev/null)" ] && helm=1
registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"

# ---------------------------------------------------------------------------
# The artifacts: the sync's (namespace apps, one ConfigMap) and the user's
# workloads (w0 ... w19, a ConfigMap each), one Kustomization a directory.

kustomizations=20
# How often each reconciles: what makes a controller act in the window a
# delete leaves it (a Kustomization reconciled then gets its finalizer back).
reconcile_every=1s
mkdir -p "$work/sync" "$work/workloads"
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: synced\n  namespace: apps\ndata:\n  from: sync\n' \
  >"$work/sync/apps.yaml"
for i in $(seq 0 $((kustomizations - 1))); do
  mkdir -p "$work/workloads/w$i"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w%s\n  namespace: apps\ndata:\n  from: w%s\n' \
    "$i" "$i" >"$work/workloads/w$i/configmap.yaml"
done
flux_sync_registry_start "$work/registry" 2>"$work/registry.err" ||
  abort "registry: the registry did not start: $(tail -n 1 "$work/registry.err")"
flux_sync_push apps:latest "$work/sync" >/dev/null 2>"$work/push.err" || abort "push: $(tail -n 1 "$work/push.err")"
flux_sync_push workloads:latest "$work/workloads" >/dev/null 2>"$work/push.err" ||
  abort "push: $(tail -n 1 "$work/push.err")"
if [ "$helm" = 1 ]; then
  flux_chart_repo_start "$work/charts" 2>"$work/charts.err" || abort "Helm repository: $(tail -n 1 "$work/charts.err")"
  flux_chart_add demo 0.1.0
fi

e2e_cluster_up "$work/cluster"
# The harsher case: controllers whose credentials outlive the service
# accounts delete removes (a controller's own token is refused once its
# service account is gone, and would then act on nothing).
export FLUX_CONTROLLERS_IDENTITY=admin
flux_controllers_start "$controllers" 2>"$work/start.err" ||
  { sed 's/^/  | /' "$work/start.err"; abort "scripts/flux-controllers start failed"; }

# instance FILE [SYNC_REF [COMPONENTS...]]: a Flux $distribution_version
# (2.9.x unless set, e.g. `distribution_version=2.8.x instance FILE`)
# instance into FILE, its sync the apps artifact at SYNC_REF (none when "-"),
# its components source-, kustomize- (and helm-) controller unless given.
instance() {
  local file=$1 ref=${2:-latest} components
  shift 2 2>/dev/null || shift $#
  if [ $# -gt 0 ]; then
    components=("$@")
  else
    components=(source-controller kustomize-controller)
    [ "$helm" = 0 ] || components+=(helm-controller)
  fi
  {
    printf 'apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n  namespace: flux-system\n'
    printf 'spec:\n  distribution:\n    version: "%s"\n    registry: ghcr.io/fluxcd\n  components:\n' \
      "${distribution_version:-2.9.x}"
    printf '    - %s\n' "${components[@]}"
    [ "$ref" = - ] ||
      printf '  sync:\n    kind: OCIRepository\n    url: oci://%s/apps\n    ref: %s\n    path: ./\n    interval: 1m\n' \
        "$REGISTRY_ADDR" "$ref"
  } >"$file"
}
full=$work/full.yaml
instance "$full"

# ---------------------------------------------------------------------------
# Helpers

field() {  # JSONPATH ARGS...: one field of an object
  local path=$1
  shift
  k get "$@" -o jsonpath="$path" 2>&1
}
# uids: "name uid" of every ConfigMap in apps but kube-root-ca.crt, sorted.
uids() {
  k -n apps get configmaps -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' |
    grep -v '^kube-root-ca.crt ' | sort
}
# still_as BEFORE WHAT COMMAND...: COMMAND prints what BEFORE holds; else
# says which lines of WHAT changed.
still_as() {
  local before=$1 what=$2 now
  shift 2
  now=$("$@") || { echo "reading $what failed"; return 1; }
  [ "$now" = "$(cat "$before")" ] && return 0
  echo "$what changed (< before, > after): $(diff "$before" <(echo "$now") | grep '^[<>]' | head -n 5 | tr '\n' ' ')"
  return 1
}
# same_uids BEFORE: the ConfigMaps of apps are those of BEFORE, same uids.
same_uids() { still_as "$1" "the ConfigMaps of apps" uids; }
# ready_all KIND NAMESPACE COUNT: COUNT objects of KIND in NAMESPACE, each
# Ready within 3 minutes.
ready_all() {
  local count
  wait_until 180 eval '[ "$(k -n '"$2"' get '"$1"' -o name 2>/dev/null | wc -l)" -ge '"$3"' ]' ||
    { echo "fewer than $3 $1 in $2"; return 1; }
  kwait 180 -n "$2" wait --for=condition=Ready "$1" --all >/dev/null 2>"$work/ready.err" ||
    { echo "not all $1 Ready in $2: $(tail -n 1 "$work/ready.err")"; return 1; }
  count=$(k -n "$2" get "$1" -o name | wc -l)
  [ "$count" -ge "$3" ] || { echo "$count $1 in $2, not $3"; return 1; }
}
# installed: the full instance applied, exit 0, from whatever the cluster
# holds, and its sync Ready (apply waits for it; checked here all the same).
installed() {
  instance "$full"
  install "$full" || return 1
  runs source-controller && runs kustomize-controller && ready_all kustomization "$ns" 1
}
# settles SECONDS FUNCTION ARGS...: wait_until, quiet; at the bound, the
# reason FUNCTION gives then (not that of its first try).
settles() {
  local bound=$1
  shift
  wait_until "$bound" "$@" >/dev/null 2>&1 || "$@"
}
runs() {  # NAME: the controller's process runs (within 60 s)
  wait_until 60 flux_controller_pid "$controllers" "$1" >/dev/null ||
    { echo "no $1 process: $(tail -n 3 "$controllers/supervisor.log")"; return 1; }
}
# user_workloads: the user's OCIRepository and 20 Kustomizations in apps,
# reconciling every $reconcile_every, each applying one ConfigMap (prune: true); with
# helm-controller, two HelmReleases of a chart in a loopback repository.
user_workloads() {
  {
    printf 'apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: workloads\n  namespace: apps\n'
    printf 'spec:\n  url: oci://%s/workloads\n  ref:\n    tag: latest\n  interval: 1m\n' "$REGISTRY_ADDR"
    for i in $(seq 0 $((kustomizations - 1))); do
      printf -- '---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: w%s\n  namespace: apps\n' "$i"
      printf 'spec:\n  interval: %s\n  prune: true\n  path: ./w%s\n  sourceRef:\n    kind: OCIRepository\n    name: workloads\n' \
        "$reconcile_every" "$i"
    done
    if [ "$helm" = 1 ]; then
      printf -- '---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: apps\n'
      printf 'spec:\n  url: %s\n  interval: 1m\n' "$FLUX_CHART_REPO_URL"
      for release in demo-a demo-b; do
        printf -- '---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: %s\n  namespace: apps\n' "$release"
        printf 'spec:\n  interval: %s\n  chart:\n    spec:\n      chart: demo\n      version: 0.1.0\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n' \
          "$reconcile_every"
      done
    fi
  } >"$work/workloads.yaml"
  k apply -f "$work/workloads.yaml" >/dev/null || { echo "kubectl apply of the user's workloads failed"; return 1; }
  ready_all ocirepository apps 1 && ready_all kustomization apps "$kustomizations" || return 1
  [ "$helm" = 0 ] || ready_all helmrelease apps 2 || return 1
  wait_until 60 eval '[ "$(uids | wc -l)" -ge '"$((kustomizations + 1 + 2 * helm))"' ]' ||
    { echo "the ConfigMaps of apps: $(uids | wc -l)"; return 1; }
}

# ---------------------------------------------------------------------------
# delete: nothing a controller could act on is released while it runs.

none_runs() {
  local name
  for name in source-controller kustomize-controller helm-controller; do
    ! flux_controller_pid "$controllers" "$name" >/dev/null || { echo "$name runs"; return 1; }
  done
}
# pods_gone_first FILE: in an uninstall's record, in its order (delete's
# stderr; release_order's), every line of the controllers' pods (the wait
# for them to be gone, one deleted) comes before the first removal of a
# finalizer.
pods_gone_first() {
  local pods finalizers
  pods=$(grep -n "the controllers' pods to be gone\|Pod/flux-system" "$1" | tail -n 1 | cut -d: -f1)
  finalizers=$(grep -n 'suspended and removed the finalizers of' "$1" | head -n 1 | cut -d: -f1)
  [ -n "$finalizers" ] || { echo "${1##*/} says nothing of the finalizers"; return 1; }
  [ -z "$pods" ] || [ "$pods" -lt "$finalizers" ] ||
    { echo "'$(sed -n "${pods}p" "$1")' after '$(sed -n "${finalizers}p" "$1")'"; return 1; }
}

case_delete() {
  given "delete: given Flux with its sync and the user's workloads reconciling" installed || return
  given "delete: given 20 Kustomizations reconciling every $reconcile_every" user_workloads || return
  uids >"$work/delete.before"
  fx delete delete -n "$ns" --kubeconfig "$KUBECONFIG" --yes --timeout 3m
  check "delete: exits 0" exit_is 0 delete
  check "delete: says the uninstallation completed" err_has delete '^Uninstallation completed in '
  check "delete: the controllers' pods were gone before a finalizer was removed" pods_gone_first "$work/delete.err"
  check "delete: every ConfigMap the Kustomizations and HelmReleases applied stays, same uid" \
    same_uids "$work/delete.before"
  # A controller that stopped late (the lag) would have acted by now.
  check "delete: every controller stops" wait_until 30 none_runs
  check "delete: and still after every controller stopped" same_uids "$work/delete.before"
  check "delete: no controller deleted anything of apps" \
    eval '! grep -h "ConfigMap/apps/[^ ]* deleted" "$controllers"/*.log'
}

# ---------------------------------------------------------------------------
# failing_sync: as the operator, a sync that does not become Ready fails.

case_failing_sync() {
  given "failing_sync: given Flux with its sync" installed || return
  local missing=$work/missing.yaml apply_timeout=45s
  instance "$missing" not-pushed
  apply failing-sync "$missing"
  check "failing_sync: apply exits 1 at its --timeout" exit_is 1 failing-sync
  check "failing_sync: the error names the sync's object and its cause" \
    err_has failing-sync '^error: timeout waiting for OCIRepository/flux-system/flux-system \(.*: [A-Za-z]+Failed: .*not-pushed'
  check "failing_sync: the instance is not Ready (HealthCheckFailed)" ready_is False HealthCheckFailed
  check "failing_sync: its Ready message names the sync" eval 'ready_message | grep -q "/flux-system/flux-system"'
}

# ---------------------------------------------------------------------------
# restored_sync: what fluxopctl suspended outside its apply, it undoes.

policy() {
  k apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: e2e-keep-sync
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: ["kustomize.toolkit.fluxcd.io"]
        apiVersions: ["*"]
        operations: ["DELETE"]
        resources: ["kustomizations"]
  validations:
    - expression: "oldObject.metadata.name != 'flux-system'"
      message: "the sync stays (an e2e admission policy)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: e2e-keep-sync
spec:
  policyName: e2e-keep-sync
  validationActions: [Deny]
YAML
}
refused() { ! k -n "$ns" delete kustomization flux-system --dry-run=server >/dev/null 2>&1; }
no_policy() { k delete validatingadmissionpolicybinding,validatingadmissionpolicy e2e-keep-sync --ignore-not-found >/dev/null; }
suspended() { field '{.spec.suspend}' -n "$ns" kustomization flux-system; }

case_restored_sync() {
  no_policy
  given "restored_sync: given Flux with its sync" installed || return
  given "restored_sync: given a policy refusing the sync's deletion" eval 'policy && wait_until 60 refused' || return
  local nosync=$work/nosync.yaml
  instance "$nosync" -
  apply drop-sync "$nosync"
  check "restored_sync: dropping the sync fails: its deletion is refused" exit_is 1 drop-sync
  check "restored_sync: and leaves it suspended" eval '[ "$(suspended)" = true ]'
  no_policy
  fx restore-diff diff "$full" $(common_flags)
  check "restored_sync: diff names the suspension it undoes" out_has restore-diff '^-  suspend: true$'
  apply restore "$full"
  check "restored_sync: apply with .spec.sync back exits 0" exit_is 0 restore
  check "restored_sync: the sync is no longer suspended" eval '[ "$(suspended)" != true ]'
  fx restore-again-diff diff "$full" $(common_flags)
  check "restored_sync: a diff after it changes nothing" exit_is 0 restore-again-diff
}

# ---------------------------------------------------------------------------
# kept_count: a CRD kept counts only what stays.

case_kept_count() {
  given "kept_count: given Flux with its sync" installed || return
  given "kept_count: given a Kustomization of the user's in apps" eval 'k apply -f - >/dev/null <<YAML
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: mine
  namespace: apps
spec:
  suspend: true
  interval: 1h
  prune: false
  path: ./
  sourceRef:
    kind: OCIRepository
    name: flux-system
    namespace: flux-system
YAML' || return
  local lean=$work/lean.yaml
  instance "$lean" - source-controller
  apply lean "$lean"
  check "kept_count: dropping kustomize-controller and the sync exits 0" exit_is 0 lean
  check "kept_count: the kept CRD counts the user's Kustomization only" err_has lean \
    '^warning: CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io kept: 1 Kustomization \(apps: 1\) remains'
  check "kept_count: the sync's Kustomization is gone" eval '! exists -n "$ns" kustomization/flux-system'
  check "kept_count: the user's stays" exists -n apps kustomization/mine
  k -n apps delete kustomization mine --wait=false >/dev/null 2>&1
}

# ---------------------------------------------------------------------------
# renamed_sync: the new sync takes over what the old one applied.

case_renamed_sync() {
  given "renamed_sync: given Flux with its sync" installed || return
  given "renamed_sync: given what the sync applied" wait_until 60 exists -n apps configmap/synced || return
  uids >"$work/renamed.before"
  local renamed=$work/renamed.yaml
  instance "$renamed"
  sed -i 's/^  sync:$/&\n    name: fleet/' "$renamed"
  apply renamed "$renamed"
  check "renamed_sync: apply of the renamed sync exits 0" exit_is 0 renamed
  check "renamed_sync: the new Kustomization is Ready" ready_all kustomization "$ns" 1
  check "renamed_sync: the old one is gone" eval '! exists -n "$ns" kustomization/flux-system'
  check "renamed_sync: what the old one applied stays, same uid" same_uids "$work/renamed.before"
  check "renamed_sync: and is the new one's" \
    eval '[ "$(field "{.metadata.labels.kustomize\.toolkit\.fluxcd\.io/name}" -n apps configmap synced)" = fleet ]'
}

# ---------------------------------------------------------------------------
# prune_crds: kustomize-controller dropped with its CRD (--prune-crds): the
# user's Kustomizations go, what they applied stays.

case_prune_crds() {
  given "prune_crds: given Flux with its sync and the user's workloads reconciling" installed || return
  given "prune_crds: given 20 Kustomizations reconciling every $reconcile_every" user_workloads || return
  uids >"$work/prune-crds.before"
  local lean=$work/prune-crds.yaml
  instance "$lean" - source-controller
  apply prune-crds "$lean" --prune-crds
  check "prune_crds: apply --prune-crds exits 0" exit_is 0 prune-crds
  check "prune_crds: the Kustomizations' CRD is gone" \
    wait_until 60 eval '! exists crd/kustomizations.kustomize.toolkit.fluxcd.io'
  check "prune_crds: every ConfigMap the Kustomizations applied stays, same uid" same_uids "$work/prune-crds.before"
  check "prune_crds: kustomize-controller stops" wait_until 30 eval '! flux_controller_pid "$controllers" kustomize-controller >/dev/null'
  check "prune_crds: and still after it stopped" same_uids "$work/prune-crds.before"
}

# ---------------------------------------------------------------------------
# daemon_uninstall: the daemon's uninstall, on `kubectl delete fluxinstance`,
# takes the path delete takes: nothing released while a controller runs.

# log_sizes: "FILE BYTES" of each log of the controllers now, for
# controllers_deleted to read only what they logged since.
log_sizes() {
  local file
  for file in "$controllers"/*.log; do echo "$file $(stat -c %s "$file")"; done
}
# controllers_deleted SIZES: no controller logged the deletion of a
# ConfigMap of apps since SIZES (log_sizes' output, in a file).
controllers_deleted() {
  local file from lines
  for file in "$controllers"/*.log; do
    from=$(awk -v f="$file" '$1 == f { print $2 }' "$1")
    lines=$(tail -c +$((${from:-0} + 1)) "$file" | grep -h "ConfigMap/apps/[^ ]* deleted" | head -n 3)
    [ -z "$lines" ] || { echo "${file##*/}: $lines"; return 1; }
  done
}
finalized() {  # the daemon's finalizer is on the instance
  [[ "$(field '{.metadata.finalizers}' -n "$ns" fluxinstance flux)" == *fluxcd.controlplane.io/finalizer* ]]
}
uninstall_logged() {  # the daemon's log says it uninstalled
  sed -n '/the FluxInstance is being deleted: uninstalling/,$p' "$log" | grep -q ' INFO Uninstallation completed in ' ||
    { echo "the daemon's log says no 'Uninstallation completed': $(tail -n 1 "$log")"; return 1; }
}
# The uninstall's order as the cluster records it. The daemon's log names
# no wait for the pods (delete's stderr does), so: a watch of the
# controllers' pods and one of the user's Kustomizations (watch_release,
# in the background, $release_watchers), each event with the
# resourceVersion of its write, etcd's revision, one order for every
# object of this cluster's one etcd. release_order then writes, sorted by
# it, "REVISION Pod/flux-system/NAME deleted" and "REVISION suspended and
# removed the finalizers of Kustomization/apps/NAME" (the first write that
# left one suspended without finalizer) into FILE, for pods_gone_first.
watch_release() {
  kubectl -n "$ns" get pods --watch --output-watch-events \
    -o jsonpath='{.type} {.object.metadata.resourceVersion} Pod/{.object.metadata.namespace}/{.object.metadata.name}{"\n"}' \
    >"$work/release.pods" 2>"$work/release.pods.err" &
  release_watchers=($!)
  kubectl -n apps get kustomizations --watch --output-watch-events \
    -o jsonpath='{.type} {.object.metadata.resourceVersion} Kustomization/{.object.metadata.namespace}/{.object.metadata.name} suspend={.object.spec.suspend} finalizers={.object.metadata.finalizers}{"\n"}' \
    >"$work/release.kustomizations" 2>"$work/release.kustomizations.err" &
  release_watchers+=($!)
}
watching_release() {  # both watches listed what there is: they see what follows
  grep -q '^ADDED .* Pod/' "$work/release.pods" &&
    [ "$(grep -c '^ADDED .* Kustomization/' "$work/release.kustomizations")" -ge "$kustomizations" ]
}
release_order() {  # FILE
  {
    awk '$1 == "DELETED" { print $2, $3, "deleted" }' "$work/release.pods"
    awk '$1 == "MODIFIED" && $4 == "suspend=true" && $5 == "finalizers=" && !seen[$3]++ {
      print $2, "suspended and removed the finalizers of", $3 }' "$work/release.kustomizations"
  } | sort -n >"$1"
  grep -q ' Pod/.* deleted$' "$1" || { echo "the watch saw no pod of the controllers deleted: $(head -n 1 "$work/release.pods.err")"; return 1; }
  grep -q ' suspended and removed ' "$1" ||
    { echo "the watch saw no Kustomization released: $(head -n 1 "$work/release.kustomizations.err")"; return 1; }
}

case_daemon_uninstall() {
  given "daemon_uninstall: given Flux with its sync and the user's workloads reconciling" installed || return
  given "daemon_uninstall: given 20 Kustomizations reconciling every $reconcile_every" user_workloads || return
  uids >"$work/daemon-uninstall.before"
  log_sizes >"$work/daemon-uninstall.logs"
  # From the cluster: only then does the daemon put the operator's
  # finalizer on the instance, and uninstall when it is deleted (from a
  # file, the instance deleted is only gone).
  start_daemon daemon-uninstall --from-cluster -n "$ns" --distribution-artifact "$dist"
  watch_release
  if given "daemon_uninstall: given the daemon's reconcile finished, its finalizer on the instance" \
    wait_until 300 eval 'logged "Reconciliation finished in " && finalized' &&
    given "daemon_uninstall: given the controllers' pods and the Kustomizations watched" wait_until 60 watching_release; then
    k -n "$ns" delete fluxinstance flux --wait=false >/dev/null
    check "daemon_uninstall: the FluxInstance is gone within 3 minutes" wait_until 180 absent fluxinstance/flux
    check "daemon_uninstall: the daemon says the uninstallation completed" settles 30 uninstall_logged
    check "daemon_uninstall: the controllers' pods were gone before a finalizer was removed" \
      eval 'release_order "$work/daemon-uninstall.order" && pods_gone_first "$work/daemon-uninstall.order"'
    check "daemon_uninstall: every ConfigMap the Kustomizations and HelmReleases applied stays, same uid" \
      same_uids "$work/daemon-uninstall.before"
    check "daemon_uninstall: every controller stops" wait_until 30 none_runs
    check "daemon_uninstall: and still after every controller stopped" same_uids "$work/daemon-uninstall.before"
    check "daemon_uninstall: no controller deleted anything of apps" controllers_deleted "$work/daemon-uninstall.logs"
  fi
  local watcher
  for watcher in "${release_watchers[@]}"; do stop_process "$watcher"; done
  stop_daemon TERM 30
  check "daemon_uninstall: SIGTERM ends the daemon with exit 0" stopped_cleanly
}

# ---------------------------------------------------------------------------
# upgrade: Flux 2.8 to 2.9 while the controllers act. (Their processes are
# the 2.9.4 builds whatever the Deployments' images.)

revision_is() {  # PREFIX: the instance's lastAppliedRevision starts with it
  local revision
  revision=$(fi_get '{.status.lastAppliedRevision}')
  [[ $revision == "$1"* ]] || { echo "lastAppliedRevision is '$revision', not $1*"; return 1; }
}
installed_old() {  # Flux 2.8 applied from whatever the cluster holds, its sync Ready
  distribution_version=2.8.x instance "$work/upgrade-old.yaml"
  install "$work/upgrade-old.yaml" || return 1
  revision_is v2.8. && runs source-controller && runs kustomize-controller && ready_all kustomization "$ns" 1
}
# sync_reconciled REQUESTED: the sync's source and Kustomization handled
# the request reconcile.fluxcd.io/requestedAt=REQUESTED (as `flux reconcile`
# asks: a suspended object, or one its controller cannot read, is not
# reconciled) and are Ready for their generation, not suspended.
sync_reconciled() {
  local kind got handled generation observed ready suspend
  for kind in ocirepository kustomization; do
    got=$(field '{.status.lastHandledReconcileAt} {.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="Ready")].status} {.spec.suspend}' \
      -n "$ns" "$kind" flux-system)
    read -r handled generation observed ready suspend <<<"$got"
    [ "${suspend:-false}" = false ] || { echo "$kind/flux-system is suspended"; return 1; }
    [ "$handled" = "$1" ] && [ "$ready" = True ] && [ "$generation" = "$observed" ] ||
      { echo "$kind/flux-system: lastHandledReconcileAt, generation, observedGeneration, Ready are '$got'"; return 1; }
  done
}
# sync_runs_again: a run of the sync's source and Kustomization asked for as
# Flux's docs ask (kubectl annotate, whose request stays its own: a diff
# after it would otherwise take it over and remove it), then handled by both
# within 2 minutes, as sync_reconciled says.
sync_runs_again() {
  local requested
  requested=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
  k -n "$ns" annotate ocirepository,kustomization flux-system --overwrite \
    "reconcile.fluxcd.io/requestedAt=$requested" >/dev/null || { echo "kubectl annotate failed"; return 1; }
  settles 120 sync_reconciled "$requested"
}
# rolled_out NAME: every Deployment of $ns rolled out, running the images
# `fluxopctl build --operator` renders for $work/NAME.yaml.
rolled_out() {
  XDG_CACHE_HOME=$work/cache timeout -k 5 300 "$bin" build --operator "$work/$1.yaml" --distribution-artifact "$dist" \
    >"$work/$1.rendered.yaml" 2>"$work/$1.build.err" || { echo "fluxopctl build: $(tail -n 1 "$work/$1.build.err")"; return 1; }
  local d
  for d in $(deployments "$work/$1.rendered.yaml"); do
    kwait 180 -n "$ns" rollout status "deployment/$d" >/dev/null 2>&1 || { echo "deployment/$d not rolled out"; return 1; }
  done
  [ "$(live_images)" = "$(images "$work/$1.rendered.yaml")" ] ||
    { echo "the Deployments run $(live_images | tr '\n' ' '), 2.9 renders $(images "$work/$1.rendered.yaml" | tr '\n' ' ')"; return 1; }
}

case_upgrade() {
  given "upgrade: given Flux 2.8 with its sync reconciling" installed_old || return
  given "upgrade: given 20 Kustomizations reconciling every $reconcile_every" user_workloads || return
  uids >"$work/upgrade.before"
  instance "$work/upgrade.yaml"
  apply upgrade "$work/upgrade.yaml"
  check "upgrade: apply of 2.9 exits 0" exit_is 0 upgrade
  check "upgrade: the instance says 2.9" revision_is v2.9.
  check "upgrade: every ConfigMap the Kustomizations and HelmReleases applied stays, same uid" \
    same_uids "$work/upgrade.before"
  check "upgrade: the sync reconciles again, Ready for its generation, not suspended" sync_runs_again
  check "upgrade: the Deployments rolled out the 2.9 images" rolled_out upgrade
  check "upgrade: the user's Kustomizations are Ready" ready_all kustomization apps "$kustomizations"
  local flags
  mapfile -t flags < <(common_flags)
  fx upgrade-diff diff "$work/upgrade.yaml" "${flags[@]}"
  check "upgrade: a diff after it changes nothing" exit_is 0 upgrade-diff
  check "upgrade: and the ConfigMaps are still the same" same_uids "$work/upgrade.before"
}

# ---------------------------------------------------------------------------
# daemon_beside: the daemon and the controllers side by side for
# $beside_window seconds, the daemon re-applying every $beside_every.

# The window and the daemon's reconcileEvery, whole seconds (60, 20s).
beside_window=${FLUX_LIFECYCLE_BESIDE_WINDOW:-60}
beside_every=${FLUX_LIFECYCLE_BESIDE_EVERY:-20s}
[[ $beside_window =~ ^[1-9][0-9]*$ && $beside_every =~ ^[1-9][0-9]*s$ ]] ||
  abort "FLUX_LIFECYCLE_BESIDE_WINDOW ($beside_window) and FLUX_LIFECYCLE_BESIDE_EVERY ($beside_every): seconds, as 60 and 20s"
# What a re-apply could fight over: "KIND/NAME resourceVersion" of each
# Deployment, "KIND/NAME generation" of the sync's source and Kustomization.
written() {
  k -n "$ns" get deployments -o jsonpath='{range .items[*]}Deployment/{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}' || return 1
  k -n "$ns" get ocirepository,kustomization flux-system \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.generation}{"\n"}{end}'
}
# The daemon's log since the window opened (its size then in $beside_from).
window_log() { tail -c +$((beside_from + 1)) "$log"; }
window_reconciles() { window_log | grep -c ' INFO Reconciliation finished in '; }
window_requests() {  # the sum of the requests its reconciles logged
  window_log | awk '/ INFO Reconciliation finished in / && match($0, / requests=[0-9]+/) {
    n += substr($0, RSTART + 10, RLENGTH - 10) } END { print n + 0 }'
}
# at_most COUNT WHAT N: N is at most COUNT.
at_most() { [ "$3" -le "$1" ] || { echo "$3 $2 in ${beside_window}s, more than $1"; return 1; }; }
ready_throughout() {  # the watch of the instance ($work/beside.watch) saw Ready=True only
  local states
  states=$(cut -d' ' -f2 "$work/beside.watch" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
  [ -s "$work/beside.watch" ] || { echo "the watch of the instance saw nothing: $(head -n 1 "$work/beside.watch.err")"; return 1; }
  ! cut -d' ' -f2 "$work/beside.watch" | grep -qv '^True$' || { echo "Ready was (count state): $states"; return 1; }
}

case_daemon_beside() {
  given "daemon_beside: given Flux with its sync and the user's workloads reconciling" installed || return
  given "daemon_beside: given 20 Kustomizations reconciling every $reconcile_every" user_workloads || return
  uids >"$work/beside.before"
  local watched=$work/beside.yaml every_s=${beside_every%s} reconciles writes watcher
  instance "$watched"
  sed -i "0,/^  namespace: $ns\$/s//&\n  annotations:\n    fluxcd.controlplane.io\/reconcileEvery: \"$beside_every\"/" "$watched"
  start_daemon beside "$watched" --distribution-artifact "$dist"
  # The window opens after the first re-apply: the first reconcile changes
  # the instance (its annotation) and is followed by the first report
  # (FluxReport created).
  if given "daemon_beside: given the daemon's first reconcile and first re-apply finished" \
    wait_until 300 eval '[ "$(grep -c " INFO Reconciliation finished in " "$log")" -ge 2 ]'; then
    beside_from=$(stat -c %s "$log")
    written >"$work/beside.written"
    # Every state of the instance in the window: the first line its state
    # when the watch starts, then a line a write.
    timeout "$beside_window" kubectl -n "$ns" get fluxinstance flux --watch \
      -o jsonpath='{.metadata.resourceVersion} {.status.conditions[?(@.type=="Ready")].status}{"\n"}' \
      >"$work/beside.watch" 2>"$work/beside.watch.err" &
    watcher=$!
    wait "$watcher"
    reconciles=$(window_reconciles)
    writes=$(($(wc -l <"$work/beside.watch") - 1))
    echo "# daemon_beside: in ${beside_window}s $reconciles reconciles ($(window_requests) API requests)," \
      "$writes writes of the instance"
    # A re-apply loop (a reconcile started by the daemon's own write, or
    # by a controller's status write) reconciles every few seconds: far more
    # than one every $beside_every.
    check "daemon_beside: at most one reconcile every $beside_every, and one more" \
      at_most $((beside_window / every_s + 1)) reconciles "$reconciles"
    # Else what follows sees no re-apply, and proves nothing.
    check "daemon_beside: the daemon re-applied in the window" eval '[ "$reconciles" -ge 1 ]'
    # A fight: a re-apply that finds a field changed by a controller (or
    # the API server's defaults) writes it back, each time: the Deployment's
    # resourceVersion moves, the sync's spec gets a new generation, the log
    # names the object configured.
    check "daemon_beside: no Deployment written, the sync's specs unchanged" still_as "$work/beside.written" "the Deployments or the sync" written
    check "daemon_beside: the daemon's log names no object changed" \
      eval '! window_log | grep -E " (created|configured|replaced|deleted)( |$)"'
    # A re-apply that changes something first writes Ready=Unknown
    # (Progressing): seen by the watch.
    check "daemon_beside: the instance is Ready throughout" ready_throughout
    # The daemon's writes of the instance: its status once a reconcile, and
    # one more: that of the reconcile whose log line opened the window, which
    # may land just after it (seen once in a rehearsal: 3 writes, 2
    # reconciles). A loop or a fight writes far more.
    check "daemon_beside: the daemon wrote the instance at most once a reconcile, and once more" \
      at_most $((reconciles + 1)) "writes of the instance" "$writes"
    check "daemon_beside: every ConfigMap of the user's stays, same uid" same_uids "$work/beside.before"
  fi
  stop_daemon TERM 30
  check "daemon_beside: SIGTERM ends the daemon with exit 0" stopped_cleanly
}

# ---------------------------------------------------------------------------
# adopt: a flux bootstrap installation that the real kustomize-controller
# reconciles, adopted from the cluster and applied. Its sync is written by
# hand as real repositories write it (interval 10m, wait, decryption, an
# ignore rule); its artifact is the bootstrap directory itself, with the
# apps namespace and its ConfigMap beside.

# adopt_directory DIR: the bootstrap directory, its sync the loopback
# registry's fleet artifact.
adopt_directory() {
  local dir=$1
  bootstrap "$dir" "$flux_controllers_flux_version" oci || return 1
  cp "$work/sync/apps.yaml" "$dir/apps.yaml" && echo '- apps.yaml' >>"$dir/kustomization.yaml" ||
    { echo "adding apps.yaml failed"; return 1; }
  python3 - "$dir/gotk-sync.yaml" "$REGISTRY_ADDR" <<'EOF' || { echo "editing gotk-sync.yaml failed"; return 1; }
import sys, yaml
path, registry = sys.argv[1:]
docs = list(yaml.safe_load_all(open(path)))
for doc in docs:
    spec = doc["spec"]
    if doc["kind"] == "OCIRepository":
        spec["url"] = "oci://%s/fleet" % registry
        spec.pop("secretRef", None)
        spec["ignore"] = "*.md\n"
    else:
        spec.update(path="./", interval="10m", wait=True, decryption={"provider": "sops"})
yaml.safe_dump_all(docs, open(path, "w"), sort_keys=False)
EOF
}
# adopt_installed DIR: no FluxInstance; DIR applied as flux bootstrap
# applies it (server-side, its field manager), then reconciled by
# kustomize-controller.
adopt_installed() {
  local dir=$1
  if exists -n "$ns" fluxinstance/flux; then
    fx adopt-uninstall delete -n "$ns" --kubeconfig "$KUBECONFIG" --yes --timeout 3m
    exit_is 0 adopt-uninstall || return 1
  fi
  adopt_directory "$dir" || return 1
  flux_sync_push fleet:latest "$dir" >/dev/null 2>"$work/push.err" || { echo "push: $(tail -n 1 "$work/push.err")"; return 1; }
  k apply --server-side --field-manager=flux -f "$dir/gotk-components.yaml" >/dev/null ||
    { echo "applying gotk-components.yaml failed"; return 1; }
  kwait 120 wait --for=condition=Established crd --all >/dev/null || { echo "the CRDs are not established"; return 1; }
  k apply --server-side --field-manager=flux -f "$dir/gotk-sync.yaml" >/dev/null ||
    { echo "applying gotk-sync.yaml failed"; return 1; }
  runs source-controller && runs kustomize-controller && ready_all kustomization "$ns" 1 || return 1
  wait_until 60 eval '[ "$(field "{.metadata.labels.kustomize\.toolkit\.fluxcd\.io/name}" -n "$ns" deployment helm-controller)" = flux-system ]' ||
    { echo "kustomize-controller did not apply the installation"; return 1; }
}
# Every object of the installation and the ConfigMap its sync applied,
# "KIND/NAME uid", sorted.
adopted_uids() {
  k get -f "$1/gotk-components.yaml" -f "$1/gotk-sync.yaml" -f "$1/apps.yaml" \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.uid}{"\n"}{end}' | sort
}
# patched PATH: a patch of the adopted instance writes PATH.
patched() { grep -q "^ *path: $1\$" "$work/adopt.out"; }

case_adopt() {
  local dir=$work/adopt/flux-system
  rm -rf "$work/adopt"
  given "adopt: given a bootstrap installation kustomize-controller reconciles" adopt_installed "$dir" || return
  adopted_uids "$dir" >"$work/adopt.before"
  local flags
  mapfile -t flags < <(common_flags)
  fx adopt adopt --from-cluster -n "$ns" "${flags[@]}"
  check "adopt: exits 0, nothing of the installation lost" exit_is 0 adopt
  check "adopt: what the server defaulted in what kustomize-controller applied is no patch" \
    eval '! patched /spec/strategy && ! grep -q "^ *kind: Namespace$" "$work/adopt.out"'
  check "adopt: the sync's interval 10m is the render's 10m0s, no patch" eval '! patched /spec/interval'
  check "adopt: the sync's decryption, wait and ignore are carried as patches" \
    eval 'patched /spec/decryption && patched /spec/wait && patched /spec/ignore'
  apply adopt-apply "$work/adopt.out"
  check "adopt: apply of the adopted instance exits 0" exit_is 0 adopt-apply
  check "adopt: nothing recreated, the synced ConfigMap kept (same uids)" still_as "$work/adopt.before" "the installation" adopted_uids "$dir"
  check "adopt: the sync keeps its settings" eval '[ "$(field "{.spec.wait} {.spec.decryption.provider}" -n "$ns" kustomization flux-system)" = "true sops" ]'
  check "adopt: the sync reconciles again under the instance" sync_runs_again
  check "adopt: and recreates nothing (same uids)" still_as "$work/adopt.before" "the installation" adopted_uids "$dir"
  fx adopt-diff diff "$work/adopt.out" "${flags[@]}"
  check "adopt: diff after it changes nothing, the reconcile request left as asked" exit_is 0 adopt-diff
}

# ---------------------------------------------------------------------------
# tree: what the controllers applied, drawn.

# without_states FILE: fluxopctl tree's lines without the state each ends
# with ("  Ready", "  InProgress: ..."): the flux CLI's lines.
without_states() { sed -E 's/  (Ready|InProgress|Failed|NotFound|NotRead)(: .*)?$//' "$1"; }
# every_line_ready NAME: each line of the fx NAME's tree says Ready.
every_line_ready() {
  local not
  not=$(grep -v '  Ready$' "$work/$1.out")
  [ -z "$not" ] || { echo "not Ready: $not"; return 1; }
}
# secret_kustomization: a Kustomization in apps applying a ConfigMap and a
# Secret (the workloads artifact's w0 path holds the ConfigMap; this one's
# own artifact, the Secret too), Ready.
case_tree() {
  given "tree: given the instance, its sync and the user's workloads reconciled" \
    eval 'installed && user_workloads' || return
  local flux_bin
  flux_bin=$(flux_cli "$flux_controllers_flux_version")
  fx tree-sync tree kustomization/flux-system -n "$ns" --kubeconfig "$KUBECONFIG"
  check "tree: the sync's tree exits 0" exit_is 0 tree-sync
  timeout 60 "$flux_bin" tree kustomization flux-system -n "$ns" --kubeconfig "$KUBECONFIG" \
    >"$work/flux-tree.out" 2>"$work/flux-tree.err"
  check "tree: its lines are flux tree kustomization's, with the states added" \
    eval 'diff <(without_states "$work/tree-sync.out") <(sed "/^\$/d" "$work/flux-tree.out")'
  check "tree: the sync and what it applied are Ready" every_line_ready tree-sync
  check "tree: it names the synced ConfigMap" out_has tree-sync '^└── ConfigMap/apps/synced  Ready$|^├── ConfigMap/apps/synced  Ready$'

  fx tree-instance tree fluxinstance/flux -n "$ns" --kubeconfig "$KUBECONFIG"
  check "tree: the FluxInstance's tree holds the sync, and under it what the sync applied" \
    out_has tree-instance '^FluxInstance/flux-system/flux  Ready$' \
    '^[├└]── Kustomization/flux-system/flux-system  Ready$' '^[│ ]   [├└]── ConfigMap/apps/synced  Ready$' \
    '^[├└]── Deployment/flux-system/kustomize-controller  Ready$'

  fx tree-w0 tree ks w0 -n apps --kubeconfig "$KUBECONFIG" -o json
  check "tree: -o json, the upstream spelling ks NAME: what kubectl reads of the inventory" \
    eval '[ "$(jq -r "[.resources[] | .kind + \"/\" + .namespace + \"/\" + .name + \" \" + .state] | join(\",\")" "$work/tree-w0.out")" = "ConfigMap/apps/w0 Ready" ] &&
      [ "$(k -n apps get kustomization w0 -o jsonpath="{.status.inventory.entries[*].id}")" = "apps_w0__ConfigMap" ]'
  if [ "$helm" = 1 ]; then
    # It reconciles every second: its tree is read again until it shows it
    # between two runs (InProgress while one runs is what tree should say).
    wait_until 60 eval 'fx tree-hr tree hr demo-a -n apps --kubeconfig "$KUBECONFIG" &&
      grep -q "^HelmRelease/apps/demo-a  Ready$" "$work/tree-hr.out"'
    check "tree: a HelmRelease's tree holds the chart's objects (its .status.inventory)" \
      eval 'out_has tree-hr "^HelmRelease/apps/demo-a  Ready$" "^[├└]── ConfigMap/apps/demo-a" &&
        [ "$(($(wc -l <"$work/tree-hr.out") - 1))" = "$(k -n apps get helmrelease demo-a -o jsonpath="{.status.inventory.entries[*].id}" | wc -w)" ]'
  fi

  # A Kustomization that applied a Secret: named, never read, proven by a
  # reader whose RBAC refuses Secrets.
  mkdir -p "$work/secret-app"
  printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: tree-secret\n  namespace: apps\nstringData:\n  token: t0ken\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tree-config\n  namespace: apps\n' \
    >"$work/secret-app/app.yaml"
  flux_sync_push secret-app:latest "$work/secret-app" >/dev/null 2>"$work/push.err" ||
    { fail "tree: pushing the Secret's artifact" "$(tail -n 1 "$work/push.err")"; return; }
  printf 'apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: secret-app\n  namespace: apps\nspec:\n  url: oci://%s/secret-app\n  ref:\n    tag: latest\n  interval: 1m\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: secret-app\n  namespace: apps\nspec:\n  interval: 1m\n  prune: true\n  path: ./\n  sourceRef:\n    kind: OCIRepository\n    name: secret-app\n' \
    "$REGISTRY_ADDR" | k apply -f - >/dev/null
  given "tree: given a Kustomization that applied a Secret, Ready" \
    kwait 180 -n apps wait --for=condition=Ready kustomization/secret-app || return
  k -n apps create serviceaccount tree-reader >/dev/null 2>&1
  k create clusterrole tree-reader --verb=get,list --resource=kustomizations.kustomize.toolkit.fluxcd.io,configmaps >/dev/null 2>&1
  k create clusterrolebinding tree-reader --clusterrole=tree-reader --serviceaccount=apps:tree-reader >/dev/null 2>&1
  fx tree-secret tree ks secret-app -n apps --kubeconfig "$KUBECONFIG" --as system:serviceaccount:apps:tree-reader
  check "tree: the Secret is named, NotRead, never asked for; the ConfigMap Ready" \
    eval 'exit_is 0 tree-secret && out_has tree-secret "^[├└]── Secret/apps/tree-secret  NotRead: a Secret: fluxopctl reads none$" "^[├└]── ConfigMap/apps/tree-config  Ready$" &&
      ! grep -q t0ken "$work/tree-secret.out"'
  fx tree-missing tree ks nothing -n apps --kubeconfig "$KUBECONFIG"
  check "tree: a Kustomization that is not there: exit 1, one error line naming it" \
    eval 'exit_is 1 && [ ! -s "$work/tree-missing.out" ] && err_has tree-missing "^error: Kustomization/apps/nothing: not found$"'
  fx tree-bad tree gitrepository/flux-system -n "$ns" --kubeconfig "$KUBECONFIG"
  check "tree: a kind without an inventory is a usage error" usage_error tree-bad gitrepository
  k -n apps delete kustomization/secret-app ocirepository/secret-app --wait=false >/dev/null 2>&1
  k delete clusterrolebinding/tree-reader clusterrole/tree-reader --wait=false >/dev/null 2>&1
}

e2e_run_cases
summary
