# Sourced by every shell test suite (tests/cli, tests/oci, tests/e2e,
# tests/deploy, tests/handoff): one way to report cases, to wait and to stop
# what a suite started. A suite sets $work, its temporary directory, before
# its first case.
#
# Reporting: one line per case, `ok NAME`, `FAIL NAME: reason` (then the end
# of the files `show` named) or `skip NAME: reason` (a failure in CI, see
# skip.sh), and a closing line `N passed, M failed[, K skipped]`.
#
#   pass NAME / fail NAME [REASON] / skip NAME REASON
#   show FILE...            the files a later fail prints the end of (kept in
#                           $work, so that a case run in a subshell sets it)
#   check NAME FUNCTION ARGS...
#                           one case: FUNCTION, in a subshell, prints why it
#                           fails (first line: the reason) and returns non-zero
#   summary                 the closing line; false when a case failed
#   abort REASON            a failure that ends the suite: counted, the
#                           closing line, exit 1
#   on_exit FUNCTION        FUNCTION runs when the suite ends, also when
#                           SIGINT or SIGTERM stops it (exit 130)
#   wait_until, stop_process
#                           from scripts/lib/wait.sh

# shellcheck source=tests/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
# shellcheck source=scripts/lib/wait.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/wait.sh"

passed=0 failed=0 skipped=0

show() { printf '%s\n' "$@" >"$work/shown"; }
pass() {
  passed=$((passed + 1))
  echo "ok $1"
}
fail() {
  failed=$((failed + 1))
  echo "FAIL $1${2:+: $2}"
  local shown
  [ -n "${work:-}" ] && [ -f "$work/shown" ] || return 0
  while IFS= read -r shown; do
    [ -s "$shown" ] && tail -n 8 "$shown" | sed "s/^/  ${shown##*/}| /"
  done <"$work/shown"
  return 0
}
skip() {
  if skip_is_failure; then
    fail "$1" "cannot run in CI: $2"
    return 0
  fi
  skipped=$((skipped + 1))
  echo "skip $1: $2"
}
check() {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then
    pass "$name"
  else
    fail "$name" "$(head -n 1 <<<"${out:-failed}")"
    tail -n +2 <<<"$out" | head -n 12 | sed 's/^/  > /'
    return 1
  fi
}
summary() {
  if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
  else
    echo "$passed passed, $failed failed"
  fi
  [ "$failed" -eq 0 ]
}
abort() {
  fail "$1"
  summary
  exit 1
}

on_exit() {
  trap "$1" EXIT
  trap 'exit 130' INT TERM
}
