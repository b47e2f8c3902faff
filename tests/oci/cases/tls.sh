# TLS registries with a throwaway CA (SSL_CERT_FILE) and --insecure-registry.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

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
    skip "$c" "this machine's host name does not resolve to a 127.x address (see /etc/hosts)"
  done
else
  if start_mini_registry tls --tls "$loopback_name"; then
    tcase "TLS: SSL_CERT_FILE with the test CA ($tls)" t_tls yes
    tcase "TLS: without the CA, a certificate error" t_tls no
  else
    fail "TLS" "the TLS registry did not start"
  fi
  tcase "insecure: plain HTTP by name ($loopback_name) refused" t_insecure none
  tcase "insecure: --insecure-registry NAME:PORT" t_insecure "$loopback_name:${main##*:}"
  tcase "insecure: --insecure-registry NAME" t_insecure "$loopback_name"
fi

# A registry on a loopback address that speaks only TLS (a port-forward, a
# local mirror with a private CA) is reached over HTTPS first, as docker,
# containerd and crane reach it; plain HTTP only when the server answers the
# TLS handshake in plain HTTP (the main registry here: every case pulls from
# it so) or the host is --insecure-registry.
t_loopback_tls() {
  local how=$1
  registry_use tlsloop
  fresh_cache
  case $how in
    ca-file)
      fx pull "oci://$tlsloop/flux:v1" --ca-file "$tlsloop_REGISTRY_CA" -o json
      succeeded "pull from a TLS-only registry on localhost with --ca-file" || return 1
      [ "$(json_field "$work/out" digest)" = "$tlsloop_digest" ] || because "digest is not $tlsloop_digest" ;;
    untrusted)
      # A certificate it cannot verify is an error, never a reason for HTTP.
      fx pull "oci://$tlsloop/flux:v1"
      one_line_error "pull from a TLS-only registry on localhost without its CA" 'certificate|verif' ;;
    insecure)
      fx pull "oci://$tlsloop/flux:v1" --insecure-registry "$tlsloop"
      one_line_error "plain HTTP to a TLS-only registry (--insecure-registry)" \
        'manifest v1: the server speaks HTTPS and was sent plain HTTP .*\(HTTP 400\)' ;;
  esac
}

if start_mini_registry tlsloop --tls localhost; then
  tcase "loopback TLS: HTTPS first, with --ca-file ($tlsloop)" t_loopback_tls ca-file
  tcase "loopback TLS: an untrusted certificate is an error, not plain HTTP" t_loopback_tls untrusted
  tcase "loopback TLS: --insecure-registry sends plain HTTP, and says the server speaks HTTPS" \
    t_loopback_tls insecure
else
  fail "loopback TLS" "the TLS registry on localhost did not start"
fi
