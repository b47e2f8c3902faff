#!/usr/bin/env bash
# The release binary on a machine that has nothing else: a chroot that holds
# only the binary, a CA bundle, a Flux distribution (the latest version of
# ../shared/flux-distribution), examples/flux.yaml, /etc/hosts and an empty
# working directory (no libc, no /usr/lib, no /dev, no nsswitch.conf). There
# it runs `version`, `build` of examples/flux.yaml from the distribution
# directory (the same bytes as outside the chroot), and `pull` from a loopback
# registry over TLS by a name only the chroot's /etc/hosts knows, trusting the
# registry's throwaway CA with --ca-file, with SSL_CERT_FILE, and with a
# certs.d directory; without any of them the pull fails on the certificate.
# First: the binary is static (`file` says so, no NEEDED entry, no interpreter).
#
#   tests/release/chroot_test.sh BIN ROOT [EMULATOR]
#
# EMULATOR (qemu-aarch64-static, a static binary itself) runs a foreign
# BIN: it is copied into the chroot too (scripts/release --verify, arm64).
# Needs root, or unprivileged user namespaces (unshare -r); Debian's
# docker-registry for the registry (installed when missing).
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 BIN ROOT [EMULATOR]" >&2
  exit 2
fi
root=$(cd "$2" && pwd) || exit 2
bin=$(realpath "$1") || exit 2
emulator=${3:+$(realpath "$3")}
dist=$root/../shared/flux-distribution
cmd_timeout=${RELEASE_TEST_TIMEOUT:-120}

# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
# shellcheck source=tests/oci/lib.sh
source "$root/tests/oci/lib.sh"
# shellcheck source=scripts/lib/oci-registry.sh
source "$root/scripts/lib/oci-registry.sh"

[ -x "$bin" ] || abort "setup: $bin is not an executable"
[ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"
[ -z "$emulator" ] || [ -x "$emulator" ] || abort "setup: $emulator is not an executable"
registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"
if [ "$(id -u)" -eq 0 ]; then
  chroot_cmd=("$(command -v chroot)")
elif unshare -r true 2>/dev/null; then
  chroot_cmd=("$(command -v unshare)" -r "$(command -v chroot)")
else
  skip_test "neither root nor user namespaces: no chroot"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fluxopctl-release-test.XXXXXX") || exit 1
cleanup() {
  set +e
  registry_stop_all
  rm -rf "$work"
}
on_exit cleanup
show "$work/err"
export HOME=$work/home XDG_CACHE_HOME=$work/cache
unset SSL_CERT_FILE SSL_CERT_DIR FLUXOPCTL_DISTRIBUTION HTTPS_PROXY https_proxy HTTP_PROXY http_proxy ALL_PROXY all_proxy
mkdir -p "$HOME"

# The chroot. The registry's name resolves in it alone, through its /etc/hosts.
host=registry.fluxopctl-release.test
jail=$work/root
latest=$(cd "$dist/flux" && ls -d v* | sort -V | tail -1)
mkdir -p "$jail/etc/ssl/certs" "$jail/dist/flux" "$jail/dist/flux-images" "$jail/work"
install -m 0755 "$bin" "$jail/fluxopctl"
[ -z "$emulator" ] || install -m 0755 "$emulator" "$jail/emulator"
cp -r "$dist/flux/$latest" "$jail/dist/flux/"
cp -r "$dist/flux-images/$latest" "$jail/dist/flux-images/"
[ ! -f "$dist/flux-images/VERSION" ] || cp "$dist/flux-images/VERSION" "$jail/dist/flux-images/"
cp "$root/examples/flux.yaml" "$jail/flux.yaml"
printf '127.0.0.1 localhost %s\n' "$host" >"$jail/etc/hosts"
[ -s /etc/ssl/certs/ca-certificates.crt ] || abort "setup: /etc/ssl/certs/ca-certificates.crt is missing"
cp /etc/ssl/certs/ca-certificates.crt "$jail/etc/ssl/certs/"
chmod -R a+rX "$jail"
chmod 1777 "$jail/work"

# jail_run [VAR=VALUE...] -- ARG...: fluxopctl ARG... in the chroot, with an
# environment of nothing but a home and cache in /work and the VARs; bounded,
# outputs as run's.
jail_run() {
  local vars=(HOME=/work XDG_CACHE_HOME=/work/cache) runner=(/fluxopctl)
  while [ "$1" != -- ]; do
    vars+=("$1")
    shift
  done
  shift
  [ -z "$emulator" ] || runner=(/emulator /fluxopctl)
  run env -i "${vars[@]}" "${chroot_cmd[@]}" "$jail" "${runner[@]}" "$@"
}

t_static() {
  local described
  described=$(file -b "$bin")
  grep -q 'statically linked' <<<"$described" || { because "file: $described"; return 1; }
  ! readelf -d "$bin" 2>/dev/null | grep -q '(NEEDED)' || { because "NEEDED entries: $(readelf -d "$bin" | grep NEEDED | head -3)"; return 1; }
  ! readelf -l "$bin" 2>/dev/null | grep -q 'INTERP' || { because "it has a program interpreter"; return 1; }
}

t_version() {
  local expected
  if [ -z "$emulator" ]; then
    expected=$("$bin" version --client) || { because "version outside the chroot failed"; return 1; }
  else
    expected=$("$emulator" "$bin" version --client) || { because "version outside the chroot failed"; return 1; }
  fi
  jail_run -- version --client
  succeeded "fluxopctl version in the chroot" || return 1
  [ "$(cat "$work/out")" = "$expected" ] || because "version: '$(head -c 100 "$work/out")', outside '$expected'"
  [[ $expected == "fluxopctl "[0-9]* ]] || because "version: '$expected' is not 'fluxopctl VERSION'"
}

t_build() {
  if [ -z "$emulator" ]; then
    run "$bin" build "$jail/flux.yaml" --distribution-artifact "$jail/dist"
  else
    run "$emulator" "$bin" build "$jail/flux.yaml" --distribution-artifact "$jail/dist"
  fi
  succeeded "build outside the chroot" || return 1
  cp "$work/out" "$work/build-outside.out"
  jail_run -- build /flux.yaml --distribution-artifact /dist
  succeeded "build in the chroot" || return 1
  grep -q '^kind: Deployment' "$work/out" || { because "build printed no Deployment"; return 1; }
  same_as "build in the chroot" "$work/build-outside.out"
}

# t_pull HOW: a pull over TLS by the registry's name, trusting its CA as HOW says.
t_pull() {
  local how=$1
  rm -rf "$jail/work/cache" "$jail/work/certs.d"
  case $how in
    ca-file) jail_run -- pull "oci://$host:$port/flux:v1" --ca-file /registry-ca.pem -o json ;;
    SSL_CERT_FILE) jail_run SSL_CERT_FILE=/registry-ca.pem -- pull "oci://$host:$port/flux:v1" -o json ;;
    certs.d)
      mkdir -p "$jail/work/certs.d/$host:$port"
      cp "$jail/registry-ca.pem" "$jail/work/certs.d/$host:$port/ca.crt"
      chmod -R a+rX "$jail/work/certs.d"
      jail_run -- pull "oci://$host:$port/flux:v1" --certs-dir /work/certs.d -o json ;;
    none)
      jail_run -- pull "oci://$host:$port/flux:v1"
      one_line_error "pull without the registry's CA" 'certificate|x509|verif|ssl|tls'
      return ;;
  esac
  succeeded "pull over TLS with $how" || return 1
  [ "$(json_field "$work/out" digest)" = "$digest" ] || because "pulled digest '$(json_field "$work/out" digest)', pushed $digest"
}

t_build_pulled() {
  jail_run -- build /flux.yaml --distribution-artifact "oci://$host:$port/flux:v1" --ca-file /registry-ca.pem
  succeeded "build from oci:// in the chroot" || return 1
  same_as "build from oci:// in the chroot" "$work/build-outside.out"
}

tcase "the binary is static" t_static
tcase "version in the chroot" t_version
tcase "build examples/flux.yaml from a directory in the chroot" t_build

mini=$jail/dist
if registry_start "$work/registry" --tls "$host"; then
  port=${REGISTRY_ADDR##*:}
  cp "$REGISTRY_CA" "$jail/registry-ca.pem"
  chmod a+r "$jail/registry-ca.pem"
  if digest=$(registry_push_artifact flux:v1 "$mini" flux flux-images); then
    tcase "pull over TLS by a name of the chroot's /etc/hosts, --ca-file" t_pull ca-file
    tcase "pull over TLS, SSL_CERT_FILE" t_pull SSL_CERT_FILE
    tcase "pull over TLS, a certs.d directory" t_pull certs.d
    tcase "pull over TLS without the registry's CA: a certificate error" t_pull none
    tcase "build from oci:// over TLS in the chroot" t_build_pulled
  else
    fail "pull over TLS" "pushing the distribution to the registry failed"
  fi
else
  fail "pull over TLS" "the TLS registry did not start"
fi

summary
