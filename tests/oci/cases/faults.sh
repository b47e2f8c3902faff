# Retries (503, 429 with Retry-After) and cross-host redirects without
# credentials, through tests/oci/http_faults.py.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

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
