#!/usr/bin/env bash
# End-to-end tests of the rarer paths of `fluxopctl apply`, on a local
# control plane (scripts/cluster) of their own:
# - an object whose immutable field differs (a Deployment's selector) is
#   deleted and created again, and reported `replaced`;
# - resource migration: after an upgrade from Flux 2.2 to 2.3, HelmReleases
#   stored as v2beta2 are written again and the CRD's storedVersions trimmed
#   to v2; with .spec.migrateResources false nothing is migrated.
#
#   tests/e2e/apply_edges_test.sh BIN ROOT
#
# Closes with `N passed, M failed`; exit 77 when there is no cluster or no
# distribution to test with.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=$root/../shared/flux-distribution
work=$(mktemp -d)
passed=0 failed=0
export FLUXOPCTL_CLUSTER_DIR=$work/cluster
cleanup() {
  "$root/scripts/cluster" down >/dev/null 2>&1
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
up=$("$root/scripts/cluster" up 2>"$work/up.err") || {
  status=$?
  [ "$status" = 77 ] && skip_all "$(tail -1 "$work/up.err")"
  cat "$work/up.err" >&2
  exit 1
}
eval "$up"

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

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
