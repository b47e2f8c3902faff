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
# ghcr.io), FLUXOPCTL_DISTRIBUTION as an oci:// URL, private registries
# (--ca-file, certs.d CAs and client certificates, HTTPS_PROXY, HTTP_PROXY,
# NO_PROXY) and the whole artifact (flux-vex/) through push and pull, `fluxopctl images` and
# `fluxopctl mirror` (cases/mirror.sh; --platform into CNCF distribution v3's
# registry, built once from the Go module proxy). Every build from oci:// is compared
# byte for byte with fluxopctl's build from the directory and with what the
# upstream flux-operator CLI (scripts/lib/upstream-cli.sh) renders from the
# same artifact.
#
#   tests/oci/oci_test.sh BIN ROOT     (BIN: fluxopctl, ROOT: the repository)
#
# Prints `ok NAME`, `FAIL NAME: reason` (then the end of the command's
# stderr) or `skip NAME: reason` per case (tests/lib/harness.sh) and closes with `N passed, M failed[, K
# skipped]`. Exit 0 when none failed, 1 otherwise, 77 when it cannot run (no
# docker-registry to install, no ../shared/flux-distribution); in CI (CI=true)
# those and every skipped case are failures (tests/lib/skip.sh). A registry
# that does not start is a failure. Everything runs in a temporary directory
# (XDG_CACHE_HOME, DOCKER_CONFIG, HOME); every process started is stopped on
# exit, registries also when the script is killed; every wait is bounded.
# OCI_TEST_VERBOSE=1 also shows the error line of each expected failure;
# OCI_TEST_TIMEOUT (60) bounds each command, seconds.
#
# The cases are in tests/oci/cases, one file per topic, run in the order of
# the loop at the end; tests/oci/lib.sh has their helpers.
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

# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
# shellcheck source=tests/oci/lib.sh
source "$here/lib.sh"

[ -x "$bin" ] || abort "setup: $bin is not an executable"
[ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"
dist=$(cd "$dist" && pwd)

source "$root/scripts/lib/oci-registry.sh"
# The upstream CLI's place depends on the caller's XDG_CACHE_HOME/HOME: read
# it before they are replaced.
source "$root/scripts/lib/upstream-cli.sh"
upstream_cli=$upstream

registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"
# distribution v3's registry, for the one case docker-registry 2.8 cannot
# serve (cases/mirror.sh); built with the machine's Go caches, before HOME is
# the test's own.
registry_v3_unavailable=
registry_v3_built=$(registry_v3_ensure_built 2>&1) || registry_v3_unavailable=$(tail -1 <<<"$registry_v3_built")

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
# A failed case shows the end of its last command's stderr.
show "$work/err"

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
[ $rc -eq 0 ] || abort "setup: fluxopctl build from the directory $dist: $(first_err)"
cp "$work/out" "$work/ref-full.out"
# The oldest release, which a build reads from the layer, not from the files
# a pull keeps (the newest's).
older_instance=$work/older-instance.yaml
oldest=$(cd "$dist/flux" && ls -d v* | sort -V | head -1)
sed "s/version: \"2.x\"/version: \"${oldest#v}\"/" "$instance" >"$older_instance"
fx build "$older_instance" --distribution-artifact "$dist"
[ $rc -eq 0 ] || abort "setup: fluxopctl build of $oldest from the directory $dist: $(first_err)"
cp "$work/out" "$work/ref-older.out"
expected_versions=$(cd "$dist/flux" && ls -d v* | sort -V | tr '\n' ' ')

# The main plain-HTTP registry, with its access log (blob GETs are counted).
registry_start "$work/reg-main" --access-log || abort "setup: docker-registry did not start"
registry_save main
main=$REGISTRY_ADDR
registry_push_artifact full:v1 "$dist" flux flux-images >"$work/full.digest" ||
  abort "setup: pushing the distribution to the local registry with curl failed"
full_digest=$(cat "$work/full.digest")
mini_digest=$(registry_push_artifact mini:v1 "$mini" flux flux-images) ||
  abort "setup: pushing to the local registry with curl failed"

blob_gets() { grep -c '"GET /v2/[^ ]*/blobs/sha256:' "$main_REGISTRY_LOG"; }

for topic in pull cache auth faults push_tmp tls offline default_artifact trust mirror; do
  # shellcheck source=/dev/null
  source "$here/cases/$topic.sh"
done

summary
