#!/usr/bin/env bash
# fluxopctl against a hostile API server (tests/hostile/apiserver.py): each
# attack mode, against get, wait, diff and apply, ends in an error (exit 1,
# diff's 2) with one `error:` line naming what was refused, within its bound,
# under 512 MiB, without `internal` and without printing a control character
# the server sent; the daemon (apply --watch) logs the refusal and lives on.
#
#   apiserver_test.sh BIN ROOT
#
# The distribution comes from $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else
# ROOT/../shared/flux-distribution; diff and apply are skipped without one.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
work=$(mktemp -d)
server_pid=
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
cleanup() {
  stop_process "$server_pid"
  # A daemon case stopped in its middle.
  [ -f "$work/daemon.pid" ] && stop_process "$(cat "$work/daemon.pid")"
  rm -rf "$work"
}
on_exit cleanup
show "$work/out" "$work/err"
export XDG_CACHE_HOME=$work/cache HOME=$work KUBECONFIG=

# The most a run may take in memory (KiB) and in time (s).
max_rss=$((512 * 1024))
run_limit=120

cat >"$work/instance.yaml" <<'YAML'
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata: {name: flux, namespace: flux-system}
spec:
  distribution: {version: "2.x", registry: ghcr.io/fluxcd}
YAML

# Starts the server in MODE (stopping the previous one) and points
# $work/kubeconfig at it.
start_server() {
  stop_process "$server_pid"
  rm -f "$work/port"
  python3 "$root/tests/hostile/apiserver.py" "$1" "$work/port" &
  server_pid=$!
  wait_until 30 test -s "$work/port" || abort "the hostile API server ($1) did not start"
  cat >"$work/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: hostile
clusters: [{name: hostile, cluster: {server: "http://127.0.0.1:$(cat "$work/port")"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: hostile, context: {cluster: hostile, user: u}}]
YAML
}

# Runs fluxopctl ARGS against the server: its output in $work/out and
# $work/err, its exit status in $work/status, its peak memory (KiB) in $work/rss.
run() {
  local status=0
  timeout -k 5 "$run_limit" /usr/bin/time -f %M -o "$work/rss" \
    "$bin" "$@" --kubeconfig "$work/kubeconfig" >"$work/out" 2>"$work/err" || status=$?
  echo "$status" >"$work/status"
}

# What no run may do, whatever it is told: print `internal`, a control
# character but line breaks, or use more than 512 MiB.
tight_lipped() {
  local rss
  if grep -q 'internal' "$work/err"; then
    echo "an internal error"
    return 1
  fi
  if LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$work/out" "$work/err"; then
    echo "a control character printed"
    return 1
  fi
  rss=$(tail -n 1 "$work/rss")
  [ "$rss" -lt "$max_rss" ] || { echo "peak memory ${rss} KiB, more than 512 MiB"; return 1; }
}

# The end of a run refused as every attack must be: exit STATUS (diff's
# error is 2, the others' 1), an error line holding EXPECTED, and
# tight_lipped.
refused() {
  local expected_status=$1 expected=$2 status
  status=$(cat "$work/status")
  [ "$status" = "$expected_status" ] || { echo "exit status $status, not $expected_status"; return 1; }
  grep -q '^error: ' "$work/err" || { echo "no error: line"; return 1; }
  grep -qF -- "$expected" "$work/err" || { echo "no \"$expected\" in the error"; return 1; }
  tight_lipped
}

# The daemon (apply --watch --from-cluster) against the server: it logs
# EXPECTED, lives on (its peak memory then in $work/rss), and ends at SIGTERM
# with exit 0.
daemon_survives() {
  local expected=$1 pid status=0
  "$bin" apply --watch --from-cluster --distribution-artifact "$dist" \
    --kubeconfig "$work/kubeconfig" >"$work/out" 2>"$work/err" &
  pid=$!
  echo "$pid" >"$work/daemon.pid"
  if ! wait_until 60 grep -qF -- "$expected" "$work/err"; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid"
    rm "$work/daemon.pid"
    echo "no \"$expected\" logged within 60 s"
    return 1
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" || status=$?
    rm "$work/daemon.pid"
    echo "the daemon ended (exit status $status)"
    return 1
  fi
  awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" >"$work/rss"
  kill -TERM "$pid"
  wait "$pid" || status=$?
  rm "$work/daemon.pid"
  [ "$status" = 0 ] || { echo "exit status $status at SIGTERM, not 0"; return 1; }
  tight_lipped
}

# case MODE COMMAND EXPECTED: COMMAND (get, wait, diff or apply) against MODE.
attack() {
  local mode=$1 command=$2 expected=$3 args=()
  case $command in
  get) args=(get) ;;
  wait) args=(wait --timeout 20s --request-timeout 10s) ;;
  diff | apply)
    if [ ! -d "$dist/flux" ]; then
      skip "$mode: $command" "no distribution at $dist"
      return
    fi
    args=("$command" "$work/instance.yaml" --distribution-artifact "$dist")
    ;;
  esac
  run "${args[@]}"
  check "$mode: $command" refused "$([ "$command" = diff ] && echo 2 || echo 1)" "$expected"
}

start_server deep
for command in get wait diff apply; do
  attack deep "$command" "nesting deeper than 256 levels"
done

start_server huge
for command in get diff; do
  attack huge "$command" "response larger than"
done

start_server hugelist
for command in get wait diff; do
  attack hugelist "$command" "response larger than"
done

# What the server wrote in the instance's status: shown, its control
# characters escaped.
start_server crlf
run get
check "crlf: get" tight_lipped
for format in yaml json; do
  run get -o "$format"
  check "crlf: get -o $format" tight_lipped
done

# The daemon's watch of the instance: an event nested too deep, a line without end.
if [ -d "$dist/flux" ]; then
  start_server deep
  check "deep: apply --watch" daemon_survives "nesting deeper than 256 levels"
  start_server endless
  check "endless: apply --watch" daemon_survives "a watch event larger than"
else
  skip "apply --watch" "no distribution at $dist"
fi

# A status of the wrong shapes (a real API server keeps to the CRD's schema):
# what does not fit is left out, never an internal error.
start_server shapes
run get
shown() {
  [ "$(cat "$work/status")" = 0 ] || { echo "exit status $(cat "$work/status"), not 0"; return 1; }
  tight_lipped
}
check "shapes: get" shown
run wait --timeout 5s
check "shapes: wait" refused 1 "timeout"

# Nested past what the printers print (100 levels), within an answer's bound:
# refused in YAML and in JSON alike, never printed with an indent that grows
# with the depth.
start_server nested
for format in yaml json; do
  run get -o "$format"
  check "nested: get -o $format" refused 1 "nested deeper than 100 levels"
done

# A byte every half second: the request's bound ends it.
start_server trickle
run get --request-timeout 3s
check "trickle: get" refused 1 "error:"

summary
