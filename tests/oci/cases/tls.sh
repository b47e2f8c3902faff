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
