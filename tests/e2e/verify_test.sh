#!/usr/bin/env bash
# End-to-end tests of `--verify` on what apply and the daemon install, on a
# local control plane (scripts/cluster) of their own. Each case makes its own
# signed source: a local registry (Debian's docker-registry) holding the
# synthetic controller images of tests/mirror and a distribution (Flux's
# newest 2.9 manifests, the synthetic images' catalog) pushed as an artifact,
# all signed by cosign (scripts/lib/cosign.sh) with a key pair, no
# transparency log; then `mirror --verify --key` into a second registry of
# its own. Each case runs alone, in any order:
#   mirror_apply    the source registry stopped, `apply --verify --key` from
#                   the mirror alone: the artifact and the four images are
#                   verified there, the Deployments run the mirrored digests;
#                   then the mirror stopped too, `apply --verify --offline`
#                   trusts the sealed records of what it verified
#   unsigned_image  kustomize-controller's tag in the mirror moved to a
#                   digest nobody signed (an instance that names the tags: a
#                   registry of one's own without a variant): apply --verify
#                   exits 1, one error line naming that image, nothing applied
#   daemon_tampered `apply --watch --verify` installs the tags pinned to the
#                   digests it verified; the mirror then tampered as above,
#                   a reconcile requested: Ready=False ArtifactFailed, an
#                   ArtifactFailed Event naming the image, and the
#                   Deployments keep their images
#
#   tests/e2e/verify_test.sh BIN ROOT [CASE...]
#
# The distribution is ROOT/../shared/flux-distribution. Closes with `N
# passed, M failed`; a skip (exit 77, a failure when CI=true) only when
# kubectl, the distribution, docker-registry, Go to build cosign or the
# cluster binaries are missing.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2
# shellcheck source=scripts/lib/cosign.sh
source "$root/scripts/lib/cosign.sh"
# shellcheck source=tests/mirror/lib.sh
source "$root/tests/mirror/lib.sh"

# Only a safety net, should the test be killed before cleanup stops them.
export REGISTRY_LIFETIME=3600
daemon=
# The daemon runs detached (its pid in $work/daemon.pid), not as a job.
e2e_cleanup_hook() { [ -s "$work/daemon.pid" ] && kill -9 "$(cat "$work/daemon.pid")" 2>/dev/null; }

all_cases=(mirror_apply unsigned_image daemon_tampered)
e2e_select_cases "$@"

command -v curl >/dev/null || skip_test "curl is not installed"
registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"
cosign_ensure_built || skip_test "cosign $cosign_version could not be built (above)"

# The seal of fluxopctl's verified records, and the Docker config: the test's own.
export XDG_STATE_HOME=$work/state DOCKER_CONFIG=$work/docker
export COSIGN_PASSWORD='' COSIGN_YES=true TUF_ROOT=$work/tuf
mkdir -p "$DOCKER_CONFIG"
(cd "$work" && "$cosign" generate-key-pair --output-key-prefix signer >/dev/null 2>&1) ||
  abort "setup: cosign generate-key-pair failed"
key=$work/signer.key pub=$work/signer.pub
newest=$(ls "$dist/flux-images" | grep '^v2\.9\.' | sort -V | tail -1)
[ -n "$newest" ] || skip_test "no Flux 2.9 in $dist"
e2e_cluster_up "$work/cluster"

# ---------------------------------------------------------------------------
# Fixtures

# signed_source CASE: a source registry of the case's own ($source, saved as
# CASE_source) with the synthetic images under fluxcd/ and the distribution
# as oci://$source/flux/manifests:v1, each signed with the key; its catalog
# names the tags the manifests of Flux $newest name, so that an instance
# rendered from the tags installs the same images. Then a mirror registry
# of the case's own ($mirror, saved as CASE_mirror, the current one).
signed_source() {
  local dir=$work/$1 component tag ref
  mkdir -p "$dir" || return 1
  registry_start "$dir/source" >/dev/null 2>"$dir/registry.err" ||
    { echo "the source registry did not start: $(tail -1 "$dir/registry.err")"; return 1; }
  registry_save "${1}_source"
  source=$REGISTRY_ADDR
  mirror_source_fixture "$dist/flux/$newest" "$newest" "$dir/dist" ||
    { echo "the synthetic images or the test distribution"; return 1; }
  while read -r ref; do
    component=${ref%@*} component=${component##*/}
    tag=$(sed -n "s|^ *image: .*/$component:\(v[^@ ]*\)$|\1|p" "$dist/flux/$newest/$component.yaml")
    [ -n "$tag" ] || { echo "no $component tag in Flux $newest's manifests"; return 1; }
    sed -i "/name: .*\/$component\$/{n;s/newTag: .*/newTag: $tag/}" \
      "$dir/dist/flux-images/$newest/upstream-alpine.yaml"
    python3 - "$source" "fluxcd/$component" "${ref#*@}" "$tag" <<'PY' || { echo "tagging $component $tag failed"; return 1; }
import sys, urllib.request
registry, repo, digest, tag = sys.argv[1:5]
base = f"http://{registry}/v2/{repo}/manifests"
accept = "application/vnd.oci.image.manifest.v1+json,application/vnd.oci.image.index.v1+json"
req = urllib.request.Request(f"{base}/{digest}", headers={"Accept": accept})
with urllib.request.urlopen(req, timeout=30) as r:
    body, media_type = r.read(), r.headers["Content-Type"]
req = urllib.request.Request(f"{base}/{tag}", data=body, method="PUT",
                             headers={"Content-Type": media_type})
urllib.request.urlopen(req, timeout=30).close()
PY
  done < <(mirror_catalog_refs "$dir/dist" "$newest")
  XDG_CACHE_HOME=$dir/push-cache timeout -k 5 120 "$bin" push "$dir/dist" "oci://$source/flux/manifests:v1" \
    >"$dir/push.out" 2>"$dir/push.err" || { echo "fluxopctl push: $(tail -1 "$dir/push.err")"; return 1; }
  for ref in "$source/flux/manifests:v1" $(mirror_catalog_refs "$dir/dist" "$newest"); do
    timeout -k 5 120 "$cosign" sign --key "$key" --tlog-upload=false --use-signing-config=false \
      --new-bundle-format=false "$ref" >"$dir/sign.out" 2>&1 ||
      { echo "cosign sign $ref: $(tail -1 "$dir/sign.out")"; return 1; }
  done
  registry_start "$dir/mirror" >/dev/null 2>"$dir/registry.err" ||
    { echo "the mirror registry did not start: $(tail -1 "$dir/registry.err")"; return 1; }
  registry_save "${1}_mirror"
  mirror=$REGISTRY_ADDR
}

# write_instance FILE REGISTRY ARTIFACT [VARIANT]: Flux 2.9 with four controllers,
# from REGISTRY and ARTIFACT (without VARIANT: the manifests' tags).
write_instance() {
  cat >"$1" <<YAML
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: $ns
spec:
  distribution:
    version: "2.9.x"
    registry: $2
    artifact: $3
${4:+    variant: $4}
  components: [source-controller, kustomize-controller, helm-controller, notification-controller]
  cluster:
    type: kubernetes
    networkPolicy: false
YAML
}

# mirror_verified CASE: `mirror --verify --key` of the case's signed source
# into oci://$mirror/flux; its instance from the source in $work/CASE/source.yaml.
mirror_verified() {
  write_instance "$work/$1/source.yaml" "$source/fluxcd" "oci://$source/flux/manifests:v1" upstream-alpine
  fx "$1-mirror" mirror "oci://$mirror/flux" "$work/$1/source.yaml" --verify --key "$pub"
  [ "$rc" = 0 ] || { echo "mirror --verify: exit $rc: $(tail -1 "$work/$1-mirror.err")"; return 1; }
}

# retag_unsigned REGISTRY REPO TAG: REPO's TAG moved to a manifest of the
# same blobs with one annotation more: another digest, which nobody signed.
# Prints that digest.
retag_unsigned() {
  python3 - "$@" <<'PY'
import hashlib, json, sys, urllib.request
registry, repo, tag = sys.argv[1:4]
base = f"http://{registry}/v2/{repo}/manifests"
accept = "application/vnd.oci.image.manifest.v1+json"
req = urllib.request.Request(f"{base}/{tag}", headers={"Accept": accept})
with urllib.request.urlopen(req, timeout=30) as r:
    manifest = json.loads(r.read())
manifest.setdefault("annotations", {})["test"] = "not signed"
body = json.dumps(manifest).encode()
req = urllib.request.Request(f"{base}/{tag}", data=body, method="PUT",
                             headers={"Content-Type": manifest["mediaType"]})
urllib.request.urlopen(req, timeout=30).close()
print("sha256:" + hashlib.sha256(body).hexdigest())
PY
}

# apply_verify NAME FILE [FLAG...]: apply --verify --key of FILE, its
# artifact the instance's (not the e2e's usual --distribution-artifact).
apply_verify() {
  local name=$1 file=$2
  shift 2
  fx "$name" apply "$file" --verify --key "$pub" --kubeconfig "$KUBECONFIG" --timeout 3m "$@"
}
# deployment_images: "NAME IMAGE" of each Deployment in $ns, sorted.
deployment_images() {
  k -n "$ns" get deployments \
    -o jsonpath='{range .items[*]}{.metadata.name} {.spec.template.spec.containers[0].image}{"\n"}{end}' | sort
}
# flux_written: what of Flux the cluster holds (its CRDs, the instance, its
# Deployments), one name a line.
flux_written() {
  k get crd -o name | grep -E 'fluxcd\.(io|controlplane\.io)$'
  k -n "$ns" get deployments -o name 2>/dev/null
}
delete_flux() {
  k -n "$ns" get fluxinstance flux >/dev/null 2>&1 || return 0
  fx "$1-uninstall" delete -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 5m --yes
  [ "$rc" = 0 ] || { echo "the uninstall before the case: exit $rc: $(tail -1 "$work/$1-uninstall.err")"; return 1; }
}
ready_reason() {
  fi_get '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}'
}

# ---------------------------------------------------------------------------
# Cases

t_mirror_apply() {
  local c=mirror_apply image component digest
  signed_source $c && mirror_verified $c || return 1
  # The source is gone: the apply reaches the mirror alone.
  registry_use ${c}_source
  registry_stop
  { sed -n '1,/^spec:/p' "$work/$c/source.yaml"
    sed -n '/^  distribution:/,$p' "$work/$c-mirror.out"
    echo '    version: "2.9.x"'
    sed -n '/^  components:/,$p' "$work/$c/source.yaml"; } >"$work/$c/mirror.yaml"
  apply_verify $c-apply "$work/$c/mirror.yaml"
  [ "$rc" = 0 ] || { echo "apply --verify from the mirror: exit $rc: $(tail -1 "$work/$c-apply.err")"; return 1; }
  grep -q "^verified the signature of oci://$mirror/flux/manifests@sha256:" "$work/$c-apply.err" ||
    { echo "apply --verify did not verify the mirrored artifact"; return 1; }
  while read -r image; do
    component=${image%@*} component=${component##*/} digest=${image#*@}
    grep -q "^verified the signature of oci://$mirror/flux/$component@$digest$" "$work/$c-apply.err" ||
      { echo "apply --verify did not verify $component@$digest in the mirror"; return 1; }
    deployment_images | grep -qx "$component $mirror/flux/$component:v[^@]*@$digest" ||
      { echo "the Deployment $component does not run $mirror/flux/$component@$digest: $(deployment_images | tr '\n' ' ')"; return 1; }
  done < <(mirror_catalog_refs "$work/$c/dist" "$newest")
  # Warm: every digest verified is remembered, sealed; with the mirror gone
  # too, apply --verify --offline verifies the artifact and the images by
  # those records alone.
  registry_use ${c}_mirror
  registry_stop
  apply_verify $c-warm "$work/$c/mirror.yaml" --offline
  [ "$rc" = 0 ] || { echo "apply --verify --offline, verified before: exit $rc: $(tail -1 "$work/$c-warm.err")"; return 1; }
  ! grep -q "^verified the signature" "$work/$c-warm.err" ||
    { echo "apply --verify --offline verified again: $(grep -m1 '^verified' "$work/$c-warm.err")"; return 1; }
}

t_unsigned_image() {
  local c=unsigned_image unsigned
  signed_source $c && mirror_verified $c || return 1
  delete_flux $c || return 1
  unsigned=$(retag_unsigned "$mirror" flux/kustomize-controller \
    "$(sed -n '/kustomize-controller$/{n;s/ *newTag: //p}' "$work/$c/dist/flux-images/$newest/upstream-alpine.yaml")") ||
    { echo "moving kustomize-controller's tag failed"; return 1; }
  local before
  before=$(flux_written)
  write_instance "$work/$c/mirror.yaml" "$mirror/flux" "oci://$mirror/flux/manifests:v1"
  apply_verify $c-apply "$work/$c/mirror.yaml"
  [ "$rc" = 1 ] || { echo "apply --verify of an unsigned image: exit $rc, not 1"; return 1; }
  [ ! -s "$work/$c-apply.out" ] || { echo "apply --verify refused wrote on stdout: $(head -c 200 "$work/$c-apply.out")"; return 1; }
  [ "$(grep -c '^error:' "$work/$c-apply.err")" = 1 ] &&
    grep -q "^error: .*image $mirror/flux/kustomize-controller:v[^ ]*: oci://$mirror/flux/kustomize-controller@$unsigned: not signed" \
      "$work/$c-apply.err" ||
    { echo "the error does not name kustomize-controller's unsigned digest: $(grep '^error' "$work/$c-apply.err")"; return 1; }
  [ "$(flux_written)" = "$before" ] ||
    { echo "the refused apply wrote: $(diff <(echo "$before") <(flux_written) | grep '^[<>]' | tr '\n' ' ')"; return 1; }
}

t_daemon_tampered() {
  local c=daemon_tampered installed unsigned tag
  signed_source $c && mirror_verified $c || return 1
  write_instance "$work/$c/mirror.yaml" "$mirror/flux" "oci://$mirror/flux/manifests:v1"
  start_daemon $c "$work/$c/mirror.yaml" --verify --key "$pub"
  echo "$daemon" >"$work/daemon.pid"  # the case runs in a subshell: its caller stops it
  local revision
  ready_installed() {
    [ "$(ready_reason)" = "True ReconciliationSucceeded" ] &&
      revision=$(fi_get '{.status.lastAppliedRevision}') && [ -n "$revision" ]
  }
  wait_until 300 ready_installed || { echo "the daemon did not install the instance: Ready is '$(ready_reason)'"; return 1; }
  installed=$(deployment_images)
  # Each tag installed pinned to the digest verified.
  [ "$(grep -c "@sha256:" <<<"$installed")" = 4 ] ||
    { echo "the Deployments do not run the digests verified: $(tr '\n' ' ' <<<"$installed")"; return 1; }
  tag=$(sed -n '/kustomize-controller$/{n;s/ *newTag: //p}' "$work/$c/dist/flux-images/$newest/upstream-alpine.yaml")
  unsigned=$(retag_unsigned "$mirror" flux/kustomize-controller "$tag") ||
    { echo "moving kustomize-controller's tag failed"; return 1; }
  k -n "$ns" annotate fluxinstance flux --overwrite "reconcile.fluxcd.io/requestedAt=$(date +%s%N)" >/dev/null ||
    { echo "kubectl annotate failed"; return 1; }
  artifact_failed() { [ "$(ready_reason)" = "False ArtifactFailed" ]; }
  wait_until 300 artifact_failed || { echo "Ready is '$(ready_reason)', not False ArtifactFailed"; return 1; }
  event_names_image() { events ArtifactFailed | grep -q "kustomize-controller@$unsigned: not signed"; }
  wait_until 60 event_names_image ||
    { echo "no ArtifactFailed Event names kustomize-controller@$unsigned: $(events ArtifactFailed | head -2)"; return 1; }
  [ "$(deployment_images)" = "$installed" ] ||
    { echo "the Deployments changed: $(deployment_images | tr '\n' ' '), were $(tr '\n' ' ' <<<"$installed")"; return 1; }
  [ "$(fi_get '{.status.lastAppliedRevision}')" = "$revision" ] ||
    { echo "lastAppliedRevision changed to $(fi_get '{.status.lastAppliedRevision}')"; return 1; }
}

# The daemon a case started (in check's subshell), stopped after it.
# stop_detached_daemon: the daemon a case (a subshell) started, by its pid
# file, stopped (lib.sh's stop_daemon).
stop_detached_daemon() {
  daemon=$(cat "$work/daemon.pid" 2>/dev/null)
  rm -f "$work/daemon.pid"
  stop_daemon
}

# Each case is one check, its function saying why it fails; a daemon it
# started is stopped after it.
case_mirror_apply() { check mirror_apply t_mirror_apply; stop_detached_daemon; }
case_unsigned_image() { check unsigned_image t_unsigned_image; stop_detached_daemon; }
case_daemon_tampered() { check daemon_tampered t_daemon_tampered; stop_detached_daemon; }
e2e_run_cases
summary
