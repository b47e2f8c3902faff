# The helpers of tests/oci/oci_test.sh and its cases (tests/oci/cases):
# commands run bounded with their output kept, the checks of that output
# (they set REASON and return non-zero), the cache, test servers, and tcase,
# one case reported through tests/lib/harness.sh.
# shellcheck shell=bash


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
  (cd "$dir" && find . -mindepth 1 \( -type f -o -type l \) ! -path ./.lock ! -path "./locks/*" -printf '%p %s\n' | sort)
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
    pass "$name"
  else
    fail "$name" "${REASON:-failed}"
  fi
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
    skip "$name" "no upstream CLI at $upstream_cli (scripts/parity builds it)"
  fi
}

