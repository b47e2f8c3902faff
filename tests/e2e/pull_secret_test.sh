#!/usr/bin/env bash
# End-to-end test of .spec.distribution.artifactPullSecret: `fluxopctl apply`
# pulls the distribution from a registry that wants credentials, with the
# credentials of a kubernetes.io/dockerconfigjson Secret in the instance's
# namespace, on a local control plane (scripts/cluster) of its own.
#
#   tests/e2e/pull_secret_test.sh BIN ROOT
#
# Closes with `N passed, M failed`; exit 77 when there is no cluster, no
# registry or no distribution to test with.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=$root/../shared/flux-distribution
source "$root/scripts/lib/oci-registry.sh"
source "$root/tests/e2e/lib.sh"

work=$(mktemp -d)
passed=0 failed=0
# fluxopctl's cache is the test's own (scripts/cluster keeps its binaries in
# the default one).
export DOCKER_CONFIG=$work/docker
fluxopctl=(env "XDG_CACHE_HOME=$work/cache" "$bin")
export REGISTRY_LIFETIME=300
mkdir -p "$DOCKER_CONFIG"
cleanup() {
  registry_stop
  e2e_cluster_down
  rm -rf "$work"
}
trap cleanup EXIT

skip_all() { echo "pull_secret_test: skipped: $*" >&2; exit 77; }
check() {  # NAME EXPECTED_STATUS EXPECTED_STDERR_REGEX -- COMMAND...
  local name=$1 want=$2 pattern=$3 status=0
  shift 4
  timeout 120 "$@" >"$work/out" 2>"$work/err" || status=$?
  if [ "$status" = "$want" ] && grep -qE -- "$pattern" "$work/err"; then
    passed=$((passed + 1))
    echo "ok $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $status (want $want), stderr:"
    tail -3 "$work/err" | sed 's/^/  | /'
  fi
}

[ -d "$dist/flux" ] || skip_all "no distribution at $dist"
registry_ensure_installed || skip_all "docker-registry cannot be installed"
registry_start "$work/registry" --htpasswd alice:s3cret >/dev/null 2>&1 || skip_all "docker-registry did not start"
e2e_cluster_up "$work/cluster"

# Push with the credentials in a Docker config, then take them away: only
# the Secret has them.
printf '{"auths":{"%s":{"auth":"%s"}}}' "$REGISTRY_ADDR" "$(printf alice:s3cret | base64)" \
  >"$DOCKER_CONFIG/config.json"
"${fluxopctl[@]}" push "$dist" "oci://$REGISTRY_ADDR/flux/manifests:v1" >/dev/null 2>&1 || {
  echo "FAIL push"
  exit 1
}
rm "$DOCKER_CONFIG/config.json"

instance() {  # SECRET
  sed "s|registry: ghcr.io/fluxcd|&\n    artifact: oci://$REGISTRY_ADDR/flux/manifests:v1\n    artifactPullSecret: $1|" \
    "$root/tests/e2e/instances/flux-2.9-no-helm.yaml" >"$work/instance.yaml"
}
kubectl create namespace flux-system >/dev/null
kubectl -n flux-system create secret docker-registry dist-pull --docker-server="$REGISTRY_ADDR" \
  --docker-username=alice --docker-password=s3cret >/dev/null
kubectl -n flux-system create secret generic not-docker --from-literal=a=b >/dev/null
kubectl -n flux-system create secret docker-registry wrong-password --docker-server="$REGISTRY_ADDR" \
  --docker-username=alice --docker-password=nope >/dev/null

instance missing
check "a missing Secret is named" 1 "Secret/flux-system/missing \(.spec.distribution.artifactPullSecret\): not found" -- \
  "${fluxopctl[@]}" apply "$work/instance.yaml" --no-wait
instance not-docker
check "a Secret of another type is refused" 1 "Secret/flux-system/not-docker .*: type is not kubernetes.io/dockerconfigjson" -- \
  "${fluxopctl[@]}" apply "$work/instance.yaml" --no-wait
instance wrong-password
check "refused credentials: a clear 401, no password" 1 "HTTP 401" -- \
  "${fluxopctl[@]}" apply "$work/instance.yaml" --no-wait
if grep -q nope "$work/err"; then
  failed=$((failed + 1))
  echo "FAIL the password appears in the error"
fi
kubectl get deployments -n flux-system -o name 2>/dev/null | grep -q . &&
  { failed=$((failed + 1)); echo "FAIL a failed pull wrote objects"; }
instance dist-pull
check "apply pulls with the Secret's credentials" 0 "Reconciliation finished" -- \
  "${fluxopctl[@]}" apply "$work/instance.yaml"
if kubectl -n flux-system get deployment source-controller -o jsonpath='{.spec.template.spec.containers[0].image}' |
  grep -q 'source-controller:v1.9'; then
  passed=$((passed + 1))
  echo "ok the pulled distribution was applied"
else
  failed=$((failed + 1))
  echo "FAIL source-controller is not the 2.9 one"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
