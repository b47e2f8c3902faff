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
# Closes with "N passed, M failed"; exit 0 only when all passed, 77 when it
# cannot run (no Go to build the cluster, no kubectl).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$root/scripts/cluster
passed=0 failed=0 skipped=0
own_cluster=0
ns=smoke-$$
work=$(mktemp -d)

skip_all() { echo "cluster_smoke: skipped: $*" >&2; exit 77; }

cleanup() {
  if [ "$own_cluster" -eq 1 ]; then
    "$cluster" down >/dev/null 2>"$work/down.err" || cat "$work/down.err" >&2
  elif [ -n "${KUBECONFIG:-}" ]; then
    kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1
  fi
  rm -rf "$work"
}
trap cleanup EXIT

pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() {
  failed=$((failed + 1))
  echo "FAIL $1"
  [ -s "$work/out" ] && sed 's/^/  | /' "$work/out" | tail -n 15
  return 0
}
skip() { skipped=$((skipped + 1)); echo "SKIP $1"; }

# check NAME COMMAND...: passes when COMMAND exits 0; its output is shown on
# failure.
check() {
  local name=$1
  shift
  if "$@" >"$work/out" 2>&1; then pass "$name"; else fail "$name"; fi
}

command -v kubectl >/dev/null || skip_all "kubectl is not installed"

if [ -n "${KUBECONFIG:-}" ]; then
  unprivileged=${UNPRIVILEGED_KUBECONFIG:-$(dirname "$KUBECONFIG")/unprivileged.kubeconfig}
else
  # A state directory of its own: never a cluster someone else runs.
  export FLUXOPCTL_CLUSTER_DIR=$work/cluster
  started=$SECONDS
  status=0
  up=$("$cluster" up 2>"$work/up.err") || status=$?
  if [ "$status" -eq 77 ]; then
    cat "$work/up.err" >&2
    skip_all "the cluster cannot be built here"
  fi
  if [ "$status" -ne 0 ]; then
    # up stopped what it started; its stderr ends with the failing log's tail.
    sed 's/^/  | /' "$work/up.err"
    echo "FAIL scripts/cluster up (exit $status)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  own_cluster=1
  eval "$up"
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
  kubectl create namespace "$ns" &&
    deployment | kubectl apply -f - &&
    kubectl --namespace "$ns" rollout status deployment/smoke --timeout=60s &&
    [ "$(kubectl --namespace "$ns" get deployment smoke -o 'jsonpath={.status.availableReplicas}')" = 2 ]
}
check "a 2-replica Deployment rolls out" rollout

forbidden() {
  local out
  if out=$(kubectl --kubeconfig "$unprivileged" --namespace "$ns" get pods 2>&1); then
    echo "$out"
    echo "the unprivileged user was allowed to list pods"
    return 1
  fi
  echo "$out"
  [[ $out == *Forbidden* || $out == *forbidden* ]]
}
if [ -f "$unprivileged" ]; then
  check "an unprivileged user is Forbidden" forbidden
else
  skip "an unprivileged user is Forbidden (no $unprivileged)"
fi

# stop-apiserver/start-apiserver, only on a cluster of our own.
outage() {
  "$cluster" stop-apiserver || return 1
  if kubectl get namespace "$ns" --request-timeout=3s; then
    echo "the API server still answers after stop-apiserver"
    return 1
  fi
  # New work after the outage: the controllers, the scheduler and kwok are
  # back (their watches retry with a backoff that grows with the outage).
  "$cluster" start-apiserver &&
    kubectl --namespace "$ns" scale deployment/smoke --replicas=3 &&
    kubectl --namespace "$ns" rollout status deployment/smoke --timeout=60s
}
if [ "$own_cluster" -eq 1 ]; then
  check "the API server comes back after an outage" outage
else
  skip "the API server comes back after an outage (not our cluster)"
fi

# The namespace controller deletes what is in it (the Deployment, its
# ReplicaSet and Pods, via the garbage collector and kwok) before the
# namespace itself goes.
namespace_delete() {
  kubectl delete namespace "$ns" --timeout=60s &&
    ! kubectl get namespace "$ns" 2>/dev/null
}
check "a Namespace delete completes" namespace_delete

if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
