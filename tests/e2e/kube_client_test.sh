#!/usr/bin/env bash
# End-to-end tests of the Kubernetes client (src/core/kube) against a real
# API server: the "kube e2e" doctest cases of the unit test binary, which run
# only when FLUXOPCTL_E2E_KUBECONFIG names an admin kubeconfig.
#
#   tests/e2e/kube_client_test.sh UNIT_TESTS
#
# Uses the cluster in $KUBECONFIG when set (its unprivileged.kubeconfig must
# be beside it); otherwise brings one up with 'scripts/cluster up' in its own
# state directory and downs it at the end. Passes only when every
# TEST_CASE("kube e2e ...") of tests/unit/kube/*.cpp ran and none failed or
# was skipped: a filter that matches fewer cases is a failure. Exit 77 (1 in
# CI) when no cluster can be had.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
unit_tests=${1:?usage: $0 UNIT_TESTS}
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
work=$(mktemp -d)

on_exit e2e_cleanup

command -v kubectl >/dev/null || skip_test "no kubectl"
[ -n "${KUBECONFIG:-}" ] || e2e_cluster_up "$work/cluster"

expected=$(cat "$root"/tests/unit/kube/*.cpp | grep -c 'TEST_CASE("kube e2e')
status=0
FLUXOPCTL_E2E_KUBECONFIG=$KUBECONFIG timeout -k 5 600 "$unit_tests" -tc='kube e2e*' >"$work/out" 2>&1 || status=$?
cat "$work/out"
show "$work/out"

# doctest's closing line: "[doctest] test cases: X | Y passed | Z failed | W skipped".
all_ran() {
  local line ran ok
  [ "$status" = 0 ] || { echo "the unit tests exited $status"; return 1; }
  line=$(grep '^\[doctest\] test cases:' "$work/out" | tail -n 1)
  [[ $line =~ test\ cases:\ *([0-9]+)\ \|\ *([0-9]+)\ passed ]] || { echo "no doctest summary line"; return 1; }
  ran=${BASH_REMATCH[1]} ok=${BASH_REMATCH[2]}
  [ "$expected" -gt 0 ] && [ "$ran" = "$expected" ] && [ "$ok" = "$expected" ] ||
    { echo "$ran test cases ran, $ok passed; tests/unit/kube has $expected 'kube e2e' cases"; return 1; }
}
check "kube e2e: all $expected test cases ran and passed" all_ran
summary
