# A stopped registry: --offline, and digests served from the cache.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

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
