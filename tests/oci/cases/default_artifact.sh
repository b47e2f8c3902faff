# The default artifact: `fluxopctl pull` without a URL (ghcr.io reached
# through tests/oci/connect_proxy.py), `fluxopctl build` without flags,
# offline, and FLUXOPCTL_DISTRIBUTION as an oci:// URL.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

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
