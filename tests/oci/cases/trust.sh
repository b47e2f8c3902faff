# Private registries: a CA added with --ca-file (beside the system's, never
# instead), a certificates directory (certs.d: --certs-dir, FLUXOPCTL_CERTS_DIR)
# with CAs and client certificates (a registry that requires them), and
# HTTPS_PROXY, HTTP_PROXY and NO_PROXY (tests/oci/connect_proxy.py); then the
# whole artifact: push and pull keep flux-vex/ and every other entry.
# The TLS registries are named *.example, names that resolve nowhere: they
# are reached only through a proxy that sends every tunnel to them.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

# start_proxy NAME TARGET: a CONNECT proxy to TARGET (HOST:PORT); its URL in
# NAME_proxy, its log in $work/NAME-proxy.log.
start_proxy() {
  start_helper "$work/$1-proxy.port" python3 "$here/connect_proxy.py" --target "$2" \
    --port-file "$work/$1-proxy.port" --log "$work/$1-proxy.log" --timeout 900 || return 1
  printf -v "$1_proxy" '%s' "http://127.0.0.1:$(head -1 "$work/$1-proxy.port")"
}

# proxied LABEL NAME HOST:PORT: the last command's only tunnels went through
# proxy NAME, to HOST:PORT, and carried no credential.
proxied() {
  local log=$work/$2-proxy.log
  grep -q "^CONNECT $3\$" "$log" || { because "$1: no CONNECT $3 through the proxy"; return 1; }
  ! grep -v "^CONNECT $3\$" "$log" | grep -q . ||
    because "$1: other tunnels: $(grep -v "^CONNECT $3\$" "$log" | head -1)"
}

trust_setup() {
  # TLS with a throwaway CA and basic auth, the mini distribution as flux:v1.
  start_mini_registry private --tls registry.example --htpasswd fluxuser:fluxpass || return 1
  start_proxy private "127.0.0.1:${private##*:}" || return 1
  docker_config "{\"auths\":{\"$private\":{\"auth\":\"$(b64 fluxuser:fluxpass)\"}}}"
  # TLS requiring a client certificate, no auth.
  start_mini_registry mtls --tls mtls.example --client-auth || return 1
  start_proxy mtls "127.0.0.1:${mtls##*:}" || return 1
  # Plain HTTP by name, the main registry behind it.
  start_proxy plain "127.0.0.1:${main##*:}"
}

# trust_pull LABEL PROXY-NAME REF DIGEST ARG...: a pull of REF through proxy
# PROXY-NAME (HTTPS_PROXY and HTTP_PROXY) into a fresh cache gets DIGEST.
trust_pull() {
  local label=$1 proxy_name=$2 ref=$3 digest=$4 proxy
  shift 4
  proxy=${proxy_name}_proxy
  fresh_cache
  : >"$work/$proxy_name-proxy.log"
  run env HTTPS_PROXY="${!proxy}" HTTP_PROXY="${!proxy}" "$bin" pull "oci://$ref" -o json "$@"
  succeeded "$label" || return 1
  [ "$(json_field "$work/out" digest)" = "$digest" ] || { because "$label: digest is not $digest"; return 1; }
  proxied "$label" "$proxy_name" "${ref%%/*}"
}

t_ca_file() {
  trust_pull "pull with --ca-file" private "$private/flux:v1" "$private_digest" \
    --ca-file "$private_REGISTRY_CA" || return 1
  # Push too: basic auth through the tunnel, never to the proxy.
  : >"$work/private-proxy.log"
  run env HTTPS_PROXY="$private_proxy" "$bin" push "$mini" "oci://$private/pushed:v1" \
    --ca-file "$private_REGISTRY_CA"
  succeeded "push with --ca-file" || return 1
  proxied "push with --ca-file" private "$private"
}

t_ca_file_adds() {
  # The default trust (SSL_CERT_FILE here) still holds with --ca-file of
  # another CA: added, not replacing.
  fresh_cache
  run env HTTPS_PROXY="$private_proxy" SSL_CERT_FILE="$private_REGISTRY_CA" "$bin" pull \
    "oci://$private/flux:v1" --ca-file "$mtls_REGISTRY_CA"
  succeeded "pull trusting the system's CA, --ca-file another"
}

t_untrusted() {
  fresh_cache
  run env HTTPS_PROXY="$private_proxy" "$bin" pull "oci://$private/flux:v1"
  one_line_error "pull without the CA" "certificate.*not trusted.*--ca-file.*--certs-dir"
}

t_ca_file_bad() {
  local what=$1 file
  case $what in
    missing) file=$work/no-such-ca.pem ;;
    not-pem) file=$instance ;;
    key) file=$private_REGISTRY_DIR/ca.key ;;
  esac
  fx pull "oci://$private/flux:v1" --ca-file "$file"
  one_line_error "--ca-file $what" "^error: --ca-file: $file: "
}

# t_certs_dir HOW: the private registry's CA as HOST:PORT/ca.crt of a
# certificates directory named by HOW (flag, env).
t_certs_dir() {
  local certs=$work/certs-$1.d
  mkdir -p "$certs/$private"
  cp "$private_REGISTRY_CA" "$certs/$private/ca.crt"
  case $1 in
    flag) trust_pull "pull with --certs-dir" private "$private/flux:v1" "$private_digest" \
      --certs-dir "$certs" ;;
    env) FLUXOPCTL_CERTS_DIR=$certs trust_pull "pull with FLUXOPCTL_CERTS_DIR" private \
      "$private/flux:v1" "$private_digest" ;;
  esac
}

# t_certs_dir_missing HOW: a certificates directory that does not exist,
# named by HOW (flag, env): an error naming where it came from.
t_certs_dir_missing() {
  case $1 in
    flag)
      fx pull "oci://$private/flux:v1" --certs-dir "$work/no-such-certs.d"
      [ $rc -ne 0 ] || { because "exit 0"; return 1; }
      grep -q "^error: --certs-dir: .*$work/no-such-certs.d" "$work/err" ||
        because "the error does not name the flag and the directory: $(first_err)" ;;
    env)
      run env FLUXOPCTL_CERTS_DIR="$work/no-such-certs.d" "$bin" pull "oci://$private/flux:v1"
      one_line_error "FLUXOPCTL_CERTS_DIR" "^error: FLUXOPCTL_CERTS_DIR: $work/no-such-certs.d: not a directory" ;;
  esac
}

# t_client_cert WITH: the registry that requires a client certificate, with
# only its CA in the certificates directory (refused), or with its client
# certificate too (pull and push).
t_client_cert() {
  local certs=$work/certs-mtls.d
  rm -rf "$certs"
  mkdir -p "$certs/$mtls"
  cp "$mtls_REGISTRY_CA" "$certs/$mtls/ca.crt"
  if [ "$1" = without ]; then
    fresh_cache
    run env HTTPS_PROXY="$mtls_proxy" "$bin" pull "oci://$mtls/flux:v1" --certs-dir "$certs"
    # (The alert may come after a first attempt fails otherwise, a reset
    # connection: the retry count is not checked.)
    one_line_error "pull without a client certificate" "requires a client certificate.*client.cert"
    return
  fi
  cp "$mtls_REGISTRY_CLIENT_CERT" "$certs/$mtls/client.cert"
  cp "$mtls_REGISTRY_CLIENT_KEY" "$certs/$mtls/client.key"
  trust_pull "pull with a client certificate" mtls "$mtls/flux:v1" "$mtls_digest" \
    --certs-dir "$certs" || return 1
  run env HTTPS_PROXY="$mtls_proxy" "$bin" push "$mini" "oci://$mtls/pushed:v1" --certs-dir "$certs"
  succeeded "push with a client certificate"
}

t_no_proxy() {
  # NO_PROXY names the registry: reached directly, its name resolves
  # nowhere, and the proxy sees nothing.
  fresh_cache
  : >"$work/private-proxy.log"
  run env HTTPS_PROXY="$private_proxy" NO_PROXY=registry.example "$bin" pull \
    "oci://$private/flux:v1" --ca-file "$private_REGISTRY_CA"
  one_line_error "pull with NO_PROXY" "resolve" || return 1
  [ ! -s "$work/private-proxy.log" ] || because "the proxy was used: $(head -1 "$work/private-proxy.log")"
}

t_http_proxy() {
  # Plain HTTP (--insecure-registry) goes through HTTP_PROXY.
  trust_pull "pull over HTTP_PROXY" plain "plain.example:${main##*:}/mini:v1" "$mini_digest" \
    --insecure-registry "plain.example:${main##*:}"
}

# The whole artifact: what fluxopctl does not read (flux-vex/, a NOTICE)
# is pushed, pulled and pushed again, byte for byte.
t_whole_artifact() {
  local src=$work/whole pulled
  rm -rf "$src"
  cp -r "$mini" "$src"
  mkdir -p "$src/flux-vex/${latest%.*}" "$src/.git"
  printf '{"@context":"https://openvex.dev/ns/v0.2.0","statements":[]}\n' \
    >"$src/flux-vex/${latest%.*}/flux.openvex.json"
  echo "synthetic" >"$src/NOTICE"
  echo "not part of it" >"$src/.git/HEAD"
  fx push "$src" "oci://$main/whole:v1" --source test --revision test
  succeeded "push" || return 1
  fresh_cache
  fx pull "oci://$main/whole:v1" -o json
  succeeded "pull" || return 1
  pulled=$(json_field "$work/out" path)
  diff -r -x .git "$src" "$pulled" >"$work/whole.diff" ||
    { because "the pulled content differs: $(head -1 "$work/whole.diff")"; return 1; }
  [ ! -e "$pulled/.git" ] || { because "a hidden entry was pushed"; return 1; }
  fx push "$pulled" "oci://$main/whole-again:v1" --source test --revision test
  succeeded "push of the pulled content" || return 1
  registry_use main
  [ "$(registry_layer_digest whole:v1)" = "$(registry_layer_digest whole-again:v1)" ] ||
    because "the pulled content pushed again is another layer"
}

if trust_setup; then
  tcase "trust: pull and push with --ca-file, through HTTPS_PROXY" t_ca_file
  tcase "trust: --ca-file adds to the default trust, never replaces it" t_ca_file_adds
  tcase "trust: without the CA, a one-line certificate error naming --ca-file" t_untrusted
  tcase "trust: --ca-file that does not exist" t_ca_file_bad missing
  tcase "trust: --ca-file that is not PEM" t_ca_file_bad not-pem
  tcase "trust: --ca-file holding a key" t_ca_file_bad key
  tcase "trust: certs.d through --certs-dir" t_certs_dir flag
  tcase "trust: certs.d through FLUXOPCTL_CERTS_DIR" t_certs_dir env
  tcase "trust: --certs-dir that does not exist" t_certs_dir_missing flag
  tcase "trust: FLUXOPCTL_CERTS_DIR that does not exist" t_certs_dir_missing env
  tcase "trust: a registry requiring a client certificate refuses none" t_client_cert without
  tcase "trust: client.cert and client.key from certs.d (pull, push)" t_client_cert with
  tcase "proxy: NO_PROXY bypasses HTTPS_PROXY" t_no_proxy
  tcase "proxy: HTTP_PROXY for a plain-HTTP registry" t_http_proxy
else
  fail "trust" "setup: a registry or a proxy did not start: $(tail -1 "$work/helpers.log" 2>/dev/null)"
fi
tcase "whole artifact: push and pull keep flux-vex/ and every entry" t_whole_artifact
