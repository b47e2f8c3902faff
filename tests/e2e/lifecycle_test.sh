#!/usr/bin/env bash
# End-to-end tests of the lifecycle commands (delete, the uninstall; get,
# wait, suspend, resume, reconcile) on a local control plane of their own;
# every outcome is checked with kubectl. The cases, each from whatever the
# cluster holds (it installs Flux, and the user's objects, first):
#   uninstall   Flux installed with a sync, Flux custom resources of a user's with
#     finalizers (as the controllers leave them) and a workload they deployed
#     (labelled as kustomize-controller labels it); --dry-run=server changes
#     nothing; an object of the inventory held by a finalizer of someone
#     else's makes the uninstall fail naming it, within --timeout, and keeps
#     the instance; the API refusing one DELETE (an admission policy) fails
#     the uninstall after the controllers went, and the instance says so:
#     Ready=False Uninstalling, `get` shows it, `wait` fails naming it;
#     released, a second run converges: the controllers, the
#     CRDs and the custom resources gone, nothing left terminating, the
#     namespace and the workload kept; run again, there is nothing to do
#   keep_crds   reinstalled: `delete --keep-crds` killed half-way (the instance not
#     Ready), then run again, converges; the CRDs and the custom resources stay with their
#     finalizers; a reinstall adopts them
#   hostile_status
#               control characters in the status are printed escaped by get
#   daemon      with `apply --watch --from-cluster` running: it adds the operator's
#     finalizer to the instance; `get` shows what kubectl shows (table and
#     -o json); `wait` returns once ready; `suspend` makes `wait` fail and a
#     one-shot `apply` refuse (`--force` applies); `resume` and `reconcile`
#     (--force) are answered by the daemon (lastHandledReconcileAt,
#     lastHandledForceAt); `kubectl delete fluxinstance` is the uninstall
#   usage       FILE with -n, a bad --timeout, a bad -o: exit 2
#
#   tests/e2e/lifecycle_test.sh BIN ROOT [CASE...]
#
# The distribution is $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else ROOT/../shared/
# flux-distribution. Closes with `N passed, M failed`; a skip (exit 77, a
# failure when CI=true) only when kubectl, the distribution or the cluster
# binaries are missing.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
apply_timeout=5m
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

command -v jq >/dev/null || skip_test "jq is not installed"
all_cases=(uninstall keep_crds hostile_status daemon usage)
e2e_select_cases "$@"

instance=$root/tests/e2e/instances/flux-2.9-four-git-sync.yaml
# The user's: a source and a Kustomization with the controllers' finalizers,
# and the workload the Kustomization deployed.
user_objects() {
  k create namespace apps --dry-run=client -o yaml | k apply -f - >/dev/null || return 1
  k apply -f - >/dev/null <<EOF
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: apps
  namespace: apps
  finalizers: [finalizers.fluxcd.io]
spec:
  interval: 10m
  url: https://git.example.com/apps.git
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: apps
  finalizers: [finalizers.fluxcd.io]
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: apps}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
  namespace: apps
  labels:
    kustomize.toolkit.fluxcd.io/name: apps
    kustomize.toolkit.fluxcd.io/namespace: apps
spec:
  replicas: 1
  selector: {matchLabels: {app: podinfo}}
  template:
    metadata: {labels: {app: podinfo}}
    spec:
      containers: [{name: podinfo, image: ghcr.io/stefanprodan/podinfo:6.7.0}]
EOF
}
controllers() { k -n "$ns" get deployments -l app.kubernetes.io/part-of=flux -o name 2>/dev/null; }
flux_crds() { k get crds -o name 2>/dev/null | grep 'toolkit\.fluxcd\.io' ; }
# Namespaces and CRDs being deleted: none may be left so.
left_terminating() {
  k get namespaces,crds -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.deletionTimestamp}{"\n"}{end}' |
    awk 'NF > 1 {print $1}'
}

e2e_cluster_up "$work/cluster"

# given_synced_flux CASE: Flux with a sync installed, and the user's objects; false
# (the case failed) when not.
given_synced_flux() {
  check "$1: install Flux with a sync" install "$instance" &&
    check "$1: the user's custom resources with finalizers and a workload" user_objects ||
    { fail "$1" "no installation to start from"; return 1; }
}

# --- the uninstall -------------------------------------------------------------

dry_run() {
  fx dry delete -n "$ns" --kubeconfig "$KUBECONFIG" --dry-run=server
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  grep -q '^Deployment/flux-system/source-controller deleted (server dry run)$' "$work/dry.out" ||
    { echo "no dry-run deletion of source-controller on stdout"; return 1; }
  grep -q '^CustomResourceDefinition/gitrepositories.source.toolkit.fluxcd.io deleted (server dry run)$' "$work/dry.out" ||
    { echo "no dry-run deletion of the GitRepository CRD on stdout"; return 1; }
  [ -n "$(controllers)" ] || { echo "the controllers are gone"; return 1; }
  [ "$(k -n apps get kustomization apps -o jsonpath='{.metadata.finalizers[0]}')" = finalizers.fluxcd.io ] ||
    { echo "the finalizers were removed"; return 1; }
  exists -n "$ns" fluxinstance flux || { echo "the instance is gone"; return 1; }
}

# The API refusing to delete one object of the inventory (an admission
# policy: the outage of one request, at a known point): the uninstall fails
# after the controllers went; the instance says so before anything was
# deleted: not Ready, `get` shows it, `wait` fails naming it.
hold_policy() {
  cat <<'EOF_HOLD'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: test-hold-kustomize-controller
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [DELETE]
        resources: [serviceaccounts]
  validations:
    - expression: oldObject.metadata.name != 'kustomize-controller'
      message: the test holds kustomize-controller's ServiceAccount
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: test-hold-kustomize-controller
spec:
  policyName: test-hold-kustomize-controller
  validationActions: [Deny]
EOF_HOLD
}
# The policy takes effect once the API server has loaded it.
held() { ! k -n "$ns" delete serviceaccount kustomize-controller --dry-run=server >/dev/null 2>&1; }
denied() {
  fx denied delete -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 2m --yes
  [ "$rc" = 1 ] || { echo "exit $rc (want 1)"; return 1; }
  grep -q "kustomize-controller's ServiceAccount" "$work/denied.err" || { echo "the error does not say why"; return 1; }
  [ -z "$(controllers)" ] || { echo "the controllers are still there: it did not fail midway"; return 1; }
}
uninstalling() { # the instance is not Ready, for its generation, and says why
  local got status reason observed generation
  got=$(k -n "$ns" get fluxinstance flux -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason} {.status.conditions[?(@.type=="Ready")].observedGeneration} {.metadata.generation}')
  read -r status reason observed generation <<<"$got"
  [ "$status $reason" = "False Uninstalling" ] && [ "$observed" = "$generation" ] || { echo "Ready: $got"; return 1; }
}
get_uninstalling() {
  fx get_uninstalling get -n "$ns" --kubeconfig "$KUBECONFIG"
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  grep -qE "^flux +$ns +False " "$work/get_uninstalling.out" && grep -q "^message: Uninstallation in progress" "$work/get_uninstalling.out" ||
    { cat "$work/get_uninstalling.out"; return 1; }
}
wait_uninstalling() {
  fx wait_uninstalling wait -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 60s
  [ "$rc" = 1 ] || { echo "exit $rc (want 1)"; return 1; }
  grep -q "Uninstalling" "$work/wait_uninstalling.err" || { echo "wait does not name it: $(head -n 1 "$work/wait_uninstalling.err")"; return 1; }
}
# A finalizer nobody will remove holds an object of the inventory.
stuck() {
  local start=$SECONDS
  fx stuck delete -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 20s --yes
  [ "$rc" = 1 ] || { echo "exit $rc (want 1)"; return 1; }
  [ "$((SECONDS - start))" -lt 90 ] || { echo "took $((SECONDS - start)) s with --timeout 20s"; return 1; }
  [ "$(wc -l <"$work/stuck.err" | tr -d ' ')" -ge 1 ] || return 1
  grep -q '^error: timeout waiting for the deleted objects to be gone: .*ServiceAccount/flux-system/kustomize-controller (finalizers: example.com/hold)' "$work/stuck.err" ||
    { echo "the error does not name the held ServiceAccount and its finalizer"; return 1; }
  # While it waited, it said so (no terminal here: a line, with the elapsed
  # time, when what holds the first object left changed).
  grep -Eq '^\[[0-9]+s\] waiting for the deleted objects to be gone: ServiceAccount/flux-system/kustomize-controller.*: finalizers: example.com/hold$' "$work/stuck.err" ||
    { echo "no status line named the held ServiceAccount while waiting"; return 1; }
  exists -n "$ns" fluxinstance flux || { echo "the instance is gone: nothing to resume from"; return 1; }
}

uninstalled() {
  fx delete delete "$instance" --kubeconfig "$KUBECONFIG" --yes
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  grep -q '^Uninstallation completed in ' "$work/delete.err" || { echo "no completion message"; return 1; }
}
again() {
  fx again delete -n "$ns" --kubeconfig "$KUBECONFIG" --yes
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  grep -q 'not found: nothing to uninstall' "$work/again.err" || { echo "does not say there was nothing to do"; return 1; }
  [ ! -s "$work/again.out" ] || { echo "stdout is not empty"; return 1; }
}
case_uninstall() {
  given_synced_flux uninstall || return
  check "uninstall: dry run: says what would go, nothing changes" dry_run
  hold_policy | k apply -f - >/dev/null
  wait_until 60 held || fail "uninstall: the admission policy" "not in effect after 60 s"
  check "uninstall: delete refused midway by the API: it fails after the controllers went" denied
  check "uninstall: delete refused midway: the instance is Ready=False Uninstalling" uninstalling
  check "uninstall: delete refused midway: get shows it" get_uninstalling
  check "uninstall: delete refused midway: wait fails naming it" wait_uninstalling
  hold_policy | k delete -f - >/dev/null
  wait_until 60 eval '! held' || fail "uninstall: the admission policy" "still in effect 60 s after its deletion"

  k -n "$ns" patch serviceaccount kustomize-controller --type merge \
    -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
  check "uninstall: a finalizer holding an object: the error names it, the instance stays" stuck
  k -n "$ns" patch serviceaccount kustomize-controller --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null

  check "uninstall: delete: run again, it converges" uninstalled
  check "uninstall: delete: the controllers are gone" eval '[ -z "$(controllers)" ]'
  check "uninstall: delete: the Flux CRDs are gone" eval '[ -z "$(flux_crds)" ]'
  check "uninstall: delete: the instance and its lock are gone" eval '! exists -n "$ns" fluxinstance flux && ! exists -n "$ns" lease fluxopctl-flux'
  check "uninstall: delete: nothing is left terminating" eval '[ -z "$(left_terminating)" ]'
  check "uninstall: delete: the namespace stays" exists namespace "$ns"
  check "uninstall: delete: the workload Flux deployed stays" exists -n apps deployment podinfo
  check "uninstall: delete: run once more, there is nothing to do" again
}

# --- --keep-crds, killed half-way ------------------------------------------------
# Held by a finalizer, the uninstall waits there (up to --timeout): it is
# killed half-way for certain.
kill_half_way() {
  local background
  k -n "$ns" patch serviceaccount kustomize-controller --type merge \
    -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null || return 1
  XDG_CACHE_HOME=$work/cache "$bin" delete -n "$ns" --kubeconfig "$KUBECONFIG" --keep-crds --yes \
    >"$work/killed.out" 2>"$work/killed.err" &
  background=$!
  show "$work/killed.err"
  wait_until 120 grep -q '^ServiceAccount/flux-system/kustomize-controller deleted$' "$work/killed.out" ||
    { echo "the held ServiceAccount not deleted in 120 s"; return 1; }
  kill -9 "$background"
  wait "$background" 2>/dev/null
  exists -n "$ns" fluxinstance flux || { echo "the instance is gone"; return 1; }
  k -n "$ns" patch serviceaccount kustomize-controller --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
}
resumed() {
  fx resumed delete -n "$ns" --kubeconfig "$KUBECONFIG" --keep-crds --yes
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
}
kept_finalizer() { [ "$(k -n apps get kustomization apps -o jsonpath='{.metadata.finalizers[0]}')" = finalizers.fluxcd.io ]; }
case_keep_crds() {
  given_synced_flux keep_crds || return
  check "keep_crds: delete --keep-crds: killed half-way" kill_half_way
  check "keep_crds: delete --keep-crds: killed half-way, the instance is not Ready" uninstalling
  check "keep_crds: delete --keep-crds: run again, it converges" resumed
  check "keep_crds: delete --keep-crds: the controllers and the instance are gone" eval '[ -z "$(controllers)" ] && ! exists -n "$ns" fluxinstance flux'
  check "keep_crds: delete --keep-crds: the CRDs stay" exists crd kustomizations.kustomize.toolkit.fluxcd.io gitrepositories.source.toolkit.fluxcd.io
  check "keep_crds: delete --keep-crds: the custom resources stay, with their finalizers" kept_finalizer
  check "keep_crds: delete --keep-crds: the sync's objects stay" exists -n "$ns" gitrepository flux-system
  check "keep_crds: reinstall after --keep-crds" install "$instance"
  check "keep_crds: reinstall: the custom resources are still there" kept_finalizer
}
# A status is what the cluster says: a message or a revision there must not
# drive the terminal (clear it, set its title, print a line of its own).
hostile_status() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  k -n "$ns" patch fluxinstance flux --subresource=status --type=merge -p '{"status":{
    "lastAppliedRevision":"v2\u001b]0;pwned\u0007",
    "conditions":[{"type":"Ready","status":"False","reason":"x","lastTransitionTime":"'"$now"'",
      "message":"gone\u001b[2J\nerror: fake\u009b31m"}]}}' >/dev/null || { echo "status not patched"; return 1; }
  fx hostile_get get -n "$ns" --kubeconfig "$KUBECONFIG"
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  if LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$work/hostile_get.out"; then
    echo "a control character printed raw:"; od -c "$work/hostile_get.out" | head -20; return 1
  fi
  grep -q '^error: fake' "$work/hostile_get.out" && { echo "the message started a line of its own"; return 1; }
  grep -qF 'message: gone\x1b[2J\nerror: fake\x9b31m' "$work/hostile_get.out" ||
    { echo "the message not shown escaped"; cat "$work/hostile_get.out"; return 1; }
  grep -qF 'v2\x1b]0;pwned\x07' "$work/hostile_get.out" || { echo "the revision not shown escaped"; return 1; }
}
case_hostile_status() {
  check "hostile_status: install Flux with a sync" install "$instance" || return
  check "hostile_status: get: control characters in the status are printed escaped" hostile_status
}

# --- the daemon: kubectl delete fluxinstance ---------------------------------------
has_finalizer() { [ "$(k -n "$ns" get fluxinstance flux -o jsonpath='{.metadata.finalizers}')" = '["fluxcd.controlplane.io/finalizer"]' ]; }

status_of() { k -n "$ns" get fluxinstance flux -o jsonpath="$1"; }
# The daemon's first reconcile rewrites the status (hostile_status made it hostile):
# the table is read once it has, so that get and kubectl see the same status.
daemon_wrote_status() { [ "$(status_of '{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
get_table() {
  wait_until 120 daemon_wrote_status || { echo "the daemon did not make the instance Ready"; return 1; }
  fx get get -n "$ns" --kubeconfig "$KUBECONFIG" -o wide
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  local revision ready
  revision=$(status_of '{.status.lastAppliedRevision}')
  ready=$(status_of '{.status.conditions[?(@.type=="Ready")].status}')
  grep -qE "^NAME +NAMESPACE +READY +SUSPENDED +REVISION +RESOURCES +LAST RECONCILED$" "$work/get.out" ||
    { echo "no header"; return 1; }
  grep -qE "^flux +$ns +$ready +False +$revision +[1-9][0-9]* " "$work/get.out" ||
    { echo "the instance's row is not ready=$ready revision=$revision"; cat "$work/get.out"; return 1; }
  local image
  image=$(k -n "$ns" get deployment source-controller -o jsonpath='{.spec.template.spec.containers[0].image}')
  grep -qE "^source-controller +${image%@*} +${image#*@}$" "$work/get.out" ||
    { echo "no source-controller row with ${image}"; cat "$work/get.out"; return 1; }
  grep -qE "^VERSION +STATUS +RECONCILES " "$work/get.out" || { echo "no history"; return 1; }
}
get_narrow() {
  fx get-narrow get -n "$ns" --kubeconfig "$KUBECONFIG"
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  local revision
  revision=$(status_of '{.status.lastAppliedRevision}')
  grep -qE "^NAME +NAMESPACE +READY +SUSPENDED +FLUX +RESOURCES +LAST RECONCILED$" "$work/get-narrow.out" ||
    { echo "no header"; cat "$work/get-narrow.out"; return 1; }
  grep -qE "^flux +$ns +[A-Za-z]+ +False +${revision%@*} +[1-9][0-9]* " "$work/get-narrow.out" ||
    { echo "no row with ${revision%@*}"; cat "$work/get-narrow.out"; return 1; }
  ! grep -q sha256: "$work/get-narrow.out" || { echo "digests in the default table"; return 1; }
  fx get-all get -A --kubeconfig "$KUBECONFIG"
  grep -qE "^$ns +flux +[1-9][0-9]* +" "$work/get-all.out" || { echo "get -A: no row"; cat "$work/get-all.out"; return 1; }
  fx get-resources get all -A --kubeconfig "$KUBECONFIG"
  grep -qE "^$ns +FluxInstance +flux +(True|False|Unknown) " "$work/get-resources.out" &&
    grep -qE "^apps +Kustomization +apps " "$work/get-resources.out" ||
    { echo "get all -A: not the instance and the Kustomization"; cat "$work/get-resources.out"; return 1; }
  fx get-kinds get all -A --kind kustomization -o json --kubeconfig "$KUBECONFIG"
  [ "$(jq -r '[.[].kind] | unique | join(",")' "$work/get-kinds.out")" = Kustomization ] ||
    { echo "get all --kind: $(cat "$work/get-kinds.out")"; return 1; }
}
get_json() {
  fx get_json get -n "$ns" --kubeconfig "$KUBECONFIG" -o json
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  [ "$(jq -r .status.lastAppliedRevision "$work/get_json.out")" = "$(status_of '{.status.lastAppliedRevision}')" ] ||
    { echo "another revision than kubectl's"; return 1; }
  jq -e '.metadata.managedFields == null' "$work/get_json.out" >/dev/null || { echo "managedFields shown"; return 1; }
}
waited() {
  fx wait wait -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 2m
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  grep -q "^Reconciliation finished in " "$work/wait.err" || { echo "no Ready message"; return 1; }
}
suspend_sets_annotation() {
  fx suspend suspend -n "$ns" --kubeconfig "$KUBECONFIG"
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  [ "$(status_of '{.metadata.annotations.fluxcd\.controlplane\.io/reconcile}')" = disabled ] ||
    { echo "the annotation is not set"; return 1; }
}
suspended_refused() {
  fx refused apply "$instance" $(common_flags)
  [ "$rc" = 1 ] || { echo "exit $rc (want 1)"; return 1; }
  grep -q "^error: FluxInstance/$ns/flux: its reconciliation is disabled .*fluxopctl resume.*--force" "$work/refused.err" ||
    { echo "the error does not say it is suspended"; return 1; }
  [ ! -s "$work/refused.out" ] || { echo "stdout is not empty"; return 1; }
  fx wait_suspended wait -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 1m
  [ "$rc" = 1 ] || { echo "wait: exit $rc (want 1)"; return 1; }
  grep -q "Reconciliation is disabled for flux" "$work/wait_suspended.err" || { echo "wait does not say it is suspended"; return 1; }
}
forced() {
  fx forced apply "$instance" $(common_flags) --force
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
}
resumed_by_daemon() {
  fx resume resume -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 3m
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  local requested
  requested=$(status_of '{.metadata.annotations.reconcile\.fluxcd\.io/requestedAt}')
  [ -n "$requested" ] && [ "$(status_of '{.status.lastHandledReconcileAt}')" = "$requested" ] ||
    { echo "lastHandledReconcileAt is not the request's time $requested"; return 1; }
  [ "$(status_of '{.metadata.annotations.fluxcd\.controlplane\.io/reconcile}')" = enabled ] ||
    { echo "the annotation does not say enabled"; return 1; }
}
reconciled_by_daemon() {
  fx reconcile reconcile -n "$ns" --kubeconfig "$KUBECONFIG" --force --timeout 3m
  [ "$rc" = 0 ] || { echo "exit $rc"; return 1; }
  local requested
  requested=$(status_of '{.metadata.annotations.reconcile\.fluxcd\.io/forceAt}')
  [ -n "$requested" ] && [ "$(status_of '{.status.lastHandledForceAt}')" = "$requested" ] ||
    { echo "lastHandledForceAt is not the request's time $requested"; return 1; }
  grep -q "^Reconciliation finished in " "$work/reconcile.err" || { echo "no Ready message"; return 1; }
}
case_daemon() {
  local background
  given_synced_flux daemon || return
  XDG_CACHE_HOME=$work/cache "$bin" apply --watch --from-cluster -n "$ns" --kubeconfig "$KUBECONFIG" \
    --distribution-artifact "$dist" >"$work/daemon.out" 2>"$work/daemon.log" &
  background=$!
  show "$work/daemon.log"
  check "daemon: the instance gets the operator's finalizer" wait_until 120 has_finalizer
  check "daemon: get -o wide: the status at a glance with the digests" get_table
  check "daemon: get: the narrower default, -A a row per instance, get all the Flux resources" get_narrow
  check "daemon: get -o json: the object, as kubectl gets it" get_json
  check "daemon: wait: returns once ready" waited
  check "daemon: suspend: the annotation says disabled" suspend_sets_annotation
  check "daemon: suspended: apply refuses it, wait says so" suspended_refused
  check "daemon: suspended: apply --force applies it" forced
  check "daemon: resume: the daemon reconciles, resume waits for it" resumed_by_daemon
  check "daemon: reconcile --force: the daemon handles it, reconcile waits for it" reconciled_by_daemon

  k -n "$ns" delete fluxinstance flux --wait=false >/dev/null
  check "daemon: kubectl delete fluxinstance uninstalls" wait_until 300 eval '! exists -n "$ns" fluxinstance flux'
  check "daemon: the controllers and the CRDs are gone" eval '[ -z "$(controllers)" ] && [ -z "$(flux_crds)" ]'
  check "daemon: nothing is left terminating" eval '[ -z "$(left_terminating)" ]'
  check "daemon: the workload Flux deployed stays" exists -n apps deployment podinfo
  stop_process "$background"
}

# --- usage -------------------------------------------------------------------------
usage() {
  fx usage delete "$@"
  [ "$rc" = 2 ] || { echo "exit $rc (want 2)"; return 1; }
  [ ! -s "$work/usage.out" ] || { echo "stdout is not empty"; return 1; }
}
usage_get() {
  fx usage get -n "$ns" -o xml
  [ "$rc" = 2 ] || { echo "exit $rc (want 2)"; return 1; }
}
case_usage() {
  check "usage: FILE with -n" usage "$instance" -n "$ns"
  check "usage: a bad --timeout" usage -n "$ns" --timeout 5x
  check "usage: get -o xml" usage_get
}

e2e_run_cases
summary
