# Waiting, for the test suites (through tests/lib/harness.sh) and the
# benchmarks alike: every wait has a bound.
#
#   wait_until SECONDS COMMAND...
#                           polls COMMAND until it succeeds; false when
#                           SECONDS pass first
#   stop_process PID        SIGTERM (SIGKILL after 30 s), reaped, true; nothing for
#                           an empty PID

wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

stop_process() {
  [ -n "$1" ] || return 0
  kill "$1" 2>/dev/null
  wait_until 30 eval '! kill -0 '"$1"' 2>/dev/null' || kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null || true
}
