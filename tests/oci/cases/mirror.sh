# `fluxopctl images` and `fluxopctl mirror` against local registries only: a
# source registry holding small synthetic images (tests/mirror: source-controller
# an index of two platforms, every image sharing a layer), a distribution
# written for the tests (tests/cli/distribution's manifests, tests/mirror's
# catalog naming those images) pushed there as an artifact; then the mirror to
# a destination registry with its access log: every digest at the destination,
# a second mirror that uploads no blob, --dry-run, an interrupted mirror (held
# by http_faults.py, killed) run again, a mirror stopped by SIGTERM or SIGINT
# (its scratch directory removed), --platform into distribution v3's registry
# (a sparse index, which docker-registry 2.8 refuses), a destination whose
# registry value YAML must quote (IPv6), bad input.
# Sourced by tests/oci/oci_test.sh after its setup; the helpers are
# tests/oci/lib.sh's and tests/mirror/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

# shellcheck source=tests/mirror/lib.sh
source "$root/tests/mirror/lib.sh"

# The fixtures: a source registry with the synthetic images and the test
# distribution pushed as an artifact, a destination with its access log.
t_mirror_setup() {
  mirror_version=v2.9.0
  mirror_dist=$work/mirror-dist
  registry_start "$work/reg-mirror-src" || { because "the source registry did not start"; return 1; }
  registry_save mirror_src
  mirror_src=$REGISTRY_ADDR
  mirror_source_fixture "$root/tests/cli/distribution/flux/$mirror_version" "$mirror_version" "$mirror_dist" ||
    { because "the synthetic images or the test distribution"; return 1; }
  fx push "$mirror_dist" "oci://$mirror_src/flux-operator-manifests:v1"
  succeeded "push of the test distribution" || return 1
  mirror_artifact_digest=$(sed 's/.*@//' "$work/out")
  mirror_artifact="oci://$mirror_src/flux-operator-manifests:v1"
  registry_start "$work/reg-mirror-dst" --access-log || { because "the destination registry did not start"; return 1; }
  registry_save mirror_dst
  mirror_dst=$REGISTRY_ADDR
}

blob_uploads() { grep -c '"PUT /v2/[^ ]*/blobs/uploads/' "$mirror_dst_REGISTRY_LOG"; }
blob_mounts() { grep -c '"POST /v2/[^ ]*/blobs/uploads/?mount=[^ ]* HTTP/1.1" 201' "$mirror_dst_REGISTRY_LOG"; }

# every_digest_at PATH [URL]: the artifact and every catalog image (the
# index's children too) under PATH at the destination (URL, default the plain
# one), by digest and by tag.
every_digest_at() {
  local path=$1 url=${2:-http://$mirror_dst} child
  catalog_at "$path" "$url" || return 1
  for child in $(index_children); do
    mirror_has_manifest "$url" "$path/source-controller" "${child#*=}" ||
      { because "the index's child ${child#*=} is not at $url/$path"; return 1; }
  done
}

# catalog_at PATH URL: the artifact and every catalog image (an index as
# such) under PATH at URL, by digest and by tag.
catalog_at() {
  local path=$1 url=$2 ref name digest component tag
  mirror_has_manifest "$url" "$path/flux-operator-manifests" "$mirror_artifact_digest" v1 ||
    { because "the artifact $mirror_artifact_digest is not at $url/$path"; return 1; }
  while read -r ref; do
    name=${ref%@*} digest=${ref#*@} component=${name##*/}
    tag=$(grep -A1 "name: .*/$component\$" "$mirror_dist/flux-images/$mirror_version/upstream-alpine.yaml" |
      awk '/newTag:/ { print $2 }')
    mirror_has_manifest "$url" "$path/$component" "$digest" "$tag" ||
      { because "$component $tag@$digest is not at $url/$path"; return 1; }
  done < <(mirror_catalog_refs "$mirror_dist" "$mirror_version")
}

# index_children: "OS/ARCH=DIGEST" of each child of source-controller's index
# at the source.
index_children() {
  curl -fsS -m 30 -H 'Accept: application/vnd.oci.image.index.v1+json' \
    "http://$mirror_src/v2/fluxcd/source-controller/manifests/v1.9.0" |
    python3 -c 'import json, sys
for m in json.load(sys.stdin)["manifests"]:
    print(m["platform"]["os"] + "/" + m["platform"]["architecture"] + "=" + m["digest"])'
}

# child_blobs DIGEST: the config's and the layers' digests of the source's
# source-controller manifest DIGEST.
child_blobs() {
  curl -fsS -m 30 -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$mirror_src/v2/fluxcd/source-controller/manifests/$1" |
    python3 -c 'import json, sys
m = json.load(sys.stdin)
for d in [m["config"]] + m["layers"]: print(d["digest"])'
}

has_blob() { curl -fs -m 30 -o /dev/null -I "$1/v2/$2/blobs/$3"; }

# --- images --------------------------------------------------------------------

t_images_text() {
  fx images --distribution-artifact "$mirror_dist"
  succeeded "images" || return 1
  [ "$(lines "$work/out")" -eq 5 ] || { because "want a header and 4 images: $(cat "$work/out")"; return 1; }
  local ref
  while read -r ref; do
    grep -q "$mirror_version .*${ref%@*}:v[0-9.]*@${ref#*@}\$" "$work/out" ||
      { because "no line for $ref: $(cat "$work/out")"; return 1; }
  done < <(mirror_catalog_refs "$mirror_dist" "$mirror_version")
}

t_images_instance_json() {
  cat >"$work/mirror-instance.yaml" <<YAML
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.x"
    registry: mirror.example.com/flux
    variant: upstream-alpine
  components: [source-controller, helm-controller]
YAML
  fx images "$work/mirror-instance.yaml" --distribution-artifact "$mirror_dist" -o json
  succeeded "images FILE -o json" || return 1
  local names
  names=$(python3 -c 'import json, sys
for v in json.load(sys.stdin):
    for i in v["images"]: print(v["version"], i["name"], i["tag"], i["digest"], i["source"])' <"$work/out")
  [ "$(grep -c '' <<<"$names")" -eq 2 ] || { because "want 2 images: $names"; return 1; }
  grep -q "^$mirror_version mirror.example.com/flux/source-controller v1.9.0 sha256:22dedbdf.* $mirror_src/fluxcd/source-controller\$" <<<"$names" ||
    { because "source-controller not named under the instance's registry: $names"; return 1; }
}

t_images_bad_input() {
  fx images --distribution-artifact "$mirror_dist" --variant debian
  one_line_error "--variant debian" '^error: --variant: unsupported variant "debian"' || return 1
  fx images --distribution-artifact "$mirror_dist" --version 3.x
  one_line_error "--version 3.x" '^error: --version: no Flux version' || return 1
  fx images --distribution-artifact "$mirror_dist" --variant enterprise-alpine
  one_line_error "a variant without a catalog" 'enterprise-alpine' || return 1
}

# --- mirror --------------------------------------------------------------------

t_mirror_dry_run() {
  local before
  before=$(blob_uploads)
  fx mirror "oci://$mirror_dst/dry" --distribution-artifact "$mirror_artifact" --dry-run
  succeeded "mirror --dry-run" || return 1
  grep -q '^would mirror 5 images and artifacts, 0 already there; 13 blobs ([0-9]* bytes) to copy' "$work/out" ||
    { because "no total of 13 blobs: $(tail -1 "$work/out")"; return 1; }
  [ "$(grep -c '^would copy ' "$work/out")" -eq 5 ] || { because "want 5 'would copy' lines"; return 1; }
  [ "$(blob_uploads)" -eq "$before" ] || because "--dry-run uploaded a blob"
}

t_mirror() {
  fx mirror "oci://$mirror_dst/flux" --distribution-artifact "$mirror_artifact"
  succeeded "mirror" || return 1
  printf 'spec:\n  distribution:\n    artifact: oci://%s/flux/flux-operator-manifests:v1\n    registry: %s/flux\n    variant: upstream-alpine\n' \
    "$mirror_dst" "$mirror_dst" >"$work/want"
  same_as "mirror's .spec.distribution" "$work/want" || return 1
  every_digest_at flux || return 1
  echo "    first mirror: $(blob_uploads) blob uploads, $(blob_mounts) mounts"
}

t_mirror_again() {
  local uploads mounts
  uploads=$(blob_uploads) mounts=$(blob_mounts)
  fx mirror "oci://$mirror_dst/flux" --distribution-artifact "$mirror_artifact"
  succeeded "second mirror" || return 1
  echo "    second mirror: $(($(blob_uploads) - uploads)) blob uploads, $(($(blob_mounts) - mounts)) mounts"
  [ "$(blob_uploads)" -eq "$uploads" ] && [ "$(blob_mounts)" -eq "$mounts" ] ||
    { because "the second mirror transferred blobs"; return 1; }
  grep -q 'mirrored 5 images and artifacts, 5 already there; 0 blobs' "$work/err" ||
    because "the second mirror did not find everything there: $(tail -1 "$work/err")"
}

t_mirror_interrupted() {
  local port pid
  # The uploads of helm-controller's blobs are held: the mirror stops there.
  start_helper "$work/faults.port" python3 "$root/tests/oci/http_faults.py" \
    --upstream "http://$mirror_dst" --port-file "$work/faults.port" --log "$work/faults.log" \
    --hold-match 'helm-controller/blobs/uploads' --timeout 300 || { because "no fault proxy"; return 1; }
  port=$(head -1 "$work/faults.port")
  # Killed below, whatever happens: no timeout between it and the kill. Its
  # blobs on their way are left in TMPDIR, the suite's.
  TMPDIR=$work "$bin" mirror "oci://127.0.0.1:$port/resume" --distribution-artifact "$mirror_artifact" \
    >"$work/out" 2>"$work/err" &
  pid=$!
  # Held, and another image finished: the kill leaves a mirror half done.
  wait_until 60 grep -q 'held' "$work/faults.log" &&
    wait_until 60 grep -q '"PUT /v2/resume/[^ ]*/manifests/' "$mirror_dst_REGISTRY_LOG"
  local waited=$?
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  [ $waited -eq 0 ] || { because "no upload held, or no image mirrored before it"; return 1; }
  stop_helper "$helper_pid"
  mirror_has_manifest "http://$mirror_dst" resume/helm-controller \
    "$(mirror_catalog_refs "$mirror_dist" "$mirror_version" | grep helm | sed 's/.*@//')" &&
    { because "helm-controller was mirrored before the kill"; return 1; }
  fx mirror "oci://$mirror_dst/resume" --distribution-artifact "$mirror_artifact"
  succeeded "the mirror run again" || return 1
  # Images or blobs the killed mirror had copied.
  grep -qE '^mirrored .* [1-9][0-9]* already there' "$work/err" ||
    { because "nothing was already there: $(tail -1 "$work/err")"; return 1; }
  every_digest_at resume
}

t_mirror_platform() {
  fx mirror "oci://$mirror_dst/narrow" --distribution-artifact "$mirror_artifact" --platform linux/arm64 --dry-run
  succeeded "mirror --platform --dry-run" || return 1
  # One child of the index (its config and own layer) fewer: 11 blobs.
  grep -q '^would mirror 5 images and artifacts, 0 already there; 11 blobs' "$work/out" ||
    { because "--platform did not narrow the index: $(tail -1 "$work/out")"; return 1; }
  fx mirror "oci://$mirror_dst/narrow" --distribution-artifact "$mirror_artifact" --platform windows/amd64 --dry-run
  one_line_error "--platform windows/amd64" 'no manifest for the platforms.*linux/amd64, linux/arm64'
}

# gone PID: the process has exited (a zombie until waited for).
gone() {
  local state
  state=$(sed -n 's/^State:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
  [ -z "$state" ] || [ "${state:0:1}" = Z ]
}

# A mirror stopped by SIGNAL (TERM or INT) while an upload is held: it exits
# 128 + the signal's number saying so, its scratch directory removed from
# TMPDIR; the mirror run again completes.
t_mirror_stopped_by() {
  local signal=$1 want=$2 tmp=$work/tmp-$1 path=stopped-${1,,} port pid status scratch
  start_helper "$work/faults-$signal.port" python3 "$root/tests/oci/http_faults.py" \
    --upstream "http://$mirror_dst" --port-file "$work/faults-$signal.port" --log "$work/faults-$signal.log" \
    --hold-match 'helm-controller/blobs/uploads' --timeout 300 || { because "no fault proxy"; return 1; }
  port=$(head -1 "$work/faults-$signal.port")
  mkdir -p "$tmp"
  # As from a terminal: a background job of a script ignores SIGINT unless
  # told otherwise.
  TMPDIR=$tmp env --default-signal=INT,TERM "$bin" mirror "oci://127.0.0.1:$port/$path" \
    --distribution-artifact "$mirror_artifact" >"$work/out" 2>"$work/err" &
  pid=$!
  wait_until 60 grep -q 'held' "$work/faults-$signal.log"
  status=$?
  scratch=$(ls -A "$tmp")
  kill -s "$signal" "$pid"
  wait_until 60 gone "$pid" || kill -9 "$pid"
  wait "$pid"
  local exited=$?
  stop_helper "$helper_pid"
  [ $status -eq 0 ] || { because "no upload held"; return 1; }
  [ -n "$scratch" ] || { because "no scratch directory in TMPDIR while the upload was held"; return 1; }
  [ $exited -eq "$want" ] || { because "exit $exited after SIG$signal, want $want"; return 1; }
  grep -q "^error: interrupted by SIG$signal\$" "$work/err" ||
    { because "no 'interrupted by SIG$signal': $(tail -1 "$work/err")"; return 1; }
  [ -z "$(ls -A "$tmp")" ] || { because "left in TMPDIR: $(ls -A "$tmp")"; return 1; }
  fx mirror "oci://$mirror_dst/$path" --distribution-artifact "$mirror_artifact"
  succeeded "the mirror run again" || return 1
  every_digest_at "$path"
}

# --platform linux/arm64 keeps source-controller's index as it is (its digest)
# with its arm64 child alone: docker-registry 2.8 refuses such an index,
# distribution v3 accepts it when told to validate only the platforms present.
# (tests/e2e/pull_secret_test.sh applies from such a mirror.)
t_mirror_sparse_index() {
  fx mirror "oci://$mirror_dst/narrow" --distribution-artifact "$mirror_artifact" --platform linux/arm64
  [ $rc -eq 1 ] && tail -1 "$work/err" | grep -q '^error: .*narrow/source-controller:v1.9.0: .*--platform leaves the index' ||
    { because "docker-registry 2.8 refused the index with: $(tail -1 "$work/err")"; return 1; }
  registry_start "$work/reg-mirror-v3" --sparse-index linux/arm64 ||
    { because "distribution v3's registry did not start"; return 1; }
  registry_save mirror_v3
  local v3=http://$REGISTRY_ADDR child arm64='' amd64='' arm64_blobs digest
  fx mirror "oci://$REGISTRY_ADDR/narrow" --distribution-artifact "$mirror_artifact" --platform linux/arm64
  succeeded "mirror --platform linux/arm64 into distribution v3" || return 1
  # The index by the source's digest and by its tag (catalog_at), the others whole.
  catalog_at narrow "$v3" || return 1
  for child in $(index_children); do
    case $child in linux/arm64=*) arm64=${child#*=} ;; linux/amd64=*) amd64=${child#*=} ;; esac
  done
  [ -n "$arm64" ] && [ -n "$amd64" ] || { because "the source index has no arm64 or amd64 child"; return 1; }
  mirror_has_manifest "$v3" narrow/source-controller "$arm64" ||
    { because "the arm64 manifest $arm64 is not at the destination"; return 1; }
  arm64_blobs=$(child_blobs "$arm64") || { because "the source has no arm64 manifest $arm64"; return 1; }
  for digest in $arm64_blobs; do
    has_blob "$v3" narrow/source-controller "$digest" || { because "arm64's blob $digest is not there"; return 1; }
  done
  ! mirror_has_manifest "$v3" narrow/source-controller "$amd64" ||
    { because "the amd64 manifest $amd64 was copied"; return 1; }
  for digest in $(child_blobs "$amd64"); do
    grep -qx "$digest" <<<"$arm64_blobs" && continue  # the layer every image shares
    ! has_blob "$v3" narrow/source-controller "$digest" || { because "amd64's blob $digest was copied"; return 1; }
  done
}

# A destination on IPv6 loopback: the registry value starts with "[", which
# YAML reads as a list unless quoted.
t_mirror_ipv6_yaml() {
  start_helper "$work/faults-v6.port" python3 "$root/tests/oci/http_faults.py" --listen ::1 \
    --upstream "http://$mirror_dst" --port-file "$work/faults-v6.port" --log "$work/faults-v6.log" \
    --timeout 300 || { because "no proxy on [::1]"; return 1; }
  local port
  port=$(head -1 "$work/faults-v6.port")
  fx mirror "oci://[::1]:$port/v6" --distribution-artifact "$mirror_artifact"
  stop_helper "$helper_pid"
  succeeded "mirror to [::1]" || return 1
  python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))["spec"]["distribution"]
want = {"registry": "[::1]:%s/v6" % sys.argv[2],
        "artifact": "oci://[::1]:%s/v6/flux-operator-manifests:v1" % sys.argv[2],
        "variant": "upstream-alpine"}
sys.exit(0 if d == want else "read as %r, want %r" % (d, want))' "$work/out" "$port" 2>"$work/yaml.err" ||
    because "the printed YAML: $(tail -1 "$work/yaml.err"): $(cat "$work/out")"
}

t_mirror_bad_dest() {
  fx mirror "oci://$mirror_dst/flux:v1" --distribution-artifact "$mirror_artifact"
  one_line_error "DEST with a tag" '^error: DEST: .*without a tag or digest' || return 1
  fx mirror "https://$mirror_dst/flux" --distribution-artifact "$mirror_artifact"
  one_line_error "DEST not oci://" '^error: DEST: '
}

# A destination over TLS with a throwaway CA (--ca-file) and basic auth (the
# Docker config's credentials); refused without either.
t_mirror_tls_auth() {
  registry_start "$work/reg-mirror-tls" --tls "$loopback_name" --htpasswd alice:s3cret ||
    { because "the TLS registry did not start"; return 1; }
  registry_save mirror_tls
  local tls=$REGISTRY_ADDR
  docker_config '{}'
  fx mirror "oci://$tls/flux" --distribution-artifact "$mirror_artifact" --ca-file "$mirror_tls_REGISTRY_CA"
  one_line_error "without credentials" "unauthorized|credentials" || return 1
  docker_config "{\"auths\":{\"$tls\":{\"auth\":\"$(printf alice:s3cret | base64)\"}}}"
  fx mirror "oci://$tls/flux" --distribution-artifact "$mirror_artifact"
  one_line_error "without the CA" 'certificate|x509|verif|ssl|tls' || return 1
  fx mirror "oci://$tls/flux" --distribution-artifact "$mirror_artifact" --ca-file "$mirror_tls_REGISTRY_CA"
  succeeded "mirror over TLS with --ca-file and the credentials" || return 1
  mirror_curl_options=(--cacert "$mirror_tls_REGISTRY_CA" -u alice:s3cret)
  every_digest_at flux "https://$tls"
  local status=$?
  mirror_curl_options=()
  docker_config '{}'
  return $status
}

tcase mirror-setup t_mirror_setup
tcase images-text t_images_text
tcase images-instance-json t_images_instance_json
tcase images-bad-input t_images_bad_input
tcase mirror-dry-run t_mirror_dry_run
tcase mirror t_mirror
tcase mirror-again-transfers-nothing t_mirror_again
tcase mirror-interrupted-resumes t_mirror_interrupted
tcase mirror-platform t_mirror_platform
tcase mirror-stopped-by-sigterm t_mirror_stopped_by TERM 143
tcase mirror-stopped-by-sigint t_mirror_stopped_by INT 130
if [ -n "$registry_v3_unavailable" ]; then
  skip "mirror: --platform into distribution v3 (a sparse index)" "$registry_v3_unavailable"
else
  tcase "mirror: --platform into distribution v3 (a sparse index)" t_mirror_sparse_index
fi
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
  tcase "mirror: an IPv6 destination's YAML, quoted" t_mirror_ipv6_yaml
else
  skip "mirror: an IPv6 destination's YAML" "no IPv6 loopback (::1)"
fi
tcase mirror-bad-dest t_mirror_bad_dest
if [ -n "$loopback_name" ]; then
  tcase "mirror: a destination over TLS (--ca-file) with basic auth" t_mirror_tls_auth
else
  skip "mirror: a destination over TLS" "no name of this machine resolves to 127.x (hostname)"
fi
