#!/usr/bin/env bash
# End-to-end tests of the Kubernetes client (src/core/kube) against a real
# API server: the "kube e2e" doctest cases of the unit test binary, which run
# only when FLUXOPCTL_E2E_KUBECONFIG names an admin kubeconfig.
#
#   tests/e2e/kube_client_test.sh UNIT_TESTS
#
# Uses the cluster in $KUBECONFIG when set (its unprivileged.kubeconfig must
# be beside it); otherwise brings one up with 'scripts/cluster up' in its own
# state directory and downs it at the end. Exit 77 when no cluster can be had.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
unit_tests=${1:?usage: $0 UNIT_TESTS}
work=$(mktemp -d)
own_cluster=0

cleanup() {
  [ "$own_cluster" -eq 1 ] && "$root/scripts/cluster" down >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

command -v kubectl >/dev/null || { echo "kube_client_test: skipped: no kubectl" >&2; exit 77; }
if [ -z "${KUBECONFIG:-}" ]; then
  export FLUXOPCTL_CLUSTER_DIR=$work/cluster
  status=0
  up=$("$root/scripts/cluster" up 2>"$work/up.err") || status=$?
  [ "$status" -eq 77 ] && { cat "$work/up.err" >&2; exit 77; }
  [ "$status" -eq 0 ] || { cat "$work/up.err" >&2; exit 1; }
  own_cluster=1
  eval "$up"
fi
FLUXOPCTL_E2E_KUBECONFIG=$KUBECONFIG "$unit_tests" -tc='kube e2e*'
