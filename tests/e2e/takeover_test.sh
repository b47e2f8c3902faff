#!/usr/bin/env bash
# End-to-end test of `fluxopctl apply` taking over an installation made with
# `kubectl apply --server-side` of `fluxopctl build` output, on a fresh local
# control plane (scripts/cluster) of its own: a cluster holds one Flux (CRDs
# are cluster-scoped, the controllers watch every namespace), so the
# take-over needs a cluster where no other apply installed Flux before.
#
#   tests/e2e/takeover_test.sh BIN ROOT [takeover]
#
# After the take-over: kubectl's field manager owns no field, no pod template
# changed (same ReplicaSets), and the cluster holds what fluxopctl and the
# upstream CLI render for the instance (state_is in tests/e2e/lib.sh).
# Closes with `N passed, M failed`; exit 77 (1 in CI) when it cannot run (no
# kubectl, no cluster binaries, no distribution, no upstream CLI).
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
instance=$root/tests/e2e/instances/flux-2.9-four.yaml
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

# One case: the take-over needs a cluster no apply installed Flux on.
all_cases=(takeover)
e2e_select_cases "$@"

render flux-2.9-four "$instance" || { summary; exit; }
e2e_upstream_stop
e2e_cluster_up "$work/cluster"

replicasets() {
  k -n "$ns" get replicasets.apps -o jsonpath='{range .items[*]}{.metadata.name} {.spec.replicas}{"\n"}{end}' | sort
}
kubectl_owns_nothing() {
  local out owners
  out=$(k get -f "$work/flux-2.9-four.yaml" --show-managed-fields \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name}:{range .metadata.managedFields[*]} {.manager}{end}{"\n"}{end}') ||
    { echo "kubectl get -f failed"; return 1; }
  # The Namespace is shared (issue 40): what kubectl set on it stays kubectl's.
  owners=$(grep -E ' kubectl( |$)' <<<"$out" | grep -v '^Namespace/')
  [ -z "$owners" ] || {
    echo "kubectl still manages fields of $(wc -l <<<"$owners") objects:"
    cut -d: -f1 <<<"$owners" | tr '\n' ' ' | fold -s -w 110
    return 1
  }
}
same_replicasets() {
  local now
  now=$(replicasets)
  [ "$now" = "$(cat "$work/rs.before")" ] ||
    { echo "the ReplicaSets changed (< before, > after):"; diff "$work/rs.before" <(echo "$now") | grep '^[<>]'; return 1; }
}
# The installation the take-over starts from, rolled out.
kubectl_install() {
  local d
  timeout -k 5 300 kubectl apply --server-side -f "$work/flux-2.9-four.yaml" || return 1
  for d in $(deployments "$work/flux-2.9-four.yaml"); do
    kwait 300 -n "$ns" rollout status "deployment/$d" || return 1
  done
}

case_takeover() {
  if ! kubectl_install >"$work/kubectl-install.out" 2>&1; then
    show "$work/kubectl-install.out"
    fail "take-over" "kubectl apply --server-side of the build output, or its rollout, failed"
    return
  fi
  replicasets >"$work/rs.before"
  apply takeover "$instance"
  check "take-over: apply exits 0" exit_is 0
  check "take-over: the kubectl field manager owns no field any more, but of the shared Namespace" kubectl_owns_nothing
  check "take-over: no pod template changed (same ReplicaSets)" same_replicasets
  check "take-over: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-four "$instance"
}

e2e_run_cases
summary
