#!/usr/bin/env bash
# fluxopctl push, pull and build against a hostile registry
# (tests/hostile/registry.py): an upload's Location or a blob's redirect on
# another host must not get the credentials, a chain of indexes or an index of
# many manifests is refused, a response header block past its bound ends the
# request with a line naming the URL, a token with CR LF never becomes a
# header, a blob's error names the reference once, a manifest sent gzipped
# names the encoding, and push refuses an artifact pull would refuse before
# uploading it.
#
#   tests/hostile/registry_test.sh BIN ROOT     (BIN: fluxopctl, ROOT: the repository)
#
# One line per case (tests/lib/harness.sh); exit 0 when none failed, 77 when
# it cannot run (no ../shared/flux-distribution). Everything runs in a
# temporary directory; the registry is stopped on exit; every command is
# bounded (HOSTILE_TEST_TIMEOUT, 60 s).
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BIN ROOT" >&2
  exit 2
fi
root=$(cd "$2" && pwd) || exit 2
bin=$1
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
dist=$root/../shared/flux-distribution
cmd_timeout=${HOSTILE_TEST_TIMEOUT:-60}

# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"

[ -x "$bin" ] || abort "setup: $bin is not an executable"
[ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"

work=$(mktemp -d "${TMPDIR:-/tmp}/fluxopctl-hostile-registry.XXXXXX") || exit 1
registry_pid=
cleanup() {
  stop_process "$registry_pid"
  rm -rf "$work"
}
on_exit cleanup

export HOME=$work/home DOCKER_CONFIG=$work/docker XDG_CACHE_HOME=$work/cache
unset SSL_CERT_FILE SSL_CERT_DIR FLUXOPCTL_DISTRIBUTION DOCKER_AUTH_CONFIG REGISTRY_AUTH_FILE
mkdir -p "$HOME" "$DOCKER_CONFIG"
show "$work/err"

# fx ARGS...: fluxopctl, bounded; stdout in $work/out, stderr in $work/err,
# status in $rc, peak memory (KiB) in $work/rss.
fx() {
  timeout -k 5 "$cmd_timeout" /usr/bin/time -f %M -o "$work/rss" "$bin" "$@" >"$work/out" 2>"$work/err"
  rc=$?
}
# The last fx within 512 MiB.
within_512_mib() {
  local rss
  rss=$(tail -n 1 "$work/rss")
  [ "$rss" -lt $((512 * 1024)) ] || { echo "$1: peak memory ${rss} KiB, more than 512 MiB"; return 1; }
}
# A failure of fluxopctl's own: exit 1 (not a signal, not a timeout), one
# `error:` line matching ERE, no `internal`.
refused_with() {
  [ "$rc" -eq 1 ] || { echo "exit $rc, expected 1: $(head -c 300 "$work/err")"; return 1; }
  grep -q 'internal' "$work/err" && { echo "an internal error: $(head -c 300 "$work/err")"; return 1; }
  grep -Eq "^error: .*$1" "$work/err" || { echo "no error matching '$1': $(head -c 300 "$work/err")"; return 1; }
}
# Requests the elsewhere listener got with credentials.
elsewhere_credentials() { grep -c '^elsewhere .* auth=yes' "$work/registry.log"; }

python3 "$root/tests/hostile/registry.py" --port-file "$work/ports" --log "$work/registry.log" \
  --timeout 1800 2>"$work/registry.err" &
registry_pid=$!
wait_until 30 test -s "$work/ports" || abort "setup: the hostile registry did not start"
registry=127.0.0.1:$(sed -n 1p "$work/ports")
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$registry" "$(printf flux:secret | base64)" \
  >"$DOCKER_CONFIG/config.json"

# A one-version distribution, pushed as flux:v1: the content every pull case
# reads, through a registry that behaves.
latest=$(cd "$dist/flux" && ls -d v* | sort -V | tail -1)
mini=$work/mini
mkdir -p "$mini/flux"
cp -r "$dist/flux/$latest" "$mini/flux/"
fx push "$mini" "oci://$registry/flux:v1"
[ "$rc" -eq 0 ] || abort "setup: push to the hostile registry in its sane mode: $(head -c 300 "$work/err")"

upload_location_elsewhere() {
  # Content the registry does not have yet, so that it is uploaded.
  cp -r "$mini" "$work/fresh"
  echo "# fresh" >"$work/fresh/flux/$latest/fresh.yaml"
  fx push "$work/fresh" "oci://$registry/location-elsewhere/flux:v1"
  [ "$(grep -c '^elsewhere PUT /upload/' "$work/registry.log")" -gt 0 ] ||
    { echo "the uploads did not go elsewhere: exit $rc: $(head -c 300 "$work/err")"; return 1; }
  [ "$(elsewhere_credentials)" -eq 0 ] ||
    { echo "the credentials for $registry went to the upload's Location on another host"; return 1; }
}
check "push: an upload's Location on another host gets no credentials" upload_location_elsewhere

redirect_elsewhere() {
  : >"$work/registry.log"
  # The blob is the one flux:v1 has: the repository holds what the first push did.
  fx push "$mini" "oci://$registry/redirect-elsewhere/flux:v1"
  fx pull "oci://$registry/redirect-elsewhere/flux:v1"
  [ "$rc" -eq 0 ] || { echo "pull failed: $(head -c 300 "$work/err")"; return 1; }
  grep -q '^elsewhere GET /blobs/' "$work/registry.log" || { echo "no redirect was followed"; return 1; }
  [ "$(elsewhere_credentials)" -eq 0 ] ||
    { echo "the credentials for $registry went to a redirect's host"; return 1; }
}
check "pull: a blob redirected to another host gets no credentials" redirect_elsewhere

# Issue 41: a 401 from the host a blob was redirected to, with a realm of its
# own, would have fluxopctl send the registry's credentials to that realm.
redirect_challenge() {
  : >"$work/registry.log"
  fx push "$mini" "oci://$registry/redirect-challenge/flux:v1"
  # A cache of its own: the blob, pulled by the case above, must be fetched.
  XDG_CACHE_HOME=$work/cache-challenge fx pull "oci://$registry/redirect-challenge/flux:v1"
  local elsewhere
  elsewhere=127.0.0.1:$(sed -n 2p "$work/ports")
  refused_with "$elsewhere, which the registry redirected to, asks for credentials \(HTTP 401\)" ||
    return 1
  grep -q '^elsewhere GET /challenged-blobs/.* status=401' "$work/registry.log" ||
    { echo "no redirect was followed"; return 1; }
  [ "$(elsewhere_credentials)" -eq 0 ] ||
    { echo "the credentials for $registry went to a host the registry never named"; return 1; }
}
check "pull: a 401 from a redirect's host is an error naming it; its realm gets no credentials" \
  redirect_challenge

token_realm() {
  : >"$work/registry.log"
  fx push "$mini" "oci://$registry/token-realm/flux:v1"
  [ "$rc" -eq 0 ] || { echo "push through a token realm on another host failed: $(head -c 300 "$work/err")"; return 1; }
  grep -q '^elsewhere GET /token/token-realm.* auth=yes status=200' "$work/registry.log" ||
    { echo "the realm did not get the registry's credentials"; return 1; }
}
check "push: a token realm on another host gets the registry's credentials, bound to it" token_realm

deep_index() {
  fx pull "oci://$registry/deep-index/flux:latest"
  refused_with "an index nested more than 4 levels deep" || return 1
  fx build "$root/tests/oci/instance.yaml" --distribution-artifact "oci://$registry/deep-index/flux:latest"
  refused_with "an index nested more than 4 levels deep"
}
check "pull, build: a chain of indexes is refused past 4 levels" deep_index

huge_index() {
  fx pull "oci://$registry/huge-index/flux:latest"
  refused_with "an index of more than 1000 manifests"
}
check "pull: an index of more than 1000 manifests is refused" huge_index

headers_beyond_bound() {
  local mode
  for mode in huge-header many-headers; do
    fx pull "oci://$registry/$mode/flux:v1"
    refused_with "http://$registry/v2/$mode/flux/manifests/v1: response headers larger than 65536 bytes" ||
      return 1
  done
}
check "pull: a response header block past 64 KiB ends the request, naming the URL" headers_beyond_bound

crlf_token() {
  : >"$work/registry.log"
  fx pull "oci://$registry/crlf-token/flux:v1"
  refused_with "header Authorization: contains a line break or NUL \\(refused\\)" || return 1
  ! grep -q 'injected=yes' "$work/registry.log" || { echo "the token added a header of its own"; return 1; }
  ! grep -q 'X-Injected\|evil' "$work/err" || { echo "the error quotes the token"; return 1; }
}
check "pull: a token with CR LF is refused, never sent" crlf_token

# A failure names the reference once, as every other message does.
blob_error_names_reference_once() {
  fx push "$mini" "oci://$registry/long-blob/flux:v1"
  # A cache of its own: what an earlier case pulled of the same content (a
  # push within the same second is the same manifest) would not be fetched.
  XDG_CACHE_HOME=$work/cache-long-blob fx pull "oci://$registry/long-blob/flux:v1"
  refused_with "oci://$registry/long-blob/flux:v1: blob sha256:[0-9a-f]{64}: larger than" || return 1
  [ "$(grep -o "oci://$registry/long-blob/flux:v1" "$work/err" | wc -l)" -eq 1 ] ||
    { echo "the reference is repeated: $(head -c 300 "$work/err")"; return 1; }
}
check "pull: a blob error names the reference once" blob_error_names_reference_once

gzip_manifest() {
  fx push "$mini" "oci://$registry/gzip-manifest/flux:v1"
  XDG_CACHE_HOME=$work/cache-gzip fx pull "oci://$registry/gzip-manifest/flux:v1"
  refused_with "manifest v1: sent with Content-Encoding: \"gzip\", which fluxopctl does not ask for or decode$" ||
    return 1
  ! grep -q 'digest mismatch' "$work/err" || { echo "a digest mismatch, not the encoding: $(head -c 300 "$work/err")"; return 1; }
}
check "pull: a manifest sent gzipped names the encoding" gzip_manifest

push_beyond_pull() {
  local big=$work/big
  cp -r "$mini" "$big"
  # Sparse: 130 MiB of files, more than pull accepts (128 MiB), on no disk.
  truncate -s 130M "$big/flux/$latest/huge.yaml"
  : >"$work/registry.log"
  fx push "$big" "oci://$registry/flux:big"
  refused_with "$big/flux/$latest/huge.yaml: refused: the artifact's files would exceed 134217728 bytes" ||
    return 1
  ! grep -q 'blobs/uploads' "$work/registry.log" || { echo "something was uploaded first"; return 1; }
  # 70 MiB that deflate cannot shrink: a layer past 64 MiB, refused as it grows.
  rm "$big/flux/$latest/huge.yaml"
  head -c 70M /dev/urandom >"$big/flux/$latest/noise.bin"
  fx push "$big" "oci://$registry/flux:big"
  refused_with "$big/flux/$latest/noise.bin: refused: the artifact's layer would exceed 67108864 bytes" ||
    return 1
  within_512_mib "push" || return 1
  ! grep -q 'blobs/uploads' "$work/registry.log" || { echo "something was uploaded first"; return 1; }
  rm -rf "$big"
}
check "push: an artifact pull would refuse is refused before any upload, naming the file" push_beyond_pull

artifact_at_bounds() {
  local full=$work/full
  cp -r "$mini" "$full"
  # Just within every bound: a 60 MiB layer of 124 MiB of files, half of
  # them bytes deflate cannot shrink.
  head -c 60M /dev/urandom >"$full/flux/$latest/noise.bin"
  truncate -s 60M "$full/flux/$latest/zeros.bin"
  fx push "$full" "oci://$registry/flux:full"
  [ "$rc" -eq 0 ] || { echo "push failed: $(head -c 300 "$work/err")"; return 1; }
  within_512_mib "push" || return 1
  fx pull "oci://$registry/flux:full"
  [ "$rc" -eq 0 ] || { echo "pull failed: $(head -c 300 "$work/err")"; return 1; }
  within_512_mib "pull" || return 1
  # The build reads the version's directory, both large files with it.
  fx build "$root/tests/oci/instance.yaml" --distribution-artifact "oci://$registry/flux:full"
  [ "$rc" -eq 0 ] || { echo "build failed: $(head -c 300 "$work/err")"; return 1; }
  within_512_mib "build" || return 1
  rm -rf "$full"
}
check "push, pull, build: an artifact at the bounds stays within 512 MiB" artifact_at_bounds

# Issue 41, the cache lock: one per entry. A pull stopped mid-download (^Z,
# SIGSTOP) holds its entry's lock: a pull of another artifact never waits for
# it, and one of the same artifact says whom it waits for and goes on alone.
stopped_pull() {
  local fresh=$work/slow-content stopped_pid
  rm -rf "$fresh"
  cp -r "$mini" "$fresh"
  echo "# slow" >"$fresh/flux/$latest/slow.yaml"
  fx push "$fresh" "oci://$registry/slow-blob/flux:v1"
  [ "$rc" -eq 0 ] || { echo "push failed: $(head -c 300 "$work/err")"; return 1; }
  local cache=$work/cache-stopped
  rm -rf "$cache"
  : >"$work/registry.log"
  XDG_CACHE_HOME=$cache "$bin" pull "oci://$registry/slow-blob/flux:v1" >/dev/null 2>&1 &
  stopped_pid=$!
  wait_until 30 grep -q 'slow-blob/.*trickle=start' "$work/registry.log" ||
    { kill -9 "$stopped_pid"; echo "the slow download did not start"; return 1; }
  kill -STOP "$stopped_pid"
  local ok=0
  XDG_CACHE_HOME=$cache fx pull "oci://$registry/flux:v1"
  if [ "$rc" -ne 0 ]; then
    echo "a pull of another artifact failed behind the stopped one: exit $rc: $(head -c 300 "$work/err")"
    ok=1
  fi
  if [ $ok -eq 0 ]; then
    XDG_CACHE_HOME=$cache fx pull "oci://$registry/slow-blob/flux:v1"
    if [ "$rc" -ne 0 ]; then
      echo "a pull of the same artifact failed behind the stopped one: exit $rc: $(head -c 300 "$work/err")"
      ok=1
    elif ! grep -q "waiting for another fluxopctl (pid $stopped_pid) pulling sha256:" "$work/err" ||
      ! grep -q "is held by a stopped process: pulling sha256:.* alongside" "$work/err"; then
      echo "the wait was not said: $(head -c 400 "$work/err")"
      ok=1
    fi
  fi
  kill -9 "$stopped_pid" 2>/dev/null
  kill -CONT "$stopped_pid" 2>/dev/null
  wait "$stopped_pid" 2>/dev/null
  return $ok
}
check "pull: a pull stopped midway blocks no other, and is said when awaited" stopped_pull

# Issue 41, the cache cannot be forged: a tag's record rewritten to name
# another artifact of the cache (a rollback) is not trusted: its seal is
# made with a key outside the cache.
forged_record() {
  local cache=$work/cache-forged
  rm -rf "$cache"
  XDG_CACHE_HOME=$cache fx pull "oci://$registry/flux:v1"
  [ "$rc" -eq 0 ] || { echo "pull failed: $(head -c 300 "$work/err")"; return 1; }
  XDG_CACHE_HOME=$cache fx pull "oci://$registry/slow-blob/flux:v1"
  [ "$rc" -eq 0 ] || { echo "pull failed: $(head -c 300 "$work/err")"; return 1; }
  local genuine=$cache/fluxopctl/oci/refs/$registry/flux/v1.json
  local other=$cache/fluxopctl/oci/refs/$registry/slow-blob/flux/v1.json
  # The other artifact's digest, and its seal, in the tag's record.
  python3 - "$genuine" "$other" <<'PY'
import json, sys
genuine, other = (json.load(open(p)) for p in sys.argv[1:3])
genuine["digest"] = other["digest"]
if "seal" in other:
    genuine["seal"] = other["seal"]
json.dump(genuine, open(sys.argv[1], "w"))
PY
  XDG_CACHE_HOME=$cache fx build "$root/tests/oci/instance.yaml" \
    --distribution-artifact "oci://$registry/flux:v1" --offline
  refused_with "oci://$registry/flux:v1: .*/flux/v1.json is not sealed with this user's key .*: not trusted" ||
    return 1
}
check "build --offline: a tag's record rewritten in the cache is not trusted" forged_record

# Issue 41, a shared cache: entries honour the umask, so that another user
# of a cache shared under umask 022 lists and builds from it, and one under
# umask 077 says "Permission denied" and which path.
shared_cache() {
  command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ] || { echo "skip: needs root and setpriv"; return 0; }
  local cache=$work/cache-shared other=$work/other-home digest
  rm -rf "$cache" "$other"
  mkdir -p "$other"
  chown 65534:65534 "$other"
  chmod 755 "$work"
  (umask 022 && XDG_CACHE_HOME=$cache fx pull "oci://$registry/flux:v1")
  digest=$(grep -o 'sha256:[0-9a-f]\{64\}' "$work/out" | head -1)
  as_other() {
    setpriv --reuid 65534 --regid 65534 --clear-groups env HOME="$other" XDG_CACHE_HOME="$cache" \
      DOCKER_CONFIG="$other" timeout 60 "$bin" "$@" >"$work/out" 2>"$work/err"
    rc=$?
  }
  as_other pull --list -o json
  [ "$rc" -eq 0 ] && grep -q "$digest" "$work/out" ||
    { echo "another user's pull --list does not show $digest: exit $rc: $(head -c 300 "$work/out" "$work/err")"; return 1; }
  as_other build "$root/tests/oci/instance.yaml" --distribution-artifact "oci://$registry/flux@$digest" --offline
  [ "$rc" -eq 0 ] || { echo "another user's offline build by digest failed: $(head -c 300 "$work/err")"; return 1; }
  rm -rf "$cache"
  (umask 077 && XDG_CACHE_HOME=$cache fx pull "oci://$registry/flux:v1")
  chmod 755 "$cache" "$cache/fluxopctl"
  as_other pull --list
  refused_with "$cache/fluxopctl/oci/.*: Permission denied"
}
check "pull --list, build --offline: a cache shared under the umask serves another user" shared_cache

summary
