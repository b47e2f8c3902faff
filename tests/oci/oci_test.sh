#!/usr/bin/env bash
# End-to-end test of `fluxopctl pull`, `fluxopctl push` and `fluxopctl build
# --distribution-artifact oci://...` against real registries on loopback:
# Debian's docker-registry (plain, htpasswd basic auth, token auth with
# tests/oci/token_issuer.py, TLS with a throwaway CA), tests/oci/http_faults.py
# for 503/429 retries and cross-host redirects, hand-made malicious tarballs,
# a corrupted blob, cache entries damaged after the pull, a pull racing
# --prune, a stopped registry (--offline), `fluxopctl pull` without a URL then
# `fluxopctl build` without flags on a new machine, offline (ghcr.io reached
# through tests/oci/connect_proxy.py, a local registry with a certificate for
# ghcr.io), FLUXOPCTL_DISTRIBUTION as an oci:// URL. Every build from oci:// is compared
# byte for byte with fluxopctl's build from the directory and with what the
# upstream flux-operator CLI (scripts/lib/upstream-cli.sh) renders from the
# same artifact.
#
#   tests/oci/oci_test.sh BIN ROOT     (BIN: fluxopctl, ROOT: the repository)
#
# Prints `ok NAME`, `FAIL NAME: reason` (then the command's stderr, indented)
# or `skip NAME: reason` per case and closes with `N passed, M failed[, K
# skipped]`. Exit 0 when none failed, 1 otherwise, 77 when it cannot run (no
# docker-registry to install, no ../shared/flux-distribution); in CI (CI=true)
# those and every skipped case are failures (tests/lib/skip.sh). A registry
# that does not start is a failure. Everything runs in a temporary directory
# (XDG_CACHE_HOME, DOCKER_CONFIG, HOME); every process started is stopped on
# exit, registries also when the script is killed; every wait is bounded.
# OCI_TEST_VERBOSE=1 also shows the error line of each expected failure;
# OCI_TEST_TIMEOUT (60) bounds each command, seconds.
# shellcheck disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BIN ROOT" >&2
  exit 2
fi
root=$(cd "$2" && pwd) || exit 2
bin=$1
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
here=$root/tests/oci
instance=$here/instance.yaml
dist=$root/../shared/flux-distribution
cmd_timeout=${OCI_TEST_TIMEOUT:-60}

source "$root/tests/lib/skip.sh"
passed=0 failed=0 skipped=0
# setup_failed REASON: a regression before the cases: the test fails.
setup_failed() {
  echo "FAIL setup: $*"
  echo "$passed passed, $((failed + 1)) failed"
  exit 1
}

[ -x "$bin" ] || setup_failed "$bin is not an executable"
[ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"
dist=$(cd "$dist" && pwd)

source "$root/scripts/lib/oci-registry.sh"
# The upstream CLI's place depends on the caller's XDG_CACHE_HOME/HOME: read
# it before they are replaced.
source "$root/scripts/lib/upstream-cli.sh"
upstream_cli=$upstream

registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"

# token_issuer.py needs python3-cryptography: the system Python has it.
issuer_python=
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import cryptography' 2>/dev/null; then
    issuer_python=$candidate
    break
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/fluxopctl-oci-test.XXXXXX") || exit 1
helper_pids=()
cleanup() {
  set +e
  local pid
  for pid in "${helper_pids[@]}"; do registry_kill "$pid"; done
  registry_stop_all
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Nothing from the machine's own configuration.
export HOME=$work/home DOCKER_CONFIG=$work/docker XDG_CACHE_HOME=$work/cache
unset SSL_CERT_FILE SSL_CERT_DIR FLUXOPCTL_DISTRIBUTION DOCKER_AUTH_CONFIG REGISTRY_AUTH_FILE
mkdir -p "$HOME" "$DOCKER_CONFIG" "$work/bin" "$work/outside"
export PATH=$work/bin:$PATH

REASON=

# --- helpers -------------------------------------------------------------------

# run CMD...: stdout in $work/out, stderr in $work/err, status in $rc; bounded.
run() {
  timeout -k 5 "$cmd_timeout" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  [ $rc -ne 124 ] || echo "(timed out after ${cmd_timeout}s)" >>"$work/err"
  cat "$work/err" >>"$work/all-stderr"
  return 0
}
fx() { run "$bin" "$@"; }

because() { REASON=$*; return 1; }
first_err() { grep -m1 -v '^[[:space:]]*$' "$work/err" | cut -c1-300; }
lines() { grep -c '' "$1"; }

# succeeded LABEL: the last command exited 0.
succeeded() {
  [ $rc -eq 0 ] || because "$1: exit $rc: $(first_err)"
}

# one_line_error LABEL [ERE]: exit 1, nothing on stdout, one stderr line that
# matches ERE (case-insensitive).
one_line_error() {
  [ $rc -eq 1 ] || { because "$1: exit $rc (want 1): $(first_err)"; return 1; }
  [ ! -s "$work/out" ] || { because "$1: stdout is not empty: $(head -c 200 "$work/out")"; return 1; }
  [ "$(lines "$work/err")" -eq 1 ] || { because "$1: $(lines "$work/err") stderr lines (want 1)"; return 1; }
  [ -z "${2:-}" ] || grep -qiE -- "$2" "$work/err" || { because "$1: stderr lacks /$2/: $(first_err)"; return 1; }
  [ -z "${OCI_TEST_VERBOSE:-}" ] || echo "    $1: $(first_err)"
}

# same_as_reference LABEL FILE: the last stdout equals FILE byte for byte.
same_as() {
  cmp -s "$work/out" "$2" || because "$1: output differs from $(basename "$2") ($(wc -c <"$work/out") vs $(wc -c <"$2") bytes; first difference: $(cmp "$work/out" "$2" 2>&1 | head -1))"
}

# same_as_oracles LABEL KEY: the last stdout equals fluxopctl's build from the
# directory and, once upstream_case KEY has rendered it, what the upstream CLI
# builds from the same artifact (a render bug shared by both fluxopctl builds
# shows there).
same_as_oracles() {
  same_as "$1 vs fluxopctl build DIR" "$work/ref-full.out" || return 1
  [ ! -f "$work/upstream-$2.out" ] ||
    same_as "$1 vs flux-operator build instance from the same artifact" "$work/upstream-$2.out"
}

# json_field FILE KEY: a top-level field of a JSON object (lists joined by
# spaces).
json_field() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    value = json.load(open(sys.argv[1])).get(sys.argv[2])
except Exception:
    sys.exit(1)
if value is None:
    sys.exit(1)
print(" ".join(map(str, value)) if isinstance(value, list) else value)
PY
}

cache_root() { echo "$XDG_CACHE_HOME/fluxopctl/oci"; }
# Every file and link of the artifact cache but its lock file.
cache_listing() {
  local dir
  dir=$(cache_root)
  [ -d "$dir" ] || return 0
  (cd "$dir" && find . -mindepth 1 \( -type f -o -type l \) ! -path ./.lock -printf '%p %s\n' | sort)
}
cache_n=0
fresh_cache() {
  cache_n=$((cache_n + 1))
  export XDG_CACHE_HOME=$work/cache-$cache_n
}

# cache_entries: the number of entries `pull --list -o json` prints, after
# checking its shape: an array of {digest, source, revision, created,
# versions, path, references: [{url, pulled}]}, each path the content/ of
# the entry named by its digest once `pull` extracted it, else empty. Prints
# the problem and fails otherwise.
cache_entries() {
  fx pull --list -o json
  [ $rc -eq 0 ] || { echo "pull --list -o json: exit $rc: $(first_err)"; return 1; }
  python3 - "$work/out" "$(cache_root)" <<'PY'
import json, os, re, sys
out, root = sys.argv[1:]
def bad(why):
    print("pull --list -o json: " + why); sys.exit(1)
try:
    entries = json.load(open(out))
except ValueError as e:
    bad("not JSON: %s" % e)
if not isinstance(entries, list):
    bad("not an array but %s" % type(entries).__name__)
for e in entries:
    if not isinstance(e, dict) or sorted(e) != sorted(
            ["digest", "source", "revision", "created", "versions", "path", "references"]):
        bad("an entry is not {digest, source, revision, created, versions, path, references}: %.200r" % e)
    if not re.fullmatch(r"sha256:[0-9a-f]{64}", str(e["digest"])):
        bad("digest %r" % e["digest"])
    want = os.path.join(root, "sha256", e["digest"][7:], "content")
    if e["path"] != (want if os.path.isdir(want) else ""):
        bad("path %r, want the directory %s or, before it exists, empty" % (e["path"], want))
    if not isinstance(e["versions"], list) or not isinstance(e["references"], list):
        bad("versions or references is not an array")
    for r in e["references"]:
        if not isinstance(r, dict) or sorted(r) != ["pulled", "url"] or not str(r["url"]).startswith("oci://"):
            bad("a reference is not {url: oci://..., pulled}: %r" % r)
print(len(entries))
PY
}

docker_config() { printf '%s\n' "$1" >"$DOCKER_CONFIG/config.json"; }
b64() { printf '%s' "$1" | base64 -w0; }

# start_helper PORTFILE CMD...: starts a test server, waits (60 s at most: a
# Python start on a loaded machine) for its port file; sets helper_pid. The
# server dies with this script, even a killed one (as registries do).
start_helper() {
  local port_file=$1 deadline=$((SECONDS + 60))
  shift
  rm -f "$port_file"
  setpriv --pdeathsig TERM "$@" >>"$work/helpers.log" 2>&1 &
  helper_pid=$!
  helper_pids+=("$helper_pid")
  while [ $SECONDS -lt $deadline ]; do
    [ -s "$port_file" ] && return 0
    kill -0 "$helper_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "helper did not start: $* ($(tail -1 "$work/helpers.log"))" >&2
  return 1
}
stop_helper() { registry_kill "$1"; }

# start_mini_registry NAME [OPTION...]: a registry (registry_start's options)
# saved as NAME, its address in $NAME, the mini distribution pushed as flux:v1
# (the digest in $NAME_digest).
start_mini_registry() {
  local name=$1 digest
  shift
  registry_start "$work/reg-$name" "$@" || return 1
  registry_save "$name"
  printf -v "$name" '%s' "$REGISTRY_ADDR"
  digest=$(registry_push_artifact flux:v1 "$mini" flux flux-images) || return 1
  printf -v "${name}_digest" '%s' "$digest"
}

# tcase NAME FUNCTION [ARG...]: one case.
tcase() {
  local name=$1
  shift
  REASON=
  : >"$work/err"
  if "$@"; then
    echo "ok $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: ${REASON:-failed}"
    failed=$((failed + 1))
    [ ! -s "$work/err" ] || head -5 "$work/err" | sed 's/^/    stderr: /'
  fi
}
# skip_case NAME REASON: a case whose prerequisite is missing; in CI a failure.
skip_case() {
  if skip_is_failure; then
    echo "FAIL $1: cannot run in CI: $2"
    failed=$((failed + 1))
  else
    echo "skip $1: $2"
    skipped=$((skipped + 1))
  fi
}

# --- fixtures --------------------------------------------------------------------

# A one-version distribution (the latest of the shared one) for the cases where
# the content does not matter: smaller, faster artifacts.
latest=$(cd "$dist/flux" && ls -d v* | sort -V | tail -1)
mini=$work/mini
mkdir -p "$mini/flux" "$mini/flux-images"
cp -r "$dist/flux/$latest" "$mini/flux/"
cp -r "$dist/flux-images/$latest" "$mini/flux-images/"
[ ! -f "$dist/flux-images/VERSION" ] || cp "$dist/flux-images/VERSION" "$mini/flux-images/"

fx build "$instance" --distribution-artifact "$dist"
[ $rc -eq 0 ] || setup_failed "fluxopctl build from the directory $dist: $(first_err)"
cp "$work/out" "$work/ref-full.out"
expected_versions=$(cd "$dist/flux" && ls -d v* | sort -V | tr '\n' ' ')

# The main plain-HTTP registry, with its access log (blob GETs are counted).
registry_start "$work/reg-main" --access-log || setup_failed "docker-registry did not start"
registry_save main
main=$REGISTRY_ADDR
registry_push_artifact full:v1 "$dist" flux flux-images >"$work/full.digest" ||
  setup_failed "pushing the distribution to the local registry with curl failed"
full_digest=$(cat "$work/full.digest")
mini_digest=$(registry_push_artifact mini:v1 "$mini" flux flux-images) ||
  setup_failed "pushing to the local registry with curl failed"

blob_gets() { grep -c '"GET /v2/[^ ]*/blobs/sha256:' "$main_REGISTRY_LOG"; }

# --- push, pull, build --------------------------------------------------------------

pushed_ref='' pushed_digest=''
t_push() {
  fx push "$dist" "oci://$main/flux-operator-manifests:v1"
  succeeded push || return 1
  local line
  line=$(cat "$work/out")
  [[ $line =~ ^oci://$main/flux-operator-manifests@(sha256:[0-9a-f]{64})$ ]] ||
    { because "push printed '$line', want oci://$main/flux-operator-manifests@sha256:<digest>"; return 1; }
  pushed_digest=${BASH_REMATCH[1]}
  pushed_ref=oci://$main/flux-operator-manifests:v1
  # The registry has that manifest under the tag, laid out like `flux push
  # artifact`: a Flux config, one tar+gzip content layer of flux/ and flux-images/.
  registry_use main
  registry_curl x -fsS -o "$work/manifest.json" -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "$REGISTRY_URL/v2/flux-operator-manifests/manifests/v1" ||
    { because "the registry has no manifest under the tag v1"; return 1; }
  [ "$(registry_sha256 "$work/manifest.json")" = "$pushed_digest" ] ||
    { because "the tag's manifest digest is not the printed one"; return 1; }
  python3 - "$work/manifest.json" <<'PY' >"$work/layer.digest" || { because "manifest: $(cat "$work/layer.digest")"; return 1; }
import json, sys
m = json.load(open(sys.argv[1]))
problems = []
if m.get("config", {}).get("mediaType") != "application/vnd.cncf.flux.config.v1+json":
    problems.append("config mediaType %r" % m.get("config", {}).get("mediaType"))
layers = m.get("layers", [])
if len(layers) != 1 or layers[0].get("mediaType") != "application/vnd.cncf.flux.content.v1.tar+gzip":
    problems.append("layers %r" % [l.get("mediaType") for l in layers])
for key in ("created", "source", "revision"):
    if "org.opencontainers.image." + key not in m.get("annotations", {}):
        problems.append("no org.opencontainers.image.%s annotation" % key)
if problems:
    print("; ".join(problems)); sys.exit(1)
print(layers[0]["digest"])
PY
  registry_curl x -fsS -o "$work/layer.tgz" \
    "$REGISTRY_URL/v2/flux-operator-manifests/blobs/$(cat "$work/layer.digest")" ||
    { because "cannot fetch the pushed layer"; return 1; }
  tar -tzf "$work/layer.tgz" >"$work/layer.list" 2>/dev/null || { because "the layer is no tar+gzip"; return 1; }
  grep -qE "^(\./)?flux/$latest/source-controller.yaml$" "$work/layer.list" &&
    grep -qE "^(\./)?flux-images/$latest/" "$work/layer.list" ||
    { because "the layer lacks flux/$latest/source-controller.yaml or flux-images/$latest/"; return 1; }
  ! grep -qE '^/|(^|/)\.\.(/|$)' "$work/layer.list" || because "the layer has absolute or .. entries"
}

t_pull_pushed() {
  [ -n "$pushed_ref" ] || { because "nothing pushed (push failed)"; return 1; }
  fresh_cache
  fx pull "$pushed_ref" -o json
  succeeded pull || return 1
  cp "$work/out" "$work/pull.json"
  local digest versions path url
  digest=$(json_field "$work/pull.json" digest) || { because "no digest in the pull -o json output"; return 1; }
  [ "$digest" = "$pushed_digest" ] || { because "pull digest $digest, push printed $pushed_digest"; return 1; }
  url=$(json_field "$work/pull.json" url) || { because "no url in the output"; return 1; }
  [ "$url" = "$pushed_ref" ] || { because "url '$url', want $pushed_ref"; return 1; }
  versions=$(json_field "$work/pull.json" versions | tr ' ' '\n' | sort -V | tr '\n' ' ') ||
    { because "no versions in the output"; return 1; }
  [ "$versions" = "$expected_versions" ] || { because "versions '$versions', want '$expected_versions'"; return 1; }
  path=$(json_field "$work/pull.json" path) || { because "no path in the output"; return 1; }
  [ -d "$path/flux/$latest" ] || { because "path $path has no flux/$latest"; return 1; }
  case $path in "$XDG_CACHE_HOME"/*) ;; *) because "path $path is not in the cache $XDG_CACHE_HOME"; return 1 ;; esac
  for key in source revision created; do
    json_field "$work/pull.json" $key >/dev/null || { because "no $key in the output"; return 1; }
  done
  # The default output is YAML with the same digest.
  fx pull "$pushed_ref"
  succeeded "pull (yaml)" || return 1
  grep -qE "^digest: [\"']?${digest}[\"']?$" "$work/out" || because "pull's YAML lacks 'digest: $digest'"
}

t_build_pushed() {
  [ -n "$pushed_ref" ] || { because "nothing pushed (push failed)"; return 1; }
  fresh_cache
  fx build "$instance" --distribution-artifact "$pushed_ref"
  succeeded "build oci://" || return 1
  same_as_oracles "build from fluxopctl push's artifact" pushed
}

t_pull_annotations() {
  fresh_cache
  fx pull "oci://$main/full:v1" -o json
  succeeded pull || return 1
  cp "$work/out" "$work/pull.json"
  registry_use main
  registry_curl x -fsS -o "$work/manifest.json" -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "$REGISTRY_URL/v2/full/manifests/v1" || { because "curl: no manifest"; return 1; }
  local key want got
  [ "$(json_field "$work/pull.json" digest)" = "$full_digest" ] || { because "digest is not $full_digest"; return 1; }
  for key in source revision created; do
    want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["annotations"]["org.opencontainers.image." + sys.argv[2]])' "$work/manifest.json" $key)
    got=$(json_field "$work/pull.json" $key)
    [ "$got" = "$want" ] || { because "$key '$got', the manifest says '$want'"; return 1; }
  done
  fx build "$instance" --distribution-artifact "oci://$main/full:v1"
  succeeded "build oci://" || return 1
  same_as_oracles "build from a curl-pushed artifact" full
}

t_cache_hit() {
  fresh_cache
  local before after
  before=$(blob_gets)
  fx build "$instance" --distribution-artifact "oci://$main/full:v1"
  succeeded "first build" || return 1
  same_as_oracles "first build" full || return 1
  after=$(blob_gets)
  [ "$after" -gt "$before" ] || { because "the first build fetched no blob (registry log $main_REGISTRY_LOG)"; return 1; }
  fx build "$instance" --distribution-artifact "oci://$main/full:v1"
  succeeded "second build" || return 1
  same_as_oracles "second build" full || return 1
  [ "$(blob_gets)" -eq "$after" ] || because "the second build fetched $(($(blob_gets) - after)) blob(s) again"
}

t_missing_tag() {
  fresh_cache
  fx pull "oci://$main/full:no-such-tag"
  one_line_error "missing tag" '404|not found|unknown' || return 1
  fx build "$instance" --distribution-artifact "oci://$main/full:no-such-tag"
  one_line_error "build of a missing tag" '404|not found|unknown'
}

t_corrupt_blob() {
  registry_use main
  local src=$work/corrupt-src layer blob hex listing_before
  cp -r "$mini" "$src" && head -c 64 /dev/urandom | base64 >"$src/NOTICE"
  registry_push_artifact corrupt:v1 "$src" flux flux-images NOTICE >/dev/null ||
    { because "curl push failed"; return 1; }
  layer=$(registry_layer_digest corrupt:v1) || { because "no layer digest"; return 1; }
  blob=$(registry_blob_path "$layer")
  [ -f "$blob" ] || { because "no blob file $blob"; return 1; }
  # Same size, different bytes in the middle.
  python3 - "$blob" <<'PY' || { because "could not corrupt $blob"; return 1; }
import sys
with open(sys.argv[1], "r+b") as f:
    data = bytearray(f.read())
    middle = len(data) // 2
    for i in range(middle, min(middle + 16, len(data))):
        data[i] ^= 0xFF
    f.seek(0); f.write(data)
PY
  hex=${layer#sha256:}
  fresh_cache
  listing_before=$(cache_listing)
  fx pull "oci://$main/corrupt:v1"
  one_line_error "pull of a corrupted blob" "$hex" || return 1
  [ "$(cache_listing)" = "$listing_before" ] ||
    { because "the cache changed: $(cache_listing | head -3 | tr '\n' ' ')"; return 1; }
  fx build "$instance" --distribution-artifact "oci://$main/corrupt:v1"
  one_line_error "build of a corrupted blob" "$hex" || return 1
  [ "$(cache_listing)" = "$listing_before" ] || because "the cache changed after the build"
}

# make_evil KIND FILE: a tar+gzip of the mini distribution with one bad entry
# in the middle (after flux/, before flux-images/); prints the entry to look
# for in the error.
make_evil() {
  python3 - "$1" "$2" "$mini" "$work/outside" <<'PY'
import io, sys, tarfile
kind, out, mini, outside = sys.argv[1:]
def info(name, **kw):
    t = tarfile.TarInfo(name)
    t.mtime = 0
    t.mode = kw.pop("mode", 0o644)
    for k, v in kw.items():
        setattr(t, k, v)
    return t
with tarfile.open(out, "w:gz", format=tarfile.GNU_FORMAT) as tar:
    tar.add(mini + "/flux", arcname="flux")
    payload = b"written by a malicious artifact\n"
    if kind == "dotdot":
        name = "flux/" + "../" * 40 + outside.lstrip("/") + "/escape-dotdot"
        tar.addfile(info(name, size=len(payload)), io.BytesIO(payload))
        shown = "escape-dotdot"
    elif kind == "absolute":
        name = outside + "/escape-absolute"
        t = info(name, size=len(payload))
        t.name = name  # keep the leading slash
        tar.addfile(t, io.BytesIO(payload))
        shown = "escape-absolute"
    elif kind == "symlink":
        tar.addfile(info("flux/evil-symlink", type=tarfile.SYMTYPE, linkname=outside, mode=0o777))
        tar.addfile(info("flux/evil-symlink/escape-symlink", size=len(payload)), io.BytesIO(payload))
        shown = "evil-symlink"
    elif kind == "hardlink":
        tar.addfile(info("flux/evil-hardlink", type=tarfile.LNKTYPE, linkname=outside + "/target"))
        shown = "evil-hardlink"
    tar.add(mini + "/flux-images", arcname="flux-images")
print(shown)
PY
}

t_evil_tar() {
  local kind=$1 shown listing_before
  registry_use main
  shown=$(make_evil "$kind" "$work/evil-$kind.tgz") || { because "python3 tarfile failed"; return 1; }
  registry_push_layer "evil-$kind:v1" "$work/evil-$kind.tgz" >/dev/null || { because "curl push failed"; return 1; }
  fresh_cache
  listing_before=$(cache_listing)
  fx pull "oci://$main/evil-$kind:v1"
  one_line_error "pull of a tarball with a $kind entry" "$shown" || return 1
  local escaped
  escaped=$(find "$work/outside" "$work" -maxdepth 1 -name 'escape-*' 2>/dev/null | head -1)
  [ -z "$escaped" ] || { because "written outside the cache: $escaped"; return 1; }
  [ "$(cat "$work/outside/target")" = "outside" ] || { because "$work/outside/target was changed"; return 1; }
  [ "$(cache_listing)" = "$listing_before" ] ||
    because "the cache changed: $(cache_listing | head -3 | tr '\n' ' ')"
}
echo outside >"$work/outside/target"

t_parallel() {
  fresh_cache
  timeout -k 5 "$cmd_timeout" "$bin" pull "oci://$main/full:v1" -o json >"$work/p1.out" 2>"$work/p1.err" &
  local p1=$!
  timeout -k 5 "$cmd_timeout" "$bin" pull "oci://$main/full:v1" -o json >"$work/p2.out" 2>"$work/p2.err" &
  local p2=$! s1 s2
  wait $p1; s1=$?
  wait $p2; s2=$?
  cat "$work/p1.err" "$work/p2.err" >"$work/err"
  [ $s1 -eq 0 ] && [ $s2 -eq 0 ] || { because "exit statuses $s1 and $s2"; return 1; }
  [ "$(json_field "$work/p1.out" digest)" = "$full_digest" ] &&
    [ "$(json_field "$work/p2.out" digest)" = "$full_digest" ] ||
    { because "the pulls' digests are not $full_digest"; return 1; }
  local n
  n=$(cache_entries) || { because "$n"; return 1; }
  [ "$n" = 1 ] || { because "pull --list shows $n entries (want 1)"; return 1; }
  n=$(find "$(cache_root)" -name manifest.json | wc -l)
  [ "$n" -eq 1 ] || because "$n manifest.json files in the cache (want 1)"
}

t_prune() {
  registry_use main
  fresh_cache
  registry_push_artifact moving:v1 "$mini" flux flux-images >/dev/null || { because "curl push failed"; return 1; }
  fx pull "oci://$main/moving:v1"
  succeeded "first pull" || return 1
  # The tag moves to other content.
  local src=$work/moving-src
  cp -r "$mini" "$src" && echo moved >"$src/NOTICE"
  registry_push_artifact moving:v1 "$src" flux flux-images NOTICE >/dev/null || { because "curl push failed"; return 1; }
  fx pull "oci://$main/moving:v1"
  succeeded "second pull" || return 1
  local n
  n=$(cache_entries) || { because "$n"; return 1; }
  [ "$n" = 2 ] || { because "pull --list shows $n entries after the tag moved (want 2)"; return 1; }
  fx pull --prune
  succeeded "pull --prune" || return 1
  n=$(cache_entries) || { because "$n"; return 1; }
  [ "$n" = 1 ] || because "pull --list shows $n entries after --prune (want 1)"
}

# whole_entries: every entry under sha256/ is complete (manifest.json,
# layer, layer.index) and nothing is left under tmp/.
whole_entries() {
  local dir entry
  dir=$(cache_root)
  for entry in "$dir"/sha256/*; do
    [ -e "$entry" ] || continue
    [ -f "$entry/manifest.json" ] && [ -f "$entry/layer" ] && [ -f "$entry/layer.index" ] ||
      { because "half an entry: $entry has $(ls "$entry" | tr '\n' ' ')"; return 1; }
  done
  [ -z "$(ls -A "$dir/tmp" 2>/dev/null)" ] || because "leftovers under tmp/: $(ls "$dir/tmp" | tr '\n' ' ')"
}

# damage HOW ENTRY: changes a pulled entry as a disk error, a stray editor or a
# half-finished copy would.
damage() {
  local how=$1 entry=$2 file
  file=$entry/layer
  chmod -R u+w "$entry"
  flip() { # one byte flipped, same size: only a digest sees it
    python3 -c 'import sys
p = sys.argv[1]; d = bytearray(open(p, "rb").read()); d[len(d) // 2] ^= 1; open(p, "wb").write(d)' "$1"
  }
  case $how in
    change) flip "$file" ;;
    truncate) truncate -s $(($(stat -c %s "$file") / 2)) "$file" ;;
    remove) rm "$file" ;;
    index) flip "$entry/layer.index" ;;
    manifest) truncate -s 10 "$entry/manifest.json" ;;
    garbage) rm -rf "${entry:?}"/* && echo garbage | tee "$entry/manifest.json" >"$entry/layer.index" ;;
  esac
}

# t_damaged HOW tag|digest: a build over an entry damaged after the pull
# notices it, pulls the artifact again and renders the oracles' bytes.
t_damaged() {
  local how=$1 ref=oci://$main/full:v1 entry before
  [ "$2" = tag ] || ref=oci://$main/full@$full_digest
  fresh_cache
  fx pull "$ref"
  succeeded "pull" || return 1
  entry=$(cache_root)/sha256/${full_digest#sha256:}
  [ -f "$entry/layer" ] || { because "no entry $entry"; return 1; }
  damage "$how" "$entry"
  before=$(blob_gets)
  fx build "$instance" --distribution-artifact "$ref"
  succeeded "build over the damaged entry" || return 1
  same_as_oracles "build over the damaged entry" full || return 1
  grep -q "damaged" "$work/err" || { because "no word of the damaged entry on stderr"; return 1; }
  [ "$(blob_gets)" -gt "$before" ] || { because "the artifact was not fetched again"; return 1; }
  whole_entries || return 1
  # Whole again: the next build uses it as it is.
  fx build "$instance" --distribution-artifact "$ref" --offline
  succeeded "build --offline after the repair" || return 1
  same_as_oracles "build --offline after the repair" full || return 1
  ! grep -q "damaged" "$work/err" || because "still damaged after the repair: $(first_err)"
}

t_damaged_offline() {
  fresh_cache
  fx pull "oci://$main/full:v1"
  succeeded "pull" || return 1
  damage truncate "$(cache_root)/sha256/${full_digest#sha256:}"
  fx build "$instance" --distribution-artifact "oci://$main/full:v1" --offline
  one_line_error "build --offline of a damaged entry" 'damaged' || return 1
  fx pull --offline "oci://$main/full@$full_digest"
  one_line_error "pull --offline by digest of a damaged entry" 'damaged'
}

t_missing_entry() {
  fresh_cache
  fx pull "oci://$main/full:v1"
  succeeded "pull" || return 1
  rm -rf "$(cache_root)/sha256/${full_digest#sha256:}"
  fx pull --offline "oci://$main/full:v1"
  one_line_error "pull --offline of a tag whose entry is gone" 'not in the cache' || return 1
  fx build "$instance" --distribution-artifact "oci://$main/full:v1"
  succeeded "build of a tag whose entry is gone" || return 1
  same_as_oracles "build of a tag whose entry is gone" full
}

# A pull and a build, with `pull --prune --older-than 0s` run over and over
# while they last (every record is old then: only a pin keeps an entry), a
# few rounds. The pull and the build must succeed, the build with the
# oracles' bytes (its entry, pinned, is never deleted under it); afterwards
# the cache holds whole entries only, and a kept one verifies offline.
t_prune_race() {
  local i b q prunes build_status pull_status n
  fresh_cache
  for i in 1 2 3 4; do
    timeout -k 5 "$cmd_timeout" "$bin" build "$instance" --distribution-artifact "oci://$main/full:v1" \
      >"$work/race-build.out" 2>"$work/race-build.err" &
    b=$!
    timeout -k 5 "$cmd_timeout" "$bin" pull "oci://$main/full:v1" -o json \
      >"$work/race-pull.out" 2>"$work/race-pull.err" &
    q=$!
    # Bounded: the build and the pull end within their timeouts.
    prunes=0
    while kill -0 $b 2>/dev/null || kill -0 $q 2>/dev/null; do
      fx pull --prune --older-than 0s
      succeeded "round $i: pull --prune" || { wait $b $q; return 1; }
      prunes=$((prunes + 1))
    done
    wait $b; build_status=$?
    wait $q; pull_status=$?
    cat "$work"/race-*.err >"$work/err"
    [ $prunes -gt 0 ] || { because "round $i: no prune ran during the build"; return 1; }
    [ $pull_status -eq 0 ] || { because "round $i: pull: exit $pull_status"; return 1; }
    [ "$(json_field "$work/race-pull.out" digest)" = "$full_digest" ] ||
      { because "round $i: the pull's digest is not $full_digest"; return 1; }
    [ $build_status -eq 0 ] || { because "round $i: build: exit $build_status ($prunes prunes)"; return 1; }
    cp "$work/race-build.out" "$work/out"
    same_as_oracles "round $i: build" full || return 1
    whole_entries || { REASON="round $i: $REASON"; return 1; }
    n=$(cache_entries) || { because "round $i: $n"; return 1; }
    case $n in
      0) ;;
      1) fx pull --offline "oci://$main/full@$full_digest"
        succeeded "round $i: the kept entry, offline" || return 1 ;;
      *) because "round $i: $n entries"; return 1 ;;
    esac
  done
}

# upstream_case KEY REF WHAT: a case rendering the instance with the upstream
# CLI from REF into upstream-KEY.out, the oracle of the builds from REF after
# it (scripts/parity's comparison). Without the upstream CLI a skip, failed in CI.
t_upstream_render() {
  [ -n "$2" ] || { because "no artifact (its push failed)"; return 1; }
  run "$upstream_cli" build instance -f "$instance" --distribution-artifact "$2"
  succeeded "flux-operator build instance" || return 1
  [ -s "$work/out" ] || { because "flux-operator build instance printed nothing"; return 1; }
  cp "$work/out" "$work/upstream-$1.out"
}
upstream_case() {
  local name="upstream: flux-operator build instance from $3"
  if [ -x "$upstream_cli" ]; then
    tcase "$name" t_upstream_render "$1" "$2"
  else
    skip_case "$name" "no upstream CLI at $upstream_cli (scripts/parity builds it)"
  fi
}

tcase "push: fluxopctl push lays out a Flux artifact" t_push
upstream_case pushed "$pushed_ref" "fluxopctl push's artifact"
upstream_case full "oci://$main/full:v1" "a curl-pushed artifact"
tcase "pull: output has push's digest, the versions, the cache path" t_pull_pushed
tcase "build oci:// of a pushed artifact equals both oracles" t_build_pushed
tcase "pull: annotations and build of a curl-pushed artifact" t_pull_annotations
tcase "cache: a second build fetches no blob" t_cache_hit
tcase "missing tag: clear not found error" t_missing_tag
tcase "corrupted blob: refused by digest, cache unchanged" t_corrupt_blob
tcase "tarball: a ../ entry is refused" t_evil_tar dotdot
tcase "tarball: an absolute path is refused" t_evil_tar absolute
tcase "tarball: a symlink is refused" t_evil_tar symlink
tcase "tarball: a hard link is refused" t_evil_tar hardlink
tcase "parallel: two pulls into an empty cache, one entry" t_parallel
tcase "pull --prune drops an entry no tag points to" t_prune
tcase "damaged cache entry (a byte of the layer changed): pulled again, never built from" t_damaged change tag
tcase "damaged cache entry (the layer truncated): pulled again, never built from" t_damaged truncate tag
tcase "damaged cache entry (the layer removed): pulled again, never built from" t_damaged remove digest
tcase "damaged cache entry (a byte of the index changed): pulled again, never built from" t_damaged index tag
tcase "damaged cache entry (manifest truncated): pulled again, never built from" t_damaged manifest digest
tcase "damaged cache entry (garbage in its place): pulled again, never built from" t_damaged garbage tag
tcase "damaged cache entry: --offline refuses it" t_damaged_offline
tcase "a record of a missing entry: --offline fails clearly, online pulls again" t_missing_entry
tcase "pull racing pull --prune: whole entries, none in use deleted" t_prune_race

# --- basic auth (htpasswd) -------------------------------------------------------

basic_user=fluxuser
basic_password=pw-$RANDOM$RANDOM-secret
secret_leaked() {  # secret_leaked SECRET: in any stderr so far?
  grep -qF -- "$1" "$work/all-stderr"
}

cat >"$work/bin/docker-credential-fluxoptest" <<HELPER
#!/bin/sh
# A Docker credential helper for the test: answers 'get' for any server.
read -r server
echo "\$1 \$server" >>"$work/credential-helper.log"
[ "\$1" = get ] || exit 1
printf '{"ServerURL":"%s","Username":"%s","Secret":"%s"}\n' "\$server" "$basic_user" "$basic_password"
HELPER
chmod +x "$work/bin/docker-credential-fluxoptest"

t_basic() {
  local how=$1
  registry_use basic
  fresh_cache
  case $how in
    auth) docker_config "{\"auths\":{\"$basic\":{\"auth\":\"$(b64 "$basic_user:$basic_password")\"}}}" ;;
    username) docker_config "{\"auths\":{\"$basic\":{\"username\":\"$basic_user\",\"password\":\"$basic_password\"}}}" ;;
    credHelpers) docker_config "{\"credHelpers\":{\"$basic\":\"fluxoptest\"}}" ;;
    credsStore) docker_config "{\"credsStore\":\"fluxoptest\"}" ;;
  esac
  : >"$work/credential-helper.log"
  fx pull "oci://$basic/flux:v1" -o json
  succeeded "pull with $how credentials" || return 1
  [ "$(json_field "$work/out" digest)" = "$basic_digest" ] || { because "digest is not $basic_digest"; return 1; }
  case $how in
    cred*) grep -q "^get .*$basic" "$work/credential-helper.log" ||
      { because "docker-credential-fluxoptest was not asked for $basic"; return 1; } ;;
  esac
  ! secret_leaked "$basic_password" || because "the password appears on stderr"
}

# t_denied NAME REPO USER PASSWORD none|wrong: a pull from the registry saved as
# NAME without or with wrong credentials fails with a clear 401, never
# showing the password.
t_denied() {
  local name=$1 repo=$2 user=$3 password=$4 how=$5 addr
  registry_use "$name"
  addr=$REGISTRY_ADDR
  fresh_cache
  case $how in
    none) docker_config '{}' ;;
    wrong) docker_config "{\"auths\":{\"$addr\":{\"auth\":\"$(b64 "$user:wrong-$password")\"}}}" ;;
  esac
  fx pull "oci://$addr/$repo:v1"
  one_line_error "pull of $repo with $how credentials" '401|unauthori[sz]ed' || return 1
  ! secret_leaked "$password" || because "the password appears on stderr"
}

if start_mini_registry basic --htpasswd "$basic_user:$basic_password"; then
  tcase "basic auth: auths.auth" t_basic auth
  tcase "basic auth: auths username/password" t_basic username
  tcase "basic auth: credHelpers" t_basic credHelpers
  tcase "basic auth: credsStore" t_basic credsStore
  tcase "basic auth: no credentials, a clear 401" t_denied basic flux "$basic_user" "$basic_password" none
  tcase "basic auth: wrong password, a clear 401" t_denied basic flux "$basic_user" "$basic_password" wrong
else
  echo "FAIL basic auth: the htpasswd registry did not start"
  failed=$((failed + 1))
fi
docker_config '{}'

# --- token auth ----------------------------------------------------------------------

token_user=tokenuser
token_password=tpw-$RANDOM$RANDOM-secret
identity_token=idt-$RANDOM$RANDOM-refresh

token_log_since() { tail -n +$(($1 + 1)) "$work/token.log"; }

t_token() {
  local how=$1 repo=private mark want
  registry_use token
  fresh_cache
  case $how in
    anonymous) docker_config '{}'; repo=public; want='^GET /token.* auth=no .*status=200' ;;
    basic) docker_config "{\"auths\":{\"$token\":{\"auth\":\"$(b64 "$token_user:$token_password")\"}}}"
      want='^GET /token.* auth=yes sub='$token_user' status=200' ;;
    identity) docker_config "{\"auths\":{\"$token\":{\"auth\":\"$(b64 "$token_user:")\",\"identitytoken\":\"$identity_token\"}}}"
      want='^POST /token .*grant=refresh_token sub='$token_user' status=200' ;;
  esac
  mark=$(lines "$work/token.log")
  fx pull "oci://$token/$repo/flux:v1" -o json
  succeeded "pull of $repo/flux with $how credentials" || return 1
  local digest_var=token_digest_$repo
  [ "$(json_field "$work/out" digest)" = "${!digest_var}" ] || { because "digest is not ${!digest_var}"; return 1; }
  token_log_since "$mark" | grep -qE "$want" ||
    { because "the token service saw no request like /$want/: $(token_log_since "$mark" | tr '\n' ';')"; return 1; }
  ! secret_leaked "$token_password" && ! secret_leaked "$identity_token" || because "a secret appears on stderr"
}

if [ -z "$issuer_python" ]; then
  echo "FAIL token auth: no Python with the cryptography module (python3-cryptography) for token_issuer.py"
  failed=$((failed + 1))
elif start_helper "$work/token.port" env TOKEN_ISSUER_PASSWORD="$token_password" \
  TOKEN_ISSUER_IDENTITY_TOKEN="$identity_token" "$issuer_python" "$here/token_issuer.py" \
  --port-file "$work/token.port" --cert "$work/token-issuer.pem" --log "$work/token.log" \
  --user "$token_user" --timeout 3600 &&
  registry_start "$work/reg-token" --token "http://127.0.0.1:$(cat "$work/token.port")/token" \
    fluxopctl-test-registry fluxopctl-test-issuer "$work/token-issuer.pem" \
    --credentials "$token_user:$token_password"; then
  registry_save token
  token=$REGISTRY_ADDR
  # Two digests: the pushes' created annotations may differ by a second.
  # shellcheck disable=SC2034 # read through digest_var in t_token
  token_digest_public=$(registry_push_artifact public/flux:v1 "$mini" flux flux-images)
  # shellcheck disable=SC2034
  token_digest_private=$(registry_push_artifact private/flux:v1 "$mini" flux flux-images)
  tcase "token auth: anonymous pull of public/" t_token anonymous
  tcase "token auth: private repository with basic credentials" t_token basic
  tcase "token auth: identitytoken via refresh_token" t_token identity
  tcase "token auth: private repository without credentials, a clear 401" \
    t_denied token private/flux "$token_user" "$token_password" none
  tcase "token auth: wrong password, a clear 401" \
    t_denied token private/flux "$token_user" "$token_password" wrong
  grep -qF -- "$token_password" "$work/token.log" && echo "note: the token service's log holds the password"
else
  echo "FAIL token auth: the token service or its registry did not start"
  failed=$((failed + 1))
fi
docker_config '{}'

# --- retries and redirects (http_faults.py) ----------------------------------------------

# faults PORTVAR ARG...: starts http_faults.py in front of a registry; sets
# faults_port, faults_pid and faults_log.
faults_n=0
start_faults() {
  faults_n=$((faults_n + 1))
  faults_log=$work/faults-$faults_n.log
  start_helper "$work/faults-$faults_n.port" python3 "$here/http_faults.py" \
    --port-file "$work/faults-$faults_n.port" --log "$faults_log" --timeout 600 "$@" || return 1
  faults_pid=$helper_pid
  faults_port=$(head -1 "$work/faults-$faults_n.port")
}

t_retry() {
  local expect_injected=$1
  shift
  start_faults --upstream "$main_REGISTRY_URL" "$@" || { because "http_faults.py did not start"; return 1; }
  fresh_cache
  fx pull "oci://127.0.0.1:$faults_port/mini:v1" -o json
  stop_helper "$faults_pid"
  succeeded "pull through injected faults" || return 1
  [ "$(json_field "$work/out" digest)" = "$mini_digest" ] || { because "digest is not $mini_digest"; return 1; }
  local injected
  injected=$(grep -c ' injected$' "$faults_log")
  [ "$injected" -eq "$expect_injected" ] || because "$injected faults injected (want $expect_injected): the client did not meet them"
}

t_retry_forever() {
  start_faults --upstream "$main_REGISTRY_URL" --fail-first -1 || { because "http_faults.py did not start"; return 1; }
  fresh_cache
  # Bounded by run's timeout: a client retrying forever overruns it (exit 124).
  fx pull "oci://127.0.0.1:$faults_port/mini:v1"
  stop_helper "$faults_pid"
  one_line_error "pull against a registry answering 503 forever" '503|unavailable' || return 1
  [ "$(grep -c ' injected$' "$faults_log")" -ge 2 ] || because "no retry: $(grep -c ' injected$' "$faults_log") request(s)"
}

redirect_host=127.0.0.2
python3 -c 'import socket; socket.socket().bind(("127.0.0.2", 0))' 2>/dev/null || redirect_host=localhost

t_redirect() {
  registry_use basic
  [ -n "${basic:-}" ] || { because "no basic-auth registry"; return 1; }
  start_helper "$work/redirect.port" env FAULTS_UPSTREAM_AUTH="$basic_user:$basic_password" \
    python3 "$here/http_faults.py" --upstream "$basic_REGISTRY_URL" --redirect-host "$redirect_host" \
    --port-file "$work/redirect.port" --log "$work/redirect.log" --timeout 600 ||
    { because "http_faults.py did not start"; return 1; }
  local pid=$helper_pid port
  port=$(head -1 "$work/redirect.port")
  fresh_cache
  docker_config "{\"auths\":{\"127.0.0.1:$port\":{\"auth\":\"$(b64 "$basic_user:$basic_password")\"}}}"
  fx pull "oci://127.0.0.1:$port/flux:v1" -o json
  stop_helper "$pid"
  docker_config '{}'
  succeeded "pull redirected to $redirect_host" || return 1
  [ "$(json_field "$work/out" digest)" = "$basic_digest" ] || { because "digest is not $basic_digest"; return 1; }
  grep -q '^proxy GET .* status=307' "$work/redirect.log" || { because "no blob GET was redirected"; return 1; }
  grep -q '^blobhost GET .* status=200' "$work/redirect.log" ||
    { because "the redirect target ($redirect_host) served no blob"; return 1; }
  ! grep -q '^blobhost .* auth=yes' "$work/redirect.log" ||
    because "credentials were sent to the other host $redirect_host"
}

tcase "retry: two 503s on the manifest, then success" t_retry 2 --fail-first 2 --fail-match '/manifests/'
tcase "retry: two 503s on blobs, then success" t_retry 2 --fail-first 2 --fail-match '/blobs/'
tcase "retry: a 429 with Retry-After: 0, then success" t_retry 1 --fail-first 1 --fail-status 429 \
  --retry-after 0 --fail-match '/v2/.+/(manifests|blobs)/'
tcase "retry: a permanent 503 fails within a bounded time" t_retry_forever
tcase "redirect: blobs from $redirect_host get no credentials" t_redirect

# --- push writes no temporary files ------------------------------------------------------

push_tmp=$work/push-tmp
fresh_push_tmp() { rm -rf "$push_tmp" && mkdir "$push_tmp"; }
# push_tmp_empty LABEL: nothing was left in $push_tmp, the push's TMPDIR.
push_tmp_empty() {
  local left
  left=$(find "$push_tmp" -mindepth 1 -maxdepth 1 | head -3 | tr '\n' ' ')
  [ -z "$left" ] || because "$1: left $left in TMPDIR"
}

t_push_tmp() {
  local how=$1
  fresh_push_tmp
  case $how in
    pushed)
      run env TMPDIR="$push_tmp" "$bin" push "$mini" "oci://$main/no-tmp:v1"
      succeeded push || return 1 ;;
    failed)
      run env TMPDIR="$push_tmp" "$bin" push "$mini" "oci://127.0.0.1:$(registry_free_port)/no-tmp:v1"
      one_line_error "push to a registry that is not there" 'connect|refused' || return 1 ;;
  esac
  push_tmp_empty "push $how"
}

# t_push_stopped SIGNAL: a push killed by SIGNAL while the registry holds its
# first upload unanswered.
t_push_stopped() {
  local signal=$1 pid deadline
  fresh_push_tmp
  start_faults --upstream "$main_REGISTRY_URL" --hold-match '/(blobs/uploads|manifests)/' ||
    { because "http_faults.py did not start"; return 1; }
  # Through timeout, which passes the signal on: a background job of this
  # shell would ignore SIGINT.
  env TMPDIR="$push_tmp" timeout -k 5 "$cmd_timeout" "$bin" push "$mini" \
    "oci://127.0.0.1:$faults_port/stopped-${signal,,}:v1" >"$work/out" 2>"$work/err" &
  pid=$!
  deadline=$((SECONDS + cmd_timeout))
  until grep -q ' held$' "$faults_log" || [ $SECONDS -ge $deadline ] || ! kill -0 "$pid" 2>/dev/null; do
    sleep 0.1
  done
  kill -s "$signal" "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  stop_helper "$faults_pid"
  grep -q ' held$' "$faults_log" || { because "the push never started an upload: exit $rc: $(first_err)"; return 1; }
  [ $rc -eq $((128 + $(kill -l "$signal"))) ] || { because "push exit $rc, want death by SIG$signal"; return 1; }
  push_tmp_empty "push stopped by SIG$signal"
}

tcase "push: nothing left in TMPDIR after a push" t_push_tmp pushed
tcase "push: nothing left in TMPDIR after a failed push" t_push_tmp failed
tcase "push: nothing left in TMPDIR after SIGINT mid-upload" t_push_stopped INT
tcase "push: nothing left in TMPDIR after SIGTERM mid-upload" t_push_stopped TERM

# --- TLS and --insecure-registry -------------------------------------------------------

# A name for this machine that is not localhost/127.x but resolves to 127.x.
loopback_name=
name=$(hostname 2>/dev/null)
if [ -n "$name" ] && [ "$name" != localhost ] &&
  getent hosts "$name" | awk '{ print $1 }' | grep -q '^127\.'; then
  loopback_name=$name
fi

t_tls() {
  local with_ca=$1
  registry_use tls
  fresh_cache
  if [ "$with_ca" = yes ]; then
    run env SSL_CERT_FILE="$tls_REGISTRY_CA" "$bin" pull "oci://$tls/flux:v1" -o json
    succeeded "pull over TLS with SSL_CERT_FILE=<test CA>" || return 1
    [ "$(json_field "$work/out" digest)" = "$tls_digest" ] || because "digest is not $tls_digest"
  else
    fx pull "oci://$tls/flux:v1"
    one_line_error "pull over TLS without the test CA" 'certificate|x509|verif|ssl|tls'
  fi
}

t_insecure() {
  local flag=$1
  fresh_cache
  case $flag in
    none)
      fx pull "oci://$loopback_name:${main##*:}/mini:v1"
      one_line_error "plain HTTP to $loopback_name without --insecure-registry" ;;
    *)
      fx pull "oci://$loopback_name:${main##*:}/mini:v1" --insecure-registry "$flag" -o json
      succeeded "pull with --insecure-registry $flag" || return 1
      [ "$(json_field "$work/out" digest)" = "$mini_digest" ] || because "digest is not $mini_digest" ;;
  esac
}

if [ -z "$loopback_name" ]; then
  for c in "TLS: SSL_CERT_FILE with the test CA" "TLS: without the CA, a certificate error" \
    "insecure: plain HTTP by name refused" "insecure: --insecure-registry NAME:PORT" \
    "insecure: --insecure-registry NAME"; do
    skip_case "$c" "this machine's host name does not resolve to a 127.x address (see /etc/hosts)"
  done
else
  if start_mini_registry tls --tls "$loopback_name"; then
    tcase "TLS: SSL_CERT_FILE with the test CA ($tls)" t_tls yes
    tcase "TLS: without the CA, a certificate error" t_tls no
  else
    echo "FAIL TLS: the TLS registry did not start"
    failed=$((failed + 1))
  fi
  tcase "insecure: plain HTTP by name ($loopback_name) refused" t_insecure none
  tcase "insecure: --insecure-registry NAME:PORT" t_insecure "$loopback_name:${main##*:}"
  tcase "insecure: --insecure-registry NAME" t_insecure "$loopback_name"
fi

# --- a stopped registry: --offline and digests from the cache ---------------------------

off_ref='' off_digest=''
t_offline_prepare() {
  registry_start "$work/reg-offline" || { because "registry did not start"; return 1; }
  registry_save offline
  off_ref=oci://$REGISTRY_ADDR/flux:v1
  registry_push_artifact flux:v1 "$dist" flux flux-images >/dev/null || { because "curl push failed"; return 1; }
  fresh_cache
  off_cache=$XDG_CACHE_HOME
  fx pull "$off_ref" -o json
  succeeded "pull" || return 1
  off_digest=$(json_field "$work/out" digest)
}

t_offline_stop() {
  [ -n "$off_digest" ] || { because "nothing was cached"; return 1; }
  export XDG_CACHE_HOME=$off_cache
  fx build "$instance" --distribution-artifact "$off_ref"
  local built=0
  { succeeded "build" && same_as_oracles "online build" offline; } || built=1
  # Stopped even when the build failed: the cases after it need it stopped.
  registry_use offline
  registry_stop
  ! registry_curl_plain -s -o /dev/null "$offline_REGISTRY_URL/v2/" ||
    { because "the registry still answers"; return 1; }
  return $built
}

t_offline() {
  local what=$1
  [ -n "$off_digest" ] || { because "nothing was cached"; return 1; }
  export XDG_CACHE_HOME=$off_cache
  local digest_ref=${off_ref%:v1}@$off_digest
  case $what in
    pull)
      fx pull --offline "$off_ref" -o json
      succeeded "pull --offline" || return 1
      [ "$(json_field "$work/out" digest)" = "$off_digest" ] || because "digest is not $off_digest" ;;
    build)
      fx build "$instance" --distribution-artifact "$off_ref" --offline
      succeeded "build --offline" || return 1
      same_as_oracles "build --offline" offline ;;
    digest)
      fx build "$instance" --distribution-artifact "$digest_ref"
      succeeded "build of $digest_ref, registry stopped" || return 1
      same_as_oracles "build by digest" offline ;;
    digest-offline)
      fx build "$instance" --distribution-artifact "$digest_ref" --offline
      succeeded "build --offline of $digest_ref" || return 1
      same_as_oracles "build by digest --offline" offline ;;
    online)
      fx pull "$off_ref"
      one_line_error "pull of a tag from a stopped registry" 'connect|refused|unreachable|reach|offline' ;;
    uncached)
      fx pull --offline "${off_ref%:v1}:v2"
      one_line_error "pull --offline of a tag never pulled" 'cache|offline|not found' ;;
  esac
}

tcase "offline: a registry of its own, pulled from" t_offline_prepare
upstream_case offline "$off_ref" "the offline case's artifact"
tcase "offline: build online, then the registry stops" t_offline_stop
tcase "offline: pull --offline of the tag" t_offline pull
tcase "offline: build --offline of the tag, same bytes" t_offline build
tcase "offline: build of @sha256: without --offline, same bytes" t_offline digest
tcase "offline: build --offline of @sha256:, same bytes" t_offline digest-offline
tcase "offline: a tag pull without --offline fails clearly" t_offline online
tcase "offline: --offline of a tag never pulled fails clearly" t_offline uncached

# --- the default artifact: `fluxopctl pull`, then `fluxopctl build` offline ----------------

# The default artifact's registry: ghcr.io, here a local registry with a
# certificate for ghcr.io (trusted through SSL_CERT_FILE), reached through a
# CONNECT proxy (https_proxy) that sends every tunnel to it.
default_url=oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:latest
t_default_pull() {
  registry_start "$work/reg-ghcr" --tls ghcr.io || { because "the ghcr.io registry did not start"; return 1; }
  registry_save ghcr
  local digest
  digest=$(registry_push_artifact controlplaneio-fluxcd/flux-operator-manifests:latest "$dist" flux flux-images) ||
    { because "curl push failed"; return 1; }
  start_helper "$work/proxy.port" python3 "$here/connect_proxy.py" --target "127.0.0.1:${ghcr_REGISTRY_ADDR##*:}" \
    --port-file "$work/proxy.port" --log "$work/proxy.log" --timeout 600 || { because "connect_proxy.py did not start"; return 1; }
  default_proxy=http://127.0.0.1:$(head -1 "$work/proxy.port") default_proxy_pid=$helper_pid
  fresh_cache
  default_cache=$XDG_CACHE_HOME
  # A new machine: nothing to build from, and the error says what to run.
  fx build "$instance"
  one_line_error "build before any pull" 'no Flux distribution: run `fluxopctl pull`' || return 1
  run env https_proxy="$default_proxy" SSL_CERT_FILE="$ghcr_REGISTRY_CA" "$bin" pull -o json
  succeeded "pull without a URL" || return 1
  [ "$(json_field "$work/out" url)" = "$default_url" ] || { because "pulled $(json_field "$work/out" url), not $default_url"; return 1; }
  [ "$(json_field "$work/out" digest)" = "$digest" ] || { because "digest is not $digest"; return 1; }
  grep -q '^CONNECT ghcr.io:443$' "$work/proxy.log" || because "the pull did not go to ghcr.io:443 through the proxy"
}

t_default_build() {
  [ -n "${default_cache:-}" ] || { because "nothing was pulled"; return 1; }
  export XDG_CACHE_HOME=$default_cache
  # Offline: the registry and the proxy stop; the proxy setting stays, so
  # that a build reaching for the network fails.
  stop_helper "$default_proxy_pid"
  registry_use ghcr
  registry_stop
  : >"$work/proxy.log"
  run env https_proxy="$default_proxy" "$bin" build "$instance"
  succeeded "build without flags after pull" || return 1
  # The same content as full:v1 (the distribution directory): its oracles.
  same_as_oracles "build of the pulled default" full || return 1
  grep -q "^using distribution ${default_url%:latest}@sha256:[0-9a-f]* (Flux v" "$work/err" ||
    { because "not built from the pulled artifact: $(first_err)"; return 1; }
  # FLUXOPCTL_DISTRIBUTION wins over the pulled artifact.
  run env FLUXOPCTL_DISTRIBUTION="$mini" "$bin" build "$instance"
  succeeded "build with FLUXOPCTL_DISTRIBUTION" || return 1
  grep -q "^using distribution $mini (Flux $latest)" "$work/err" ||
    because "FLUXOPCTL_DISTRIBUTION does not win over the pulled artifact: $(first_err)"
}

# FLUXOPCTL_DISTRIBUTION as an oci:// URL: what pull fetches without a URL,
# what build uses without flags.
t_env_oci() {
  fresh_cache
  local url=oci://$main/mini:v1
  run env FLUXOPCTL_DISTRIBUTION="$url" "$bin" pull -o json
  succeeded "pull with FLUXOPCTL_DISTRIBUTION=$url" || return 1
  [ "$(json_field "$work/out" url)" = "$url" ] || { because "pulled $(json_field "$work/out" url), not $url"; return 1; }
  run env FLUXOPCTL_DISTRIBUTION="$url" "$bin" build "$instance" --offline
  succeeded "build --offline with FLUXOPCTL_DISTRIBUTION=$url" || return 1
  grep -q "^using distribution oci://$main/mini@$mini_digest (Flux $latest)" "$work/err" ||
    because "not built from $url: $(first_err)"
}

tcase "default artifact: pull without a URL fetches it (ghcr.io through a proxy)" t_default_pull
tcase "default artifact: build without flags, offline, from what pull fetched" t_default_build
tcase "FLUXOPCTL_DISTRIBUTION=oci://: pulled without a URL, built from" t_env_oci

if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
