#!/usr/bin/env bash
# End-to-end test of .spec.distribution.artifactPullSecret: `fluxopctl apply`
# pulls the distribution from a registry that wants credentials, with the
# credentials of a kubernetes.io/dockerconfigjson Secret in the instance's
# namespace, on a local control plane (scripts/cluster) of its own. Then
# `fluxopctl mirror --platform linux/arm64` (the Docker config's credentials)
# from a source registry of synthetic images (tests/mirror) into a site
# registry that takes the sparse index this leaves (CNCF distribution v3's,
# built once from the Go module proxy), the source stopped, and `apply` from
# the mirror alone: the Deployments name the mirrored digests, which the
# mirror serves.
#
#   tests/e2e/pull_secret_test.sh BIN ROOT
#
# Closes with `N passed, M failed`. A skip (exit 77; a failure when CI=true,
# see tests/lib/skip.sh) only when there are no cluster binaries, no
# distribution, docker-registry cannot be installed or Go is missing to build
# distribution v3's registry; a registry that does not start is a failure.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
source "$root/scripts/lib/oci-registry.sh"
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
# shellcheck source=tests/mirror/lib.sh
source "$root/tests/mirror/lib.sh"

# fluxopctl's cache is the test's own (scripts/cluster keeps its binaries in
# the default one).
export DOCKER_CONFIG=$work/docker
fluxopctl=(env "XDG_CACHE_HOME=$work/cache" "$bin")
# Only a safety net, should the test be killed before cleanup stops it:
# longer than any run of the test.
export REGISTRY_LIFETIME=1200
mkdir -p "$DOCKER_CONFIG"

# exits_with STATUS STDERR_REGEX COMMAND...: COMMAND (within 120 s) exits
# STATUS with a stderr line matching; its output in $work/out and err.
exits_with() {
  local want=$1 pattern=$2 status=0
  shift 2
  timeout 120 "$@" >"$work/out" 2>"$work/err" || status=$?
  [ "$status" = "$want" ] && grep -qE -- "$pattern" "$work/err" ||
    { echo "exit $status (want $want, 124 is a timeout), stderr:"; tail -3 "$work/err"; return 1; }
}
# A step the rest cannot go without.
stop() { abort "$1: $2"; }

registry_ensure_installed || skip_test "docker-registry cannot be installed"
status=0
registry_v3_ensure_built 2>"$work/registry-v3.err" || status=$?
[ "$status" = 77 ] && skip_test "$(tail -n 1 "$work/registry-v3.err")"
[ "$status" = 0 ] || stop "registry" "building distribution v3's registry failed: $(tail -n 1 "$work/registry-v3.err")"
registry_start "$work/registry" --htpasswd alice:s3cret >/dev/null 2>"$work/registry.err" || {
  tail -5 "$work/registry.err" | sed 's/^/  | /'
  stop "registry" "docker-registry with --htpasswd did not start"
}
registry_save site
e2e_cluster_up "$work/cluster"

# Push with the credentials in a Docker config, then take them away: only
# the Secret has them.
printf '{"auths":{"%s":{"auth":"%s"}}}' "$REGISTRY_ADDR" "$(printf alice:s3cret | base64)" \
  >"$DOCKER_CONFIG/config.json"
"${fluxopctl[@]}" push "$dist" "oci://$REGISTRY_ADDR/flux/manifests:v1" >/dev/null 2>"$work/err" || {
  tail -3 "$work/err" | sed 's/^/  | /'
  stop "push" "fluxopctl push to the registry with the Docker config's credentials failed"
}
rm "$DOCKER_CONFIG/config.json"

instance_pulling_with() {  # SECRET: $work/instance.yaml, its artifact pulled with Secret SECRET
  sed "s|registry: ghcr.io/fluxcd|&\n    artifact: oci://$REGISTRY_ADDR/flux/manifests:v1\n    artifactPullSecret: $1|" \
    "$root/tests/e2e/instances/flux-2.9-no-helm.yaml" >"$work/instance.yaml"
}
{
  kubectl create namespace flux-system &&
    kubectl -n flux-system create secret docker-registry dist-pull --docker-server="$REGISTRY_ADDR" \
      --docker-username=alice --docker-password=s3cret &&
    kubectl -n flux-system create secret generic not-docker --from-literal=a=b &&
    kubectl -n flux-system create secret docker-registry wrong-password --docker-server="$REGISTRY_ADDR" \
      --docker-username=alice --docker-password=nope
} >/dev/null 2>"$work/err" || stop "secrets" "kubectl could not create the namespace and Secrets: $(tail -1 "$work/err")"

instance_pulling_with missing
check "a missing Secret is named" exits_with 1 "Secret/flux-system/missing \(.spec.distribution.artifactPullSecret\): not found" \
  "${fluxopctl[@]}" apply "$work/instance.yaml" --no-wait
instance_pulling_with not-docker
check "a Secret of another type is refused" exits_with 1 "Secret/flux-system/not-docker .*: type is not kubernetes.io/dockerconfigjson" \
  "${fluxopctl[@]}" apply "$work/instance.yaml" --no-wait
instance_pulling_with wrong-password
check "refused credentials: a clear 401, no password" exits_with 1 "HTTP 401" \
  "${fluxopctl[@]}" apply "$work/instance.yaml" --no-wait
check "refused credentials: the password is not shown" eval '! grep -q nope "$work/err"'
check "diff: refused credentials are a clear 401" exits_with 2 "HTTP 401" \
  "${fluxopctl[@]}" diff "$work/instance.yaml"
no_deployments() {
  local deployments
  deployments=$(kubectl get deployments -n flux-system -o name 2>&1) || { echo "kubectl get deployments: $deployments"; return 1; }
  [ -z "$deployments" ] || { echo "Deployments exist: $deployments"; return 1; }
}
check "the failed pulls wrote nothing" no_deployments
instance_pulling_with dist-pull
# diff renders what apply would, so it reads the same Secret.
check "diff pulls with the Secret's credentials" exits_with 1 "^[1-9][0-9]* objects would change" \
  "${fluxopctl[@]}" diff "$work/instance.yaml"
check "diff: the artifact was pulled" grep -qE "^pulled oci://$REGISTRY_ADDR/flux/manifests@sha256:" "$work/err"
check "apply pulls with the Secret's credentials" exits_with 0 "Reconciliation finished" \
  "${fluxopctl[@]}" apply "$work/instance.yaml"
check "diff after the apply: nothing would change" exits_with 0 "^0 objects would change" \
  "${fluxopctl[@]}" diff "$work/instance.yaml"
# The newest Flux 2.9 of the distribution, and its source-controller tag as
# the distribution's image list has it (not as fluxopctl renders it).
newest=$(ls "$dist/flux-images" | grep '^v2\.9\.' | sort -V | tail -1)
tag=$(grep -A1 'name: ghcr.io/fluxcd/source-controller$' "$dist/flux-images/$newest/upstream-alpine.yaml" |
  sed -n 's/^ *newTag: //p')
newest_applied() {
  local image
  image=$(kubectl -n flux-system get deployment source-controller -o jsonpath='{.spec.template.spec.containers[0].image}' 2>&1)
  [ -n "$tag" ] && [[ $image =~ ^ghcr\.io/fluxcd/source-controller:${tag//./\\.}(@sha256:[0-9a-f]{64})?$ ]] ||
    { echo "source-controller runs '$image', not Flux $newest's ghcr.io/fluxcd/source-controller:$tag"; return 1; }
}
check "the pulled distribution was applied (Flux $newest, source-controller $tag)" newest_applied

# The mirror: synthetic images and a distribution (Flux $newest's manifests,
# tests/mirror's catalog) in a source registry, their arm64 platform copied
# into the site's mirror registry; the source is stopped before the apply.
registry_start "$work/source" >/dev/null 2>"$work/registry.err" || stop "source registry" "did not start"
registry_save source
mirror_source_fixture "$dist/flux/$newest" "$newest" "$work/mirror-dist" ||
  stop "mirror fixture" "the synthetic images or the test distribution"
"${fluxopctl[@]}" push "$work/mirror-dist" "oci://$REGISTRY_ADDR/flux/manifests:v1" >/dev/null 2>"$work/err" ||
  stop "mirror fixture" "push to the source registry: $(tail -1 "$work/err")"
source_addr=$REGISTRY_ADDR
registry_start "$work/mirror" --htpasswd alice:s3cret --sparse-index linux/arm64 >/dev/null 2>"$work/registry.err" ||
  stop "mirror registry" "distribution v3's registry did not start: $(tail -1 "$work/registry.err")"
registry_save mirror
kubectl -n flux-system create secret docker-registry mirror-pull --docker-server="$REGISTRY_ADDR" \
  --docker-username=alice --docker-password=s3cret >/dev/null 2>"$work/err" ||
  stop "secrets" "kubectl could not create the mirror's Secret: $(tail -1 "$work/err")"
printf '{"auths":{"%s":{"auth":"%s"}}}' "$REGISTRY_ADDR" "$(printf alice:s3cret | base64)" \
  >"$DOCKER_CONFIG/config.json"
check "mirror linux/arm64 into the site's registry, with the Docker config's credentials" exits_with 0 "^mirrored [0-9]+ images" \
  "${fluxopctl[@]}" mirror "oci://$REGISTRY_ADDR/site" --platform linux/arm64 \
  --distribution-artifact "oci://$source_addr/flux/manifests:v1"
cp "$work/out" "$work/mirror.yaml"
rm "$DOCKER_CONFIG/config.json"
registry_use source
registry_stop
registry_use mirror
{
  sed -n '1,/^spec:/p' "$root/tests/e2e/instances/flux-2.9-no-helm.yaml"
  sed -n '/^  distribution:/,$p' "$work/mirror.yaml"
  echo "    version: \"2.9.x\""
  echo "    artifactPullSecret: mirror-pull"
  sed -n '/^  components:/,$p' "$root/tests/e2e/instances/flux-2.9-no-helm.yaml"
} >"$work/instance.yaml"
check "apply from the mirror alone" exits_with 0 "Reconciliation finished" \
  "${fluxopctl[@]}" apply "$work/instance.yaml"
live=$(kubectl -n flux-system get deployments -o jsonpath='{range .items[*]}{.spec.template.spec.containers[0].image}{"\n"}{end}' 2>&1 | sort)
expected=$(while read -r ref; do
  component=${ref%@*} component=${component##*/}
  tag=$(grep -A1 "name: .*/$component\$" "$work/mirror-dist/flux-images/$newest/upstream-alpine.yaml" |
    sed -n 's/^ *newTag: //p')
  echo "$REGISTRY_ADDR/site/$component:$tag@${ref#*@}"
done < <(mirror_catalog_refs "$work/mirror-dist" "$newest" | grep -v helm-controller) | sort)
check "the Deployments name the mirrored digests" \
  eval '[ -n "$expected" ] && [ "$live" = "$expected" ] || { echo "live: $(echo $live); want: $(echo $expected)"; false; }'
# Each of them served by the mirror: source-controller's is the source's
# index, though only its arm64 manifest was copied.
missing=
mirror_curl_options=(-u alice:s3cret)
for image in $live; do
  repository=${image%@*} repository=${repository#*/} repository=${repository%:*}
  mirror_has_manifest "http://$REGISTRY_ADDR" "$repository" "${image#*@}" || missing+=" $image"
done
mirror_curl_options=()
check "the mirror serves every digest the Deployments name" \
  eval '[ -n "$live" ] && [ -z "$missing" ] || { echo "not served:${missing:- no images}"; false; }'

summary
