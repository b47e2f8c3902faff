#!/usr/bin/env bash
# Smoke test of scripts/cluster: a 2-replica Deployment rolls out on the kwok
# nodes, an unprivileged user is Forbidden, a Namespace delete completes (the
# namespace controller and the garbage collector work), and, on a cluster of
# its own, the API server comes back after stop-apiserver/start-apiserver.
#
#   tests/e2e/cluster_smoke.sh
#
# Uses the cluster in $KUBECONFIG when set (and its unprivileged.kubeconfig,
# beside it, when there is one); otherwise brings one up with
# 'scripts/cluster up' in a state directory of its own and downs it at the
# end.
# Closes with "N passed, M failed[, K skipped]" (a case that cannot run on
# the cluster in $KUBECONFIG is a skip, a failure in CI); exit 0 only when
# all passed, 77 (1 in CI) when it cannot run (no Go to build the cluster,
# no kubectl).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$root/scripts/cluster
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
own_cluster=0
ns=smoke-$$
work=$(mktemp -d)

# On the caller's cluster, only the test's namespace is removed.
e2e_cleanup_hook() {
  [ "$own_cluster" -eq 1 ] || [ -z "${KUBECONFIG:-}" ] ||
    kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1
}
on_exit e2e_cleanup

# check_cmd NAME COMMAND...: passes when COMMAND exits 0; its output is shown
# on failure.
check_cmd() {
  local name=$1 status=0
  shift
  "$@" >"$work/out" 2>&1 || status=$?
  if [ "$status" = 0 ]; then
    pass "$name"
  else
    show "$work/out"
    fail "$name" "exit $status"
  fi
}

command -v kubectl >/dev/null || skip_test "kubectl is not installed"

if [ -n "${KUBECONFIG:-}" ]; then
  unprivileged=${UNPRIVILEGED_KUBECONFIG:-$(dirname "$KUBECONFIG")/unprivileged.kubeconfig}
else
  # A state directory of its own: never a cluster someone else runs.
  started=$SECONDS
  e2e_cluster_up "$work/cluster"
  own_cluster=1
  unprivileged=$FLUXOPCTL_CLUSTER_DIR/unprivileged.kubeconfig
  echo "cluster up in $((SECONDS - started))s"
fi

deployment() {
  cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata:
  name: smoke
  namespace: $ns
spec:
  replicas: 2
  selector:
    matchLabels: {app: smoke}
  template:
    metadata:
      labels: {app: smoke}
    spec:
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.10
YAML
}

rollout() {
  k create namespace "$ns" &&
    deployment | k apply -f - &&
    kwait 180 --namespace "$ns" rollout status deployment/smoke &&
    [ "$(k --namespace "$ns" get deployment smoke -o 'jsonpath={.status.availableReplicas}')" = 2 ]
}
check_cmd "a 2-replica Deployment rolls out" rollout

forbidden() {
  local out
  if out=$(k --kubeconfig "$unprivileged" --namespace "$ns" get pods 2>&1); then
    echo "$out"
    echo "the unprivileged user was allowed to list pods"
    return 1
  fi
  echo "$out"
  [[ $out == *Forbidden* || $out == *forbidden* ]]
}
if [ -f "$unprivileged" ]; then
  check_cmd "an unprivileged user is Forbidden" forbidden
else
  skip "an unprivileged user is Forbidden" "no $unprivileged"
fi

# stop-apiserver/start-apiserver, only on a cluster of our own.
outage() {
  timeout -k 5 120 "$cluster" stop-apiserver || return 1
  if timeout -k 5 30 kubectl get namespace "$ns" --request-timeout=3s; then
    echo "the API server still answers after stop-apiserver"
    return 1
  fi
  # New work after the outage: the controllers, the scheduler and kwok are
  # back (their watches retry with a backoff that grows with the outage).
  timeout -k 5 180 "$cluster" start-apiserver &&
    k --namespace "$ns" scale deployment/smoke --replicas=3 &&
    kwait 180 --namespace "$ns" rollout status deployment/smoke
}
if [ "$own_cluster" -eq 1 ]; then
  check_cmd "the API server comes back after an outage" outage
else
  skip "the API server comes back after an outage" "not our cluster"
fi

# The namespace controller deletes what is in it (the Deployment, its
# ReplicaSet and Pods, via the garbage collector and kwok) before the
# namespace itself goes.
namespace_delete() {
  kwait 180 delete namespace "$ns" &&
    ! k get namespace "$ns" 2>/dev/null
}
check_cmd "a Namespace delete completes" namespace_delete

summary
