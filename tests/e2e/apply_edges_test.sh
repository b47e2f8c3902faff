#!/usr/bin/env bash
# End-to-end tests of the rarer paths of `fluxopctl apply`, on a local
# control plane (scripts/cluster) of their own:
# - an object whose immutable field differs (a Deployment's selector) is
#   deleted and created again, and reported `replaced`;
# - resource migration: after an upgrade from Flux 2.2 to 2.3, HelmReleases
#   stored as v2beta2 are written again and the CRD's storedVersions trimmed
#   to v2; with .spec.migrateResources false nothing is migrated;
# - a health check timeout (Ready=False HealthCheckFailed), and SIGTERM
#   during an apply (a clean stop that releases the Lease);
# - diff before the first apply (every object new, nothing written).
#
#   tests/e2e/apply_edges_test.sh BIN ROOT
#
# Closes with `N passed, M failed`; exit 77 when there is no cluster or no
# distribution to test with.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=$root/../shared/flux-distribution
source "$root/tests/e2e/lib.sh"
work=$(mktemp -d)
passed=0 failed=0
cleanup() {
  e2e_cluster_down
  rm -rf "$work"
}
trap cleanup EXIT

skip_all() { echo "apply_edges_test: skipped: $*" >&2; exit 77; }
ok() { passed=$((passed + 1)); echo "ok $1"; }
fail() {
  failed=$((failed + 1))
  echo "FAIL $1"
  [ -s "$work/err" ] && tail -n 5 "$work/err" | sed 's/^/  | /'
  return 0
}
apply() {  # INSTANCE_FILE [FLAGS...]
  local file=$1
  shift
  timeout 300 "$bin" apply "$file" --distribution-artifact "$dist" "$@" >"$work/out" 2>"$work/err"
}
# The four-controller instance at another version and migrateResources.
instance() {  # VERSION MIGRATE
  sed "s/\"2.8.x\"/\"$1\"/" "$root/tests/e2e/instances/flux-2.8-four.yaml" >"$work/instance.yaml"
  [ "$2" = true ] || printf '  migrateResources: false\n' >>"$work/instance.yaml"
}
stored_versions() {
  kubectl get crd helmreleases.helm.toolkit.fluxcd.io -o jsonpath='{.status.storedVersions}'
}

[ -d "$dist/flux" ] || skip_all "no distribution at $dist"
e2e_cluster_up "$work/cluster"

# diff before the first apply: every object is new, nothing is written.
instance 2.2.x true
objects=$("$bin" build "$work/instance.yaml" --distribution-artifact "$dist" 2>/dev/null | grep -c '^---$')
status=0
"$bin" diff "$work/instance.yaml" --distribution-artifact "$dist" >"$work/out" 2>"$work/err" || status=$?
if [ "$status" = 1 ] && [ "$(grep -c '^--- /dev/null' "$work/out")" = "$objects" ] &&
  ! kubectl get namespace flux-system >/dev/null 2>&1; then
  ok "diff on an empty cluster: exit 1, all $objects objects new, nothing written"
else
  fail "diff on an empty cluster: exit 1, all $objects objects new, nothing written (exit $status)"
fi

# A kustomize-controller Deployment made by hand, with another selector.
kubectl create namespace flux-system >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: kustomize-controller, namespace: flux-system}
spec:
  selector: {matchLabels: {app: hand-made}}
  template:
    metadata: {labels: {app: hand-made}}
    spec: {containers: [{name: pause, image: registry.k8s.io/pause:3.10}]}
YAML
instance 2.2.x true
if apply "$work/instance.yaml" && grep -qx "Deployment/flux-system/kustomize-controller replaced" "$work/out" &&
  [ "$(kubectl -n flux-system get deployment kustomize-controller -o jsonpath='{.spec.selector.matchLabels.app}')" = kustomize-controller ]; then
  ok "an immutable selector: the Deployment is replaced"
else
  fail "an immutable selector: the Deployment is replaced"
fi
kubectl -n flux-system rollout status deployment/kustomize-controller --timeout=60s >/dev/null 2>&1 &&
  ok "the replaced Deployment rolls out" || fail "the replaced Deployment rolls out"

# A HelmRelease stored as v2beta2 (the storage version of Flux 2.2).
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: helm.toolkit.fluxcd.io/v2beta2
kind: HelmRelease
metadata: {name: podinfo, namespace: default}
spec:
  interval: 5m
  chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}}
YAML
[ "$(stored_versions)" = '["v2beta2"]' ] || fail "2.2 stores HelmReleases as v2beta2 (got $(stored_versions))"

instance 2.3.x false
if apply "$work/instance.yaml" && ! grep -q migrated "$work/err" && [ "$(stored_versions)" = '["v2beta2","v2"]' ]; then
  ok "migrateResources false: stored versions stay [v2beta2, v2]"
else
  fail "migrateResources false: stored versions stay [v2beta2, v2] (got $(stored_versions))"
fi
rv=$(kubectl get helmrelease podinfo -o jsonpath='{.metadata.resourceVersion}')
instance 2.3.x true
if apply "$work/instance.yaml" &&
  grep -q 'helmreleases.helm.toolkit.fluxcd.io: migrated 1 objects to v2' "$work/err" &&
  [ "$(stored_versions)" = '["v2"]' ]; then
  ok "migration: HelmReleases rewritten, stored versions trimmed to [v2]"
else
  fail "migration: HelmReleases rewritten, stored versions trimmed to [v2] (got $(stored_versions))"
fi
[ "$(kubectl get helmrelease podinfo -o jsonpath='{.metadata.resourceVersion}')" != "$rv" ] &&
  ok "migration: the HelmRelease was written again" || fail "migration: the HelmRelease was written again"
apply "$work/instance.yaml" && ! grep -q migrated "$work/err" &&
  ok "migration: nothing more to do on the next apply" || fail "migration: nothing more to do on the next apply"

ready_reason() {
  kubectl -n flux-system get fluxinstance flux \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}'
}

# An upgrade that cannot roll out (no node takes new pods): a health check
# failure after --timeout, said and recorded.
kubectl cordon kwok-node-0 kwok-node-1 >/dev/null
instance 2.4.x true
if ! apply "$work/instance.yaml" --timeout 5s && grep -q "timeout waiting for Deployment/flux-system/" "$work/err" &&
  [ "$(ready_reason)" = "False HealthCheckFailed" ]; then
  ok "--timeout 5s, nodes cordoned: exit 1 naming the Deployments, Ready=False HealthCheckFailed"
else
  fail "--timeout 5s, nodes cordoned: exit 1 naming the Deployments, Ready=False HealthCheckFailed (got $(ready_reason))"
fi

# SIGTERM while the apply waits for that rollout: a clean stop, the Lease
# released, and the next apply does not wait for it.
"$bin" apply "$work/instance.yaml" --distribution-artifact "$dist" >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 100); do grep -q "waiting for the components" "$work/err" && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
status=$?
holder=$(kubectl -n flux-system get lease fluxopctl-flux -o jsonpath='{.spec.holderIdentity}')
if [ "$status" = 1 ] && grep -q "interrupted" "$work/err" && [ -z "$holder" ]; then
  ok "SIGTERM: exit 1, interrupted, the Lease released"
else
  fail "SIGTERM: exit 1, interrupted, the Lease released (exit $status, holder '$holder')"
fi
kubectl uncordon kwok-node-0 kwok-node-1 >/dev/null
start=$(date +%s)
apply "$work/instance.yaml" --lock-timeout 5s && [ $(($(date +%s) - start)) -lt 60 ] &&
  [ "$(ready_reason)" = "True ReconciliationSucceeded" ] &&
  ok "once nodes take pods, the next apply succeeds at once" ||
  fail "once nodes take pods, the next apply succeeds at once"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
