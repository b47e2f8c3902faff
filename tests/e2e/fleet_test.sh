#!/usr/bin/env bash
# End-to-end tests of a fleet (issue 32): get, check, diff, apply, wait,
# suspend, resume and report across three kubeconfig contexts merged from
# $KUBECONFIG's files: the local control plane (scripts/cluster), a second,
# light cluster beside it (another API server on the same etcd under its own
# prefix: no controllers, so what is applied there never rolls out) and one
# that is unreachable (a closed port). A cluster that fails does not stop the
# others; the exit codes say it; a canary rollout in batches of one stops at
# the batch that does not become Ready.
#
#   tests/e2e/fleet_test.sh BIN ROOT
#
# Closes with `N passed, M failed`; exit 77 (1 in CI) when there is no
# cluster or no distribution to test with.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
instance=$root/tests/e2e/instances/flux-2.9-four.yaml
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
work=$(mktemp -d)
cleanup() {
  e2e_cluster_down
  rm -rf "$work"
}
on_exit cleanup

[ -d "$dist/flux" ] || skip_test "no distribution at $dist"
command -v kubectl >/dev/null || skip_test "kubectl is not installed"
command -v python3 >/dev/null || skip_test "python3 is not installed"
e2e_cluster_up "$work/cluster"
main_config=$KUBECONFIG
e2e_cluster_add east
east_config=$e2e_added
# Port 1: nothing listens there, a connection is refused at once.
sed -e 's/east/gone/g' -e 's#https://127.0.0.1:[0-9]*#https://127.0.0.1:1#' "$east_config" >"$work/gone.kubeconfig"
export KUBECONFIG=$main_config:$east_config:$work/gone.kubeconfig
main=fluxopctl-e2e
three=(--context "$main" --context east --context gone)

# fleet NAME ARGS...: fluxopctl with the distribution (see fx).
fleet() {
  local name=$1
  shift
  fx "$name" "$@" --distribution-artifact "$dist"
}
# row NAME CLUSTER PATTERN: $work/NAME.out has CLUSTER's row, matching the
# extended regular expression PATTERN after the context.
row() {
  local line
  line=$(awk -v c="$2" '$1 == c' "$work/$1.out" | tail -n 1)
  [ -n "$line" ] || { echo "no row for $2 in:"; cat "$work/$1.out"; return 1; }
  [[ $line =~ ^$2\ +$3 ]] || { echo "row: $line"; return 1; }
}
# json_keys NAME KEYS...: $work/NAME.out is one JSON object with these keys.
json_keys() {
  local name=$1
  shift
  python3 - "$work/$name.out" "$@" <<'PY' || { cat "$work/$name.out" | head -n 20; return 1; }
import json, sys
document = json.load(open(sys.argv[1]))
want = sorted(sys.argv[2:])
if sorted(document) != want:
    sys.exit(f"keys {sorted(document)}, not {want}")
PY
}
exit_and() {  # CODE FUNCTION ARGS...
  local code=$1
  shift
  exit_is "$code" && "$@"
}
err_has() { grep -qE -- "$2" "$work/$1.err" || { echo "no '$2' in:"; tail -n 20 "$work/$1.err"; return 1; }; }
out_has() { grep -qE -- "$2" "$work/$1.out" || { echo "no '$2' in:"; tail -n 20 "$work/$1.out"; return 1; }; }
annotation() {
  k --context "$1" -n "$ns" get fluxinstance flux -o jsonpath='{.metadata.annotations.fluxcd\.controlplane\.io/reconcile}'
}

# --- contexts -------------------------------------------------------------
fx contexts-none get --all-contexts --context-selector 'qa-*'
check "--context-selector matching nothing is an error naming the flag" exit_and 1 \
  err_has contexts-none '^error: --context-selector: no context matches "qa-\*"$'
fx contexts-unknown get --context "$main" --context nowhere
check "an unknown --context is an error naming it" exit_and 1 \
  err_has contexts-unknown '^error: --context: no context named "nowhere" in the kubeconfig$'
fx contexts-delete delete "$instance" --context "$main" --context east
check "delete refuses several --context" exit_and 1 err_has contexts-delete '^error: --context: given 2 times'

# --- check: one table with a CLUSTER column, the unreachable one failed ---
fleet check check "$instance" --all-contexts
check "check --all-contexts: the unreachable cluster fails, exit 1" exit_and 1 \
  row check gone 'failed +'
check "check: the local cluster's checks pass" row check "$main" 'ok +'
check "check: the second cluster's checks in the table" \
  out_has check '^east +ok +permissions '
check "check: the distribution rendered once for the fleet" \
  test "$(grep -c '^using distribution ' "$work/check.err")" = 1

# --- diff: blocks by context, the summary, -o json keyed by context -------
fleet diff diff "$instance" "${three[@]}"
check "diff: 2 when a cluster failed" exit_is 2
check "diff: the block of each reachable cluster" out_has diff "^# east$"
check "diff: the summary's changed clusters" row diff east 'changed +[0-9]+ objects would change'
check "diff: the unreachable cluster failed, naming why" row diff gone 'failed +.*127\.0\.0\.1:1'
check "diff: the progress prefixed by context" err_has diff '^gone: error: '
fleet diff-json diff "$instance" "${three[@]}" -o json
check "diff -o json: one object keyed by context" exit_and 2 json_keys diff-json "$main" east gone

# --- apply to all three, without waiting ---------------------------------
fleet apply apply "$instance" "${three[@]}" --no-wait --timeout 3m
check "apply: exit 1 as one cluster failed" exit_is 1
check "apply: the others applied" row apply east 'ok +'
check "apply: the local cluster applied" row apply "$main" 'ok +'
check "apply: the unreachable one failed" row apply gone 'failed +'
check "apply: progress lines prefixed by context" err_has apply '^east: Namespace/flux-system created'
check "apply: the instance on the second cluster" \
  test -n "$(k --context east -n "$ns" get fluxinstance flux -o name 2>/dev/null)"

# --- diff of what is applied: nothing would change -----------------------
fleet diff-same diff "$instance" --all-contexts --context-selector '[fe]*'
check "diff --context-selector: nothing changes on the applied clusters, exit 0" \
  exit_and 0 row diff-same east 'ok +0 objects would change'

# --- get: one table with a CLUSTER column ---------------------------------
kwait 240 --context "$main" -n "$ns" wait fluxinstance flux --for=condition=Ready >/dev/null 2>&1 ||
  fx main-ready apply "$instance" --context "$main" --distribution-artifact "$dist" --timeout 4m
fx get get --all-contexts
check "get: exit 1 as one cluster is unreachable" exit_is 1
check "get: the header" out_has get '^CLUSTER +READY +FLUX +REVISION +LAST RECONCILED +MESSAGE$'
check "get: the local cluster's instance, Ready with its Flux version" row get "$main" 'True +v2\.9\.[0-9]+ +v2\.9'
check "get: the unreachable cluster's row says why" row get gone '- +- +- +- +.*127\.0\.0\.1:1'
fx get-json get "${three[@]}" -o json
check "get -o json: one object keyed by context" exit_and 1 json_keys get-json "$main" east gone

# --- suspend, resume, wait ------------------------------------------------
fx suspend suspend --context "$main" --context east
check "suspend: both clusters, exit 0" exit_and 0 row suspend east 'ok +.*reconciliation suspended'
check "suspend: the annotation on the second cluster" test "$(annotation east)" = disabled
fx resume resume --context "$main" --context east --no-wait
check "resume --no-wait: both, exit 0" exit_and 0 row resume "$main" 'ok +.*reconciliation resumed at'
check "resume: the annotation on the second cluster" test "$(annotation east)" = enabled
fx wait wait --context "$main" --timeout 4m
check "wait on one context: as before" exit_and 0 err_has wait '^waiting for .*flux to be ready$'

# --- report -----------------------------------------------------------------
fx report report "${three[@]}" -o json
check "report -o json: one object keyed by context, exit 1" exit_and 1 json_keys report "$main" east gone

# --- a canary rollout in batches of one -----------------------------------
# The local cluster becomes Ready; the second never does (no controllers):
# the rollout stops there, the unreachable one is never tried.
fleet canary apply "$instance" "${three[@]}" --batch-size 1 --stop-on-failure --timeout 20s
check "canary: exit 1" exit_is 1
check "canary: the first batch Ready" row canary "$main" 'ok +'
check "canary: the second batch failed its wait" row canary east 'failed +'
check "canary: no batch after the failed one" row canary gone 'skipped +'
check "canary: the third cluster was not reached" bash -c "! grep -q '^gone: ' '$work/canary.err'"
summary
