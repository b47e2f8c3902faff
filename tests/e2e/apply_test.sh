#!/usr/bin/env bash
# End-to-end test of `fluxopctl apply` and `fluxopctl diff` against a real
# control plane (scripts/cluster: etcd, kube-apiserver, controller-manager,
# scheduler, kwok nodes). Every outcome is checked with kubectl, never with
# fluxopctl's word alone, and against two renderings of each instance:
# fluxopctl's `build` (the revision, the status) and the upstream
# `flux-operator build instance` (the objects and images: an oracle
# independent of fluxopctl; see e2e_upstream_render in tests/e2e/lib.sh).
#
#   tests/e2e/apply_test.sh [BIN [ROOT [CASE...]]]
#
# BIN defaults to ROOT/build/fluxopctl, ROOT to this checkout. The Flux
# distribution is $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else ROOT/../shared/
# flux-distribution (passed as --distribution-artifact). Uses the cluster in
# $KUBECONFIG when set (then the API server outage cannot run: a skip, a
# failure in CI; the Flux installation is removed at the end); otherwise
# brings one up in a state directory of its own ($APPLY_TEST_CLUSTER_DIR,
# default a temporary one) and downs it on exit. APPLY_TEST_BUDGET (seconds,
# default 1000, within ctest's 1200) bounds the whole run: a case that would
# start after it is a failure. E2E_KEEP=1 keeps the work directory
# (fluxopctl's stdout and stderr of each run, NAME.out and NAME.err, the
# renderings).
#
# Prints `ok NAME`, `FAIL NAME: reason` (with the end of fluxopctl's stderr)
# and `skip NAME: reason`, then `N passed, M failed[, K skipped]`. Exit 0 when
# nothing failed, 1 otherwise, 77 (1 in CI) when the test cannot run at all
# (no kubectl, no fluxopctl, no distribution, no cluster binaries, no
# upstream CLI). A fluxopctl without apply or diff, or whose build fails, is
# a failure.
#
# The cases, in the order of a full run (the CASE arguments, or $CASES, run
# some of them: tests/e2e/lib.sh). Each starts by setting up the state it
# needs (lib.sh's given: an install of its instance, or no_flux): in a full run that is the state the
# previous case left, and the set-up is a re-apply that changes nothing.
#   invalid_empty      11a invalid instances on the empty cluster write nothing
#   diff_empty         13a diff -o json on the empty cluster: every object to create, exit 1
#   install            1   install Flux 2.8 with four controllers (and the operator's events)
#   diff_clean         2   diff right after the install: nothing to change (-o json: unchanged)
#   reapply            3   a re-apply rewrites nothing, in at most 20 API requests
#   dry_run            12  --dry-run=server prints the change set and what would change, and
#                          changes nothing; so does a bare --dry-run (client)
#   unprivileged       10  a user without RBAC rights: forbidden, nothing changed
#   invalid_installed  11b invalid instances on the installed cluster write nothing
#   prune              4   removing helm-controller prunes its Deployment and CRDs (diff -o json first)
#   upgrade            5   the upgrade to Flux 2.9 (diff --version first, -o json too)
#   downgrade          13b a downgrade refused: a BuildFailed event on the instance
#   concurrent         7   two applies at once: the second waits for the first's Lease
#   lock_timeout       7b  an apply that cannot take the Lease gives up after --lock-timeout
#   killed             8   an apply killed with SIGKILL midway, then applied again
#   no_events          14  a caller who may not create Events: the apply succeeds, one warning
#   outage             9   the API server stopped for 5 s midway: ridden out (own cluster only;
#                          nodes cordoned)
# The take-over of a kubectl-made installation (case 6) needs a cluster
# without Flux: tests/e2e/takeover_test.sh.
set -uo pipefail

root=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${1:-$root/build/fluxopctl}
shift $(($# < 2 ? $# : 2))
instances=$root/tests/e2e/instances
cluster=$root/scripts/cluster
dist=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
budget=${APPLY_TEST_BUDGET:-1000}
# fluxopctl's own limit on waiting for a rollout.
apply_timeout=3m

# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
all_cases=(invalid_empty diff_empty install diff_clean reapply dry_run unprivileged invalid_installed prune
  upgrade downgrade concurrent lock_timeout killed no_events outage)
e2e_select_cases "$@"

own_cluster=0
work=$(mktemp -d)
started=$SECONDS

say() { echo "apply_test: $*" >&2; }

[ -x "$bin" ] || skip_test "no fluxopctl at $bin (run scripts/setup)"
command -v kubectl >/dev/null || skip_test "kubectl is not installed"
[ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"

# On a cluster of the caller's ($KUBECONFIG), the Flux installation the
# test made is removed (on its own, the cluster goes).
e2e_cleanup_hook() {
  [ "$own_cluster" -eq 1 ] || [ -z "${KUBECONFIG:-}" ] || uninstall >/dev/null 2>&1
}
on_exit e2e_cleanup

# The commands under test: their absence is a regression, not a skip.
commands_listed() {
  local help command
  help=$("$bin" --help 2>&1) || { echo "fluxopctl --help failed"; return 1; }
  for command in apply diff; do
    grep -Eq "^[[:space:]]+$command[[:space:]]" <<<"$help" || { echo "--help lists no $command command"; return 1; }
  done
}
check "fluxopctl --help lists apply and diff" commands_listed || { summary; exit; }

# in_budget NAME: false (and a failure) once the run's budget is spent.
in_budget() {
  if [ $((SECONDS - started)) -ge "$budget" ]; then
    fail "$1" "not run: the test's time budget (${budget}s) is spent"
    return 1
  fi
}

# snapshot: every Flux object of the cluster with its resourceVersion (the
# cluster-scoped ones whose name says flux, and what is in flux-system).
snapshot() {
  local types=deployments.apps,services,serviceaccounts,configmaps,secrets,resourcequotas,networkpolicies.networking.k8s.io,leases.coordination.k8s.io,roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io
  k get customresourcedefinition fluxinstances.fluxcd.controlplane.io >/dev/null 2>&1 &&
    types+=,fluxinstances.fluxcd.controlplane.io
  local cs nsd
  cs=$(k get namespaces,customresourcedefinitions,clusterroles,clusterrolebindings -o jsonpath="$listing") || return 1
  nsd=$(k -n "$ns" get "$types" -o jsonpath="$listing") || return 1
  { grep -i flux <<<"$cs"; echo "$nsd"; } | to_ids | sort
}
# settled FILE: two snapshots 2 s apart alike (the second in FILE).
settled() {
  local prev
  prev=$(snapshot) || return 1
  sleep 2
  snapshot >"$1" || return 1
  [ "$(cat "$1")" = "$prev" ]
}
# stable_snapshot NAME FILE: a snapshot the controllers have stopped
# changing, in FILE; a failure of NAME when the state does not settle within
# 3 minutes.
stable_snapshot() {
  wait_until 180 settled "$2" || { fail "$1" "the Flux objects did not stop changing within 180s"; return 1; }
}
# same_snapshot BEFORE: the cluster still looks like BEFORE.
same_snapshot() {
  local now
  now=$(snapshot) || { echo "kubectl could not list the Flux objects"; return 1; }
  if [ "$now" != "$(cat "$1")" ]; then
    echo "the cluster changed (< before, > after):"
    diff <(cat "$1") <(echo "$now") | grep '^[<>]' | head -n 12
    return 1
  fi
}

diff_() {
  local name=$1 file=$2
  shift 2
  local flags
  mapfile -t flags < <(common_flags)
  fx "$name" diff "$file" "${flags[@]}" "$@"
}
revision_is() {
  local applied attempted
  applied=$(fi_get '{.status.lastAppliedRevision}')
  attempted=$(fi_get '{.status.lastAttemptedRevision}')
  [[ $applied =~ ^v${1//./\\.}\.[0-9]+@sha256:[0-9a-f]{64}$ ]] ||
    { echo "lastAppliedRevision '$applied' is not v$1.Z@sha256:..."; return 1; }
  [ "$attempted" = "$applied" ] || { echo "lastAttemptedRevision '$attempted' != lastAppliedRevision"; return 1; }
}
exit_at_least() {
  [ "$rc" -ge "$1" ] || { echo "exit $rc, not $1 or more"; return 1; }
}
# diff_json_holds NAME CONDITION: $work/NAME.out is one `diff -o json`
# document for which the Python expression CONDITION holds; in it, `doc` is
# the document, `obj(NAME)` the entry of the object NAME (None when absent),
# `actions` the set of every object's action.
diff_json_holds() {
  python3 - "$work/$1.out" "$2" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit(f"stdout is not one JSON document: {e}")
def obj(name):
    return next((o for o in doc["objects"] if o["object"] == name), None)
actions = {o["action"] for o in doc["objects"]}
if not eval(sys.argv[2]):
    summary = [(o["object"], o["action"]) for o in doc["objects"] if o["action"] != "unchanged"][:8]
    sys.exit(f"not so: {sys.argv[2]}; changed {doc['changed']}, first changes {summary}")
PY
}
# event_says REASON REGEX: an Event on the FluxInstance with REASON, from the
# operator's component, whose message matches REGEX.
event_says() {
  local found
  found=$(k -n "$ns" get events --field-selector "involvedObject.kind=FluxInstance,involvedObject.name=flux,reason=$1" \
    -o jsonpath='{range .items[*]}{.source.component}|{.message}{"\n"}{end}') || return 1
  grep -Eq -- "^flux-operator\|$2" <<<"$found" ||
    { echo "no $1 event from flux-operator matching '$2'; there are: $(tr '\n' ';' <<<"$found")"; return 1; }
}
# ---------------------------------------------------------------------------
# The cluster

if [ -n "${KUBECONFIG:-}" ]; then
  unprivileged=${UNPRIVILEGED_KUBECONFIG:-$(dirname "$KUBECONFIG")/unprivileged.kubeconfig}
  if k get namespace "$ns" >/dev/null 2>&1 ||
    k get customresourcedefinition fluxinstances.fluxcd.controlplane.io >/dev/null 2>&1; then
    skip_test "the cluster in \$KUBECONFIG already has Flux ($ns or the FluxInstance CRD); this test installs and removes its own"
  fi
else
  e2e_cluster_up "${APPLY_TEST_CLUSTER_DIR:-$work/cluster}"
  own_cluster=1
  unprivileged=$FLUXOPCTL_CLUSTER_DIR/unprivileged.kubeconfig
  say "cluster up in $((SECONDS - started))s"
fi

# Removes the Flux installation (developer mode, at the end): the
# FluxInstance (finalizers dropped: no operator runs to honour them) and its
# CRD, Flux's cluster-scoped objects, the namespace.
uninstall() {
  if k get customresourcedefinition fluxinstances.fluxcd.controlplane.io >/dev/null 2>&1; then
    k -n "$ns" patch fluxinstance flux --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
    kwait 60 -n "$ns" delete fluxinstance flux --ignore-not-found || return 1
    kwait 120 delete customresourcedefinition fluxinstances.fluxcd.controlplane.io --ignore-not-found || return 1
  fi
  kwait 120 delete customresourcedefinitions,clusterroles,clusterrolebindings -l app.kubernetes.io/part-of=flux \
    --ignore-not-found || return 1
  kwait 180 delete namespace "$ns" --ignore-not-found
}

# no_flux: no Flux on the cluster (uninstalled when there is).
no_flux() {
  nothing_installed >/dev/null 2>&1 && return 0
  uninstall >"$work/uninstall.out" 2>&1 || { echo "uninstalling Flux failed: $(tail -n 1 "$work/uninstall.out")"; return 1; }
}

rendered=1
for f in flux-2.8-four flux-2.8-no-helm flux-2.9-no-helm flux-2.9-four flux-2.9-six flux-2.9-four-medium; do
  render "$f" "$instances/$f.yaml" || rendered=0
done
e2e_upstream_stop
[ "$rendered" = 1 ] || { summary; exit; }
A=$instances/flux-2.8-four.yaml
B=$instances/flux-2.8-no-helm.yaml
C=$instances/flux-2.9-no-helm.yaml
D=$instances/flux-2.9-four.yaml
E=$instances/flux-2.9-six.yaml
M=$instances/flux-2.9-four-medium.yaml
invalid=("$instances/invalid-unknown-field.yaml" "$instances/invalid-version.yaml")

# ---------------------------------------------------------------------------
# 11a. Invalid instances on the empty cluster: exit 1, stdout empty, not even
# the FluxInstance CRD or the namespace is created.
nothing_installed() {
  ! k get customresourcedefinition fluxinstances.fluxcd.controlplane.io 2>/dev/null &&
    ! k get namespace "$ns" 2>/dev/null
}
invalid_writes_nothing() {
  local file before=$work/before.snap
  wait_until 180 settled "$before" || { echo "the Flux objects did not stop changing within 180s"; return 1; }
  for file in "${invalid[@]}"; do
    apply invalid "$file"
    exit_is 1 || { echo "(for $(basename "$file"))"; return 1; }
    stdout_empty invalid || return 1
    same_snapshot "$before" || return 1
    grep -q . "$work/invalid.err" || { echo "no error on stderr for $(basename "$file")"; return 1; }
  done
}
case_invalid_empty() {
  in_budget "11a invalid instances on an empty cluster" || return
  given "11a invalid instances on an empty cluster: given no Flux" no_flux || return
  check "11a invalid instances on an empty cluster: exit 1, stdout empty, nothing written" invalid_writes_nothing
  check "11a no FluxInstance CRD and no $ns namespace after them" nothing_installed
}

# ---------------------------------------------------------------------------
# 13a. diff -o json on the empty cluster: every object, the FluxInstance
# among them, to be created; exit 1 as for the text.
case_diff_empty() {
  in_budget "13a diff -o json on an empty cluster" || return
  given "13a diff -o json on an empty cluster: given no Flux" no_flux || return
  diff_ diff-empty-json "$A" -o json
  check "13a diff -o json on an empty cluster: exit 1" exit_is 1
  check "13a diff -o json on an empty cluster: every object to create, the FluxInstance too" diff_json_holds \
    diff-empty-json 'actions == {"create"} and doc["changed"] == len(doc["objects"]) and obj("FluxInstance/flux-system/flux") and obj("Deployment/flux-system/source-controller")["fields"] == []'
}

# ---------------------------------------------------------------------------
# 1. Install Flux 2.8 with four controllers.
columns() {
  local out
  out=$(k -n "$ns" get fluxinstance 2>&1) || { echo "kubectl get fluxinstance: $out"; return 1; }
  echo "$out" | head -n 1 | grep -q 'READY.*STATUS.*REVISION' ||
    { echo "no READY/STATUS/REVISION columns:"; echo "$out"; return 1; }
  echo "$out" | grep -Eq '^flux .*True .*v2\.8\.' ||
    { echo "the row does not say True and v2.8:"; echo "$out"; return 1; }
}
case_install() {
  in_budget "1 install" || return
  given "1 install: given no Flux" no_flux || return
  apply install "$A"
  check "1 install: apply exits 0" exit_is 0
  check "1 install: change set has the Deployments created" out_has install \
    '^Deployment/flux-system/source-controller created$' '^Deployment/flux-system/kustomize-controller created$' \
    '^Deployment/flux-system/helm-controller created$' '^Deployment/flux-system/notification-controller created$'
  check "1 install: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.8-four "$A"
  check "1 install: lastAppliedRevision v2.8.x@sha256" revision_is 2.8
  check "1 install: kubectl get fluxinstance shows Ready/Status/Revision" columns
  # The events the daemon and the operator record, from the one-shot apply.
  check "1 install: a Progressing event says the revision is installed" event_says Progressing 'Installing revision v2\.8\.'
  check "1 install: a ReconciliationSucceeded event" event_says ReconciliationSucceeded 'Reconciliation finished in '
  check "1 install: an OutdatedVersion event says Flux 2.8 is outdated" event_says OutdatedVersion \
    'Flux v2\.8\.[0-9]+ is outdated, the latest stable version is v'
}

# ---------------------------------------------------------------------------
# 2. diff right after: nothing to change.
case_diff_clean() {
  in_budget "2 diff after install" || return
  given "2 diff after install: given flux-2.8-four" install "$A" || return
  diff_ diff-clean "$A"
  check "2 diff after install: exit 0" exit_is 0
  check "2 diff after install: stdout empty" stdout_empty diff-clean
  diff_ diff-clean-json "$A" -o json
  check "2 diff -o json after install: exit 0" exit_is 0
  check "2 diff -o json after install: every object unchanged, the FluxInstance too" diff_json_holds \
    diff-clean-json 'actions == {"unchanged"} and doc["changed"] == 0 and obj("FluxInstance/flux-system/flux")'
}

# ---------------------------------------------------------------------------
# 3. A re-apply rewrites nothing: no resourceVersion of an inventory object
# changes; with -v every object is `unchanged`.
rv_unchanged() {
  local after
  after=$(live "$work/flux-2.8-four.yaml") || return 1
  [ "$after" = "$(cat "$work/rv.before")" ] ||
    { echo "changed (< before, > after):"; diff "$work/rv.before" <(echo "$after") | grep '^[<>]'; return 1; }
}
# requests_at_most NAME N: the run's "(K API requests)" says K <= N.
requests_at_most() {
  local count
  count=$(sed -n 's/.*(\([0-9]*\) API requests).*/\1/p' "$work/$1.err" | tail -n 1)
  [ -n "$count" ] && [ "$count" -le "$2" ] || { echo "${count:-no} API requests, more than $2"; return 1; }
}
only_unchanged() {
  out_has reapply '^Deployment/flux-system/source-controller unchanged$' || return 1
  ! grep -E ' (created|configured|deleted)$' "$work/reapply.out" || { echo "^ changes reported"; return 1; }
}
case_reapply() {
  in_budget "3 re-apply" || return
  given "3 re-apply: given flux-2.8-four" install "$A" || return
  stable_snapshot "3 re-apply" "$work/settled.snap" || return
  live "$work/flux-2.8-four.yaml" >"$work/rv.before" 2>/dev/null
  apply reapply "$A" -v
  check "3 re-apply: apply -v exits 0" exit_is 0
  check "3 re-apply: no resourceVersion changed" rv_unchanged
  check "3 re-apply: -v says unchanged, nothing created/configured/deleted" only_unchanged
  # As the apply benchmark counts them (--no-wait): discovery, the start's
  # round, the Lease, the objects' round, the status, the events.
  apply reapply-count "$A" --no-wait
  check "3 re-apply: at most 20 API requests" requests_at_most reapply-count 20
}

# ---------------------------------------------------------------------------
# 12. --dry-run=server: the change set, and nothing changes.
json_names() {
  exit_is 0 || return 1
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/$1.out" 2>&1 ||
    { echo "stdout is not one JSON document:"; head -c 300 "$work/$1.out"; return 1; }
  grep -q "$2" "$work/$1.out" || { echo "the JSON does not name $2"; return 1; }
}
case_dry_run() {
  in_budget "12 dry run" || return
  given "12 dry run: given flux-2.8-four" install "$A" || return
  stable_snapshot "12 dry run" "$work/before.snap" || return
  apply dryrun "$B" --dry-run=server
  check "12 dry run: exit 0" exit_is 0
  check "12 dry run: the change set names helm-controller deleted" out_has dryrun \
    '^Deployment/flux-system/helm-controller deleted'
  dry_run_said() {
    grep -qE '^Dry run: [0-9]+ objects? would change.*; nothing was written' "$work/dryrun.err" &&
      ! grep -q 'Reconciliation finished' "$work/dryrun.err" || { tail -n 3 "$work/dryrun.err"; return 1; }
  }
  check "12 dry run: ends with what would change, never Reconciliation finished" dry_run_said
  # kubectl's bare --dry-run (client): the next argument is not its value.
  apply dryrun-json "$B" --dry-run -o json
  check "12 dry run: -o json is one JSON document naming helm-controller" json_names dryrun-json helm-controller
  check "12 dry run: nothing changed in the cluster" same_snapshot "$work/before.snap"
}

# ---------------------------------------------------------------------------
# 10. A user RBAC forbids everything: exit 1, `forbidden` naming an object,
# nothing changed.
forbidden_named() {
  grep -i forbidden "$work/forbidden.err" | grep -Eqi 'flux|controller|customresourcedefinition' ||
    { echo "no line on stderr says forbidden and names an object"; return 1; }
}
case_unprivileged() {
  if [ ! -f "$unprivileged" ]; then
    skip "10 unprivileged" "no $unprivileged"
    return
  fi
  in_budget "10 unprivileged" || return
  given "10 unprivileged: given flux-2.8-four" install "$A" || return
  stable_snapshot "10 unprivileged" "$work/before.snap" || return
  fx forbidden apply "$B" --distribution-artifact "$dist" --kubeconfig "$unprivileged" --timeout "$apply_timeout"
  check "10 unprivileged: exit 1" exit_is 1
  check "10 unprivileged: stderr says forbidden and names an object" forbidden_named
  fx forbidden-diff diff "$B" --distribution-artifact "$dist" --kubeconfig "$unprivileged"
  check "10 unprivileged: diff exits 2 or more" exit_at_least 2
  check "10 unprivileged: nothing changed" same_snapshot "$work/before.snap"
}

# ---------------------------------------------------------------------------
# 11b. Invalid instances on the installed cluster change nothing.
case_invalid_installed() {
  in_budget "11b invalid instances on the installed cluster" || return
  given "11b invalid instances on the installed cluster: given flux-2.8-four" install "$A" || return
  check "11b invalid instances on the installed cluster: exit 1, stdout empty, nothing written" invalid_writes_nothing
}

# ---------------------------------------------------------------------------
# 4. Without helm-controller: diff says so, apply prunes its Deployment and
# its CRDs.
case_prune() {
  in_budget "4 prune" || return
  given "4 prune: given flux-2.8-four" install "$A" || return
  diff_ diff-prune "$B"
  check "4 prune: diff exits 1" exit_is 1
  check "4 prune: diff mentions helm-controller" out_has diff-prune 'helm-controller'
  diff_ diff-prune-json "$B" -o json
  check "4 prune: diff -o json exits 1" exit_is 1
  check "4 prune: diff -o json: helm-controller deleted, its CRD taking nothing (no HelmRelease), the instance's components updated" diff_json_holds \
    diff-prune-json 'obj("Deployment/flux-system/helm-controller")["action"] == "delete" and obj("CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io")["action"] == "delete" and obj("CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io")["takes"] == [] and [f["path"] for f in obj("FluxInstance/flux-system/flux")["fields"]] == ["/spec/components"] and obj("Deployment/flux-system/source-controller")["action"] == "unchanged"'
  apply prune "$B"
  check "4 prune: apply exits 0" exit_is 0
  check "4 prune: change set has the deletions" out_has prune \
    '^Deployment/flux-system/helm-controller deleted$' '^CustomResourceDefinition/.*helmreleases\.helm\.toolkit\.fluxcd\.io deleted$'
  check "4 prune: Deployment helm-controller is NotFound" gone deployment/helm-controller
  check "4 prune: CRD helmreleases.helm.toolkit.fluxcd.io is NotFound" \
    gone customresourcedefinition/helmreleases.helm.toolkit.fluxcd.io
  check "4 prune: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.8-no-helm "$B"
}

# ---------------------------------------------------------------------------
# 5. The upgrade to Flux 2.9.
new_images() {
  [ "$(live_images)" = "$(images "$work/$1.yaml")" ] ||
    { echo "images are $(live_images | tr '\n' ' '), not $(images "$work/$1.yaml" | tr '\n' ' ')"; return 1; }
}
case_upgrade() {
  in_budget "5 upgrade" || return
  given "5 upgrade: given flux-2.8-no-helm" install "$B" || return
  diff_ diff-upgrade "$B" --version 2.9.x
  new=$(images "$work/flux-2.9-no-helm.yaml" | grep source-controller)
  old=$(images "$work/flux-2.8-no-helm.yaml" | grep source-controller)
  check "5 upgrade: diff --version 2.9.x exits 1" exit_is 1
  check "5 upgrade: diff shows the image change" out_has diff-upgrade "^-.*image: ${old//./\\.}\$" "^\+.*image: ${new//./\\.}\$"
  diff_ diff-upgrade-json "$B" --version 2.9.x -o json
  check "5 upgrade: diff -o json --version 2.9.x exits 1" exit_is 1
  check "5 upgrade: diff -o json: source-controller's image, before and after" diff_json_holds diff-upgrade-json \
    "obj('Deployment/flux-system/source-controller')['action'] == 'update' and {'path': '/spec/template/spec/containers/0/image', 'before': '$old', 'after': '$new'} in obj('Deployment/flux-system/source-controller')['fields']"
  apply upgrade "$C"
  check "5 upgrade: apply exits 0" exit_is 0
  check "5 upgrade: the Deployments run the 2.9 images" new_images flux-2.9-no-helm
  check "5 upgrade: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-no-helm "$C"
  check "5 upgrade: lastAppliedRevision v2.9.x@sha256" revision_is 2.9
}

# ---------------------------------------------------------------------------
# 13b. A failing apply records its failure as the operator does: a downgrade
# to 2.8 is refused, a BuildFailed event on the instance says why.
case_downgrade() {
  in_budget "13b downgrade refused" || return
  given "13b downgrade refused: given flux-2.9-no-helm" install "$C" || return
  apply downgrade "$A"
  check "13b downgrade refused: apply exits 1" exit_is 1
  check "13b downgrade refused: a BuildFailed event says why" event_says BuildFailed \
    'build failed: downgrading from v2\.9\.[0-9]+ to v2\.8\.[0-9]+ is not supported'
}

# ---------------------------------------------------------------------------
# 7. Two applies at once: the second waits for the Lease the first holds,
# takes it once the first released it, and both succeed. So that they surely
# overlap, the nodes are cordoned: the first (which adds helm-controller)
# waits for its rollout while holding the Lease; the second starts then, and
# the nodes are uncordoned once it says it waits. A watch on the Lease
# records every holder in turn.
lease=fluxopctl-flux
# says FILE TEXT PID: FILE has a line with TEXT, or the process PID is over.
says() { grep -qF -- "$2" "$1" || ! running "$3"; }
first_holds() {
  [ -n "$h1" ] && [ "$h1" = "$(hostname)/$(pgrep -P "$p1")" ] ||
    { echo "the Lease's holder is '$h1', not the first apply ($(hostname)/$(pgrep -P "$p1"))"; return 1; }
}
second_waited() {
  grep -qxF "waiting for Lease/$ns/$lease, held by $h1" "$work/c2.err" ||
    { echo "the second apply never said it waited for the Lease held by $h1"; return 1; }
}
# The holders the watch saw, repeats and releases dropped: the first, then
# one other.
handed_over() {
  local holders
  holders=$(grep . "$work/holders" | uniq | tr '\n' ' ')
  [[ $holders =~ ^"$h1"\ ([^ ]+)\ $ ]] && [ "${BASH_REMATCH[1]}" != "$h1" ] ||
    { echo "the Lease's holders were: $holders (want $h1, then the second apply)"; return 1; }
}
both_succeeded() {
  [ "$e1" = 0 ] && [ "$e2" = 0 ] || { echo "exits $e1 and $e2"; tail -n 3 "$work/c1.err" "$work/c2.err"; return 1; }
}
case_concurrent() {
  in_budget "7 concurrent applies" || return
  given "7 concurrent applies: given flux-2.9-no-helm" install "$C" || return
  mapfile -t flags < <(common_flags)
  timeout -k 5 600 kubectl -n "$ns" get lease "$lease" --watch -o jsonpath='{.spec.holderIdentity}{"\n"}' \
    >"$work/holders" 2>"$work/watch.err" &
  pw=$!
  cordon
  XDG_CACHE_HOME=$work/cache timeout -k 5 "$run_limit" "$bin" apply "$D" "${flags[@]}" --timeout "$apply_timeout" \
    >"$work/c1.out" 2>"$work/c1.err" &
  p1=$!
  e1=0 e2=0 h1=
  show "$work/c1.err"
  if ! wait_until 180 says "$work/c1.err" "waiting for the components" "$p1" || ! running "$p1"; then
    fail "7 concurrent applies" "the first apply did not wait for its rollout (nodes cordoned)"
  else
    h1=$(lease_holder)
    check "7 concurrent applies: the first apply holds the Lease while it waits" first_holds
    XDG_CACHE_HOME=$work/cache timeout -k 5 "$run_limit" "$bin" apply "$D" "${flags[@]}" --timeout "$apply_timeout" \
      --lock-timeout 4m >"$work/c2.out" 2>"$work/c2.err" &
    p2=$!
    wait_until 120 says "$work/c2.err" "waiting for Lease/" "$p2"
    show "$work/c2.err"
    check "7 concurrent applies: the second apply waits for the Lease the first holds" second_waited
  fi
  uncordon
  wait "$p1" || e1=$?
  [ -z "${p2:-}" ] || wait "$p2" || e2=$?
  kill "$pw" 2>/dev/null
  wait "$pw" 2>/dev/null
  check "7 concurrent applies: both exit 0" both_succeeded
  check "7 concurrent applies: the Lease went from the first apply to the second" handed_over
  check "7 concurrent applies: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-four "$D"
}

# ---------------------------------------------------------------------------
# 7b. The Lease held by an apply elsewhere that is still renewing it: an
# apply with --lock-timeout 3s gives up, naming the holder, within a minute.
held_elsewhere() {
  cat <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: $lease
  namespace: $ns
spec:
  holderIdentity: apply-test-elsewhere/1
  leaseDurationSeconds: 120
  acquireTime: $(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
  renewTime: $(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
YAML
}
lock_refused() {
  [ "$rc" != 124 ] || { echo "the apply still waited after 60s"; return 1; }
  exit_is 1 || return 1
  grep -qF "Lease/$ns/$lease: held by apply-test-elsewhere/1" "$work/lock-held.err" ||
    { echo "stderr does not name the Lease and its holder"; return 1; }
}
case_lock_timeout() {
  in_budget "7b lock timeout" || return
  given "7b lock timeout: given flux-2.9-four" install "$D" || return
  if held_elsewhere | k apply --server-side --force-conflicts -f - >"$work/lease.out" 2>&1; then
    run_limit=60 apply lock-held "$D" --lock-timeout 3s
    check "7b lock timeout: Lease $lease held elsewhere: --lock-timeout 3s exits 1 within 60s naming the holder" lock_refused
    k -n "$ns" delete lease "$lease" >/dev/null
  else
    show "$work/lease.out"
    fail "7b lock timeout" "kubectl could not take Lease $lease"
  fi
}

# ---------------------------------------------------------------------------
# 8. SIGKILL midway through an apply that adds the image automation
# controllers, then apply again: the state of a clean apply. So that the kill
# surely comes midway, the nodes are cordoned (the new controllers cannot
# start, the apply waits for their rollout); the kill comes once it waits.
# Then the cluster is half-applied: the new CRDs and Deployments exist, the
# FluxInstance's new generation is not Ready.
half_applied() {
  local ready
  k get customresourcedefinition imagerepositories.image.toolkit.fluxcd.io >/dev/null 2>&1 ||
    { echo "the new CRD imagerepositories.image.toolkit.fluxcd.io does not exist"; return 1; }
  k -n "$ns" get deployment image-reflector-controller >/dev/null 2>&1 ||
    { echo "the new Deployment image-reflector-controller does not exist"; return 1; }
  ready=$(fi_get '{.status.conditions[?(@.type=="Ready")].status}')
  [ "$ready" = Unknown ] || { echo "FluxInstance Ready is '$ready', not Unknown (in progress)"; return 1; }
}
killed() {
  [ "$ek" = 137 ] || { echo "the apply exited $ek, not 137 (killed)"; return 1; }
}
case_killed() {
  in_budget "8 SIGKILL midway" || return
  given "8 SIGKILL midway: given flux-2.9-four" install "$D" || return
  mapfile -t flags < <(common_flags)
  cordon
  XDG_CACHE_HOME=$work/cache "$bin" apply "$E" "${flags[@]}" --timeout "$apply_timeout" \
    >"$work/killed.out" 2>"$work/killed.err" &
  pk=$!
  show "$work/killed.err"
  if ! wait_until 180 says "$work/killed.err" "waiting for the components" "$pk" || ! running "$pk"; then
    kill -9 "$pk" 2>/dev/null
    ek=0
    wait "$pk" || ek=$?
    fail "8 SIGKILL midway" "the apply was over (exit $ek) before the kill, or never waited for its rollout"
  else
    kill -9 "$pk"
    ek=0
    # (bash's "Killed" job notice is not news here)
    { wait "$pk"; } 2>/dev/null || ek=$?
    say "8: killed at: $(grep . "$work/killed.err" | tail -n 1)"
    check "8 SIGKILL midway: the kill hit the running apply" killed
    check "8 SIGKILL midway: half-applied: new CRD and Deployment, the new generation not Ready" half_applied
  fi
  uncordon
  apply after-kill "$E"
  check "8 SIGKILL midway: the next apply exits 0" exit_is 0
  check "8 SIGKILL midway: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-six "$E"
}

# ---------------------------------------------------------------------------
# 14. A caller whose RBAC allows all an apply writes but Events (a service
# account's token): the apply succeeds; one warning says the events are not
# recorded, whatever number it tried.
no_events_user() {
  k apply -f - >/dev/null <<'YAML' || return 1
apiVersion: v1
kind: ServiceAccount
metadata: {name: fluxopctl-e2e-no-events, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: fluxopctl-e2e-no-events}
rules:
- apiGroups: [""]
  resources: [namespaces, serviceaccounts, services, configmaps, secrets, resourcequotas, pods, persistentvolumeclaims]
  verbs: ["*"]
- apiGroups: [apps, rbac.authorization.k8s.io, apiextensions.k8s.io, networking.k8s.io, coordination.k8s.io,
    fluxcd.controlplane.io, policy, admissionregistration.k8s.io]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: fluxopctl-e2e-no-events}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: fluxopctl-e2e-no-events}
subjects: [{kind: ServiceAccount, name: fluxopctl-e2e-no-events, namespace: default}]
YAML
  local token
  token=$(k -n default create token fluxopctl-e2e-no-events --duration 1h) || return 1
  k config view --raw --minify >"$work/no-events.kubeconfig" &&
    kubectl --kubeconfig "$work/no-events.kubeconfig" config set-credentials no-events --token "$token" >/dev/null &&
    kubectl --kubeconfig "$work/no-events.kubeconfig" config set-context --current --user no-events >/dev/null
}
warned_once() {
  [ "$(grep -c '^warning: events not recorded: .*forbidden' "$work/no-events.err")" = 1 ] ||
    { echo "not one warning that events are not recorded:"; grep -i event "$work/no-events.err" | head -n 3; return 1; }
}
case_no_events() {
  in_budget "14 no RBAC for Events" || return
  given "14 no RBAC for Events: given flux-2.9-six" install "$E" || return
  if ! no_events_user; then
    fail "14 no RBAC for Events" "the service account, its role or its token could not be made"
  else
    fx no-events apply "$E" --kubeconfig "$work/no-events.kubeconfig" --distribution-artifact "$dist" --timeout "$apply_timeout"
    check "14 no RBAC for Events: apply exits 0" exit_is 0
    check "14 no RBAC for Events: one warning on stderr, naming the refusal" warned_once
  fi
}

# ---------------------------------------------------------------------------
# 9. The API server stops for about 5 s midway through an apply (a restart):
# the apply rides it out, retrying until its deadline, and finishes. So that
# the outage surely comes while the apply runs, the nodes are cordoned and
# the instance resized: the new pods cannot be scheduled and the apply waits
# for its rollout; the API server stops once the apply has written the new
# pod templates (a Deployment's generation moved), and the nodes take pods
# once it is back. (An API server never reached fails in seconds: the kube
# client's unit tests.)
generation() { k -n "$ns" get deployment source-controller -o jsonpath='{.metadata.generation}' 2>/dev/null; }
template_changed() { [ "$(generation)" != "$gen" ] || ! running "$po"; }
case_outage() {
  if [ "$own_cluster" -eq 0 ]; then
    skip "9 API server outage" "not our cluster"
    return
  fi
  in_budget "9 API server outage" || return
  given "9 API server outage: given flux-2.9-six" install "$E" || return
  mapfile -t flags < <(common_flags)
  cordon
  t0=$SECONDS
  rc=0
  gen=$(generation)
  XDG_CACHE_HOME=$work/cache timeout -k 5 "$run_limit" "$bin" apply "$M" "${flags[@]}" --timeout "$apply_timeout" \
    >"$work/outage.out" 2>"$work/outage.err" &
  po=$!
  if ! wait_until 180 template_changed || ! running "$po"; then
    kill "$po" 2>/dev/null
    wait "$po" || rc=$?
    show "$work/outage.err"
    fail "9 API server outage" "the apply was over (exit $rc) before the outage, or wrote no pod template"
    wait_until 120 uncordon || say "9: uncordon failed"
  else
    "$cluster" stop-apiserver >/dev/null 2>"$work/stop.err" || say "stop-apiserver: $(tail -n 1 "$work/stop.err")"
    sleep 5 # the outage itself, not a wait for a condition
    "$cluster" start-apiserver >/dev/null 2>"$work/start.err" || say "start-apiserver: $(tail -n 1 "$work/start.err")"
    wait_until 120 uncordon || say "9: uncordon failed"
    wait "$po" || rc=$?
    show "$work/outage.err"
    check "9 API server outage of 5 s: the apply rides it out and exits 0" exit_is 0
    check "9 API server outage: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-four-medium "$M"
  fi
  say "9 took $((SECONDS - t0))s"
}

e2e_run_cases
say "ran in $((SECONDS - started))s"
summary
