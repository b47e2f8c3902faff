#!/usr/bin/env bash
# End-to-end test of `fluxopctl apply` and `fluxopctl diff` against a real
# control plane (scripts/cluster: etcd, kube-apiserver, controller-manager,
# scheduler, kwok nodes). Every outcome is checked with kubectl, never with
# fluxopctl's word alone.
#
#   tests/e2e/apply_test.sh [BIN [ROOT]]
#
# BIN defaults to ROOT/build/fluxopctl, ROOT to this checkout. The Flux
# distribution is $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else ROOT/../shared/
# flux-distribution (passed as --distribution-artifact). Uses the cluster in
# $KUBECONFIG when set (then the API server outage is skipped and the Flux
# installation is removed at the end); otherwise brings one up in a state
# directory of its own ($APPLY_TEST_CLUSTER_DIR, default a temporary one) and
# downs it on exit. APPLY_TEST_BUDGET (seconds, default 540) bounds the whole
# run: cases that would start after it are skipped. APPLY_TEST_KEEP=1 keeps
# the work directory (fluxopctl's stdout and stderr of each run, NAME.out and
# NAME.err, the rendered objects).
#
# Prints `ok NAME`, `FAIL NAME: reason` (with the end of fluxopctl's stderr)
# and `skip NAME: reason`, then `N passed, M failed[, K skipped]`. Exit 0 when
# nothing failed, 1 otherwise, 77 when the test cannot run at all (no
# kubectl, no fluxopctl or no apply command yet, no distribution, no
# cluster binaries).
#
# The cases, in the order they run (the order keeps the run short: each
# starts from the state the previous one left):
#   11a invalid instances on the empty cluster write nothing
#   1   install Flux 2.8 with four controllers
#   2   diff right after the install: nothing to change
#   3   a re-apply rewrites nothing
#   12  --dry-run=server prints the change set and changes nothing
#   10  a user without RBAC rights: forbidden, nothing changed
#   11b invalid instances on the installed cluster write nothing
#   4   removing helm-controller prunes its Deployment and CRDs
#   5   the upgrade to Flux 2.9 (diff --version first)
#   7   two applies at once (the Lease lock)
#   7b  an apply that cannot take the Lease gives up after --lock-timeout
#   8   an apply killed with SIGKILL midway, then applied again
#   9   the API server stopped midway (own cluster only; nodes cordoned)
#   6   taking over an installation made with kubectl apply --server-side
#
# Case 6: CRDs are cluster-scoped, a FluxInstance must be named flux, and the
# Flux controllers watch every namespace, so a cluster holds one Flux: a
# second instance in another namespace would share (and fight over) the
# CRDs. The take-over therefore runs on a cluster from which the previous
# installation was removed entirely (the FluxInstance and its CRD, the
# flux-system namespace, Flux's CRDs and cluster roles), as on a fresh
# cluster, which costs less than a second cluster.
set -uo pipefail

root=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${1:-$root/build/fluxopctl}
instances=$root/tests/e2e/instances
cluster=$root/scripts/cluster
dist=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
ns=flux-system
budget=${APPLY_TEST_BUDGET:-540}
# fluxopctl's own limits, and the hard limit on any one fluxopctl run.
apply_timeout=2m
run_limit=200

# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"

passed=0 failed=0 skipped=0
own_cluster=0
work=$(mktemp -d)
started=$SECONDS

say() { echo "apply_test: $*" >&2; }
skip_all() {
  say "skipped: $*"
  rm -rf "$work"
  exit 77
}

[ -x "$bin" ] || skip_all "no fluxopctl at $bin (run scripts/setup)"
command -v kubectl >/dev/null || skip_all "kubectl is not installed"
help=$("$bin" --help 2>/dev/null)
grep -Eq '^[[:space:]]+apply[[:space:]]' <<<"$help" || skip_all "$bin has no apply command yet"
has_diff=1
grep -Eq '^[[:space:]]+diff[[:space:]]' <<<"$help" || has_diff=0
[ -d "$dist/flux" ] || skip_all "no Flux distribution at $dist"

cleanup() {
  trap - EXIT INT TERM
  # Whatever still runs in the background (a concurrent or killed apply).
  local pid
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null; done
  if [ "$own_cluster" -eq 1 ]; then
    e2e_cluster_down
  elif [ -n "${KUBECONFIG:-}" ]; then
    uninstall >/dev/null 2>&1
  fi
  if [ -n "${APPLY_TEST_KEEP:-}" ]; then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------
# Reporting

# The file whose end a failure shows: the stderr of the last fluxopctl run,
# whose path fx leaves in $work/shown (checks run in subshells).
show() { echo "$1" >"$work/shown"; }
pass() {
  passed=$((passed + 1))
  echo "ok $1"
}
fail() {
  failed=$((failed + 1))
  echo "FAIL $1: $2"
  local shown
  shown=$(cat "$work/shown" 2>/dev/null)
  if [ -n "$shown" ] && [ -s "$shown" ]; then
    tail -n 8 "$shown" | sed 's/^/  | /'
  fi
  return 0
}
skip() {
  skipped=$((skipped + 1))
  echo "skip $1: $2"
}

# check NAME FUNCTION ARGS...: FUNCTION prints why it fails on stdout and
# returns non-zero; its first line is the reason, the rest is shown below.
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

# in_budget NAME: false (and a skip line) once the run's budget is spent.
in_budget() {
  if [ $((SECONDS - started)) -ge "$budget" ]; then
    skip "$1" "the test's time budget (${budget}s) is spent"
    return 1
  fi
}

# ---------------------------------------------------------------------------
# fluxopctl and kubectl

# fx NAME ARGS...: runs fluxopctl, stdout in $work/NAME.out, stderr in
# $work/NAME.err, the exit code in $rc (124 when it overran $run_limit).
rc=0
fx() {
  local name=$1
  shift
  rc=0
  timeout -k 5 "$run_limit" "$bin" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  show "$work/$name.err"
}
common_flags() { printf '%s\n' --kubeconfig "$KUBECONFIG" --distribution-artifact "$dist"; }
# apply NAME FILE [FLAGS...] and diff NAME FILE [FLAGS...]
apply() {
  local name=$1 file=$2
  shift 2
  local flags
  mapfile -t flags < <(common_flags)
  fx "$name" apply "$file" "${flags[@]}" --timeout "$apply_timeout" "$@"
}
diff_() {
  local name=$1 file=$2
  shift 2
  local flags
  mapfile -t flags < <(common_flags)
  fx "$name" diff "$file" "${flags[@]}" "$@"
}

k() { timeout -k 5 90 kubectl --request-timeout=30s "$@"; }

# One line per object: "<namespace>_<name>_<group>_<kind> <resourceVersion>",
# the inventory's id format.
listing='{range .items[*]}{.metadata.namespace}|{.metadata.name}|{.apiVersion}|{.kind}|{.metadata.resourceVersion}{"\n"}{end}'
to_ids() {
  awk -F'|' 'NF >= 5 { g = $3; if (index(g, "/")) sub(/\/.*/, "", g); else g = ""; print $1 "_" $2 "_" g "_" $4 " " $5 }'
}

# live FILE: the live objects a rendered FILE names, "id resourceVersion",
# sorted; fails (naming them) when some do not exist.
live() {
  local out
  out=$(k get -f "$1" -o jsonpath="$listing" 2>"$work/live.err") || {
    grep -i 'not found\|error' "$work/live.err" | head -n 5 >&2
    echo "$out" | to_ids | sort
    return 1
  }
  echo "$out" | to_ids | sort
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
# stable_snapshot FILE: a snapshot the controllers have stopped changing
# (two in a row alike, at most 20 s).
stable_snapshot() {
  local prev
  prev=$(snapshot)
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 2
    snapshot >"$1"
    [ "$(cat "$1")" = "$prev" ] && return 0
    prev=$(cat "$1")
  done
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

fi_get() { k -n "$ns" get fluxinstance flux -o jsonpath="$1" 2>&1; }
inventory() {
  k -n "$ns" get fluxinstance flux -o jsonpath='{range .status.inventory.entries[*]}{.id}{"\n"}{end}' | sort
}
# render NAME FILE: fluxopctl build of FILE into $work/NAME.yaml, its
# revision into $work/NAME.revision.
render() {
  "$bin" build "$2" -v --distribution-artifact "$dist" >"$work/$1.yaml" 2>"$work/$1.build.err" ||
    skip_all "fluxopctl build $2 failed: $(tail -n 1 "$work/$1.build.err")"
  sed -n 's/^revision: //p' "$work/$1.build.err" >"$work/$1.revision"
}
images() { grep -o 'image: .*' "$1" | sed 's/^image: //' | sort; }
deployments() { awk '/^kind: Deployment$/ { d = 1 } /^---/ { d = 0 } d && /^  name: / { print $2 }' "$1"; }

# ---------------------------------------------------------------------------
# Assertions (each prints why it fails)

# state_is NAME FILE: the cluster holds exactly what $work/NAME.yaml renders:
# every object exists, the inventory lists them and nothing else, every
# Deployment is rolled out and Available, the FluxInstance is Ready for its
# current generation, has the file's version, and its status the build's
# revision and images.
state_is() {
  local rendered=$work/$1.yaml file=$2 ids inv d why=
  ids=$(live "$rendered" 2>"$work/state.err") || {
    echo "rendered objects missing:"
    sed 's/.*(NotFound): \(.*\) not found$/\1/' "$work/state.err"
    return 1
  }
  inv=$(inventory) || { echo "no FluxInstance flux in $ns"; return 1; }
  if [ "$(cut -d' ' -f1 <<<"$ids")" != "$inv" ]; then
    echo "the inventory is not the rendered objects (< rendered, > inventory):"
    diff <(cut -d' ' -f1 <<<"$ids") <(echo "$inv") | grep '^[<>]' | head -n 10
    return 1
  fi
  for d in $(deployments "$rendered"); do
    k -n "$ns" rollout status "deployment/$d" --timeout=60s >/dev/null 2>&1 ||
      why+="deployment/$d not rolled out; "
    [ "$(k -n "$ns" get deployment "$d" -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ] ||
      why+="deployment/$d not Available; "
  done
  [ -z "$why" ] || { echo "$why"; return 1; }
  instance_ready "$file" || return 1
  as_built "$1"
}
# as_built NAME: the FluxInstance's status has the revision and the
# component images of `fluxopctl build` of the same file.
as_built() {
  local applied components
  applied=$(fi_get '{.status.lastAppliedRevision}')
  [ "$applied" = "$(cat "$work/$1.revision")" ] ||
    { echo "lastAppliedRevision '$applied', fluxopctl build -v says '$(cat "$work/$1.revision")'"; return 1; }
  components=$(fi_get '{range .status.components[*]}{.repository}:{.tag}{"\n"}{end}' | sort)
  [ "$components" = "$(images "$work/$1.yaml")" ] ||
    { echo ".status.components are $(echo "$components" | tr '\n' ' '), not the rendered images"; return 1; }
}
instance_ready() {
  local ready gen obs version want
  ready=$(fi_get '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}')
  [ "${ready%% *}" = True ] || { echo "FluxInstance Ready is '$ready', not True"; return 1; }
  gen=$(fi_get '{.metadata.generation}')
  obs=$(fi_get '{.status.observedGeneration}')
  [ "$gen" = "$obs" ] || { echo "FluxInstance observedGeneration $obs, generation $gen"; return 1; }
  version=$(fi_get '{.spec.distribution.version}')
  want=$(sed -n 's/^ *version: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$1" | head -n 1)
  [ "$version" = "$want" ] || { echo "FluxInstance .spec.distribution.version is '$version', not '$want'"; return 1; }
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
exit_is() {
  [ "$rc" = "$1" ] || { echo "exit $rc, not $1"; return 1; }
}
# stdout_has NAME REGEX...: each REGEX matches a line of $work/NAME.out.
stdout_has() {
  local name=$1 re
  shift
  for re; do
    grep -Eq -- "$re" "$work/$name.out" || {
      echo "stdout has no line matching '$re'; it is:"
      head -n 10 "$work/$name.out"
      return 1
    }
  done
}
stdout_empty() {
  [ ! -s "$work/$1.out" ] || { echo "stdout is not empty:"; head -n 5 "$work/$1.out"; return 1; }
}
# not_found RESOURCE NAME [NAMESPACED]: kubectl says NotFound, within 60 s.
not_found() {
  local where=()
  [ -z "${3:-}" ] || where=(-n "$ns")
  k "${where[@]}" wait --for=delete "$1/$2" --timeout=60s >/dev/null 2>&1
  if k "${where[@]}" get "$1" "$2" >/dev/null 2>"$work/nf.err"; then
    echo "$1/$2 still exists"
    return 1
  fi
  grep -q NotFound "$work/nf.err" || { echo "kubectl get $1/$2: $(cat "$work/nf.err")"; return 1; }
}

# ---------------------------------------------------------------------------
# The cluster

if [ -n "${KUBECONFIG:-}" ]; then
  unprivileged=${UNPRIVILEGED_KUBECONFIG:-$(dirname "$KUBECONFIG")/unprivileged.kubeconfig}
  if k get namespace "$ns" >/dev/null 2>&1 ||
    k get customresourcedefinition fluxinstances.fluxcd.controlplane.io >/dev/null 2>&1; then
    skip_all "the cluster in \$KUBECONFIG already has Flux ($ns or the FluxInstance CRD); this test installs and removes its own"
  fi
else
  e2e_cluster_up "${APPLY_TEST_CLUSTER_DIR:-$work/cluster}"
  own_cluster=1
  unprivileged=$FLUXOPCTL_CLUSTER_DIR/unprivileged.kubeconfig
  say "cluster up in $((SECONDS - started))s"
fi

# Removes the Flux installation: the FluxInstance (finalizers dropped: no
# operator runs to honour them) and its CRD, Flux's cluster-scoped objects,
# the namespace.
uninstall() {
  if k get customresourcedefinition fluxinstances.fluxcd.controlplane.io >/dev/null 2>&1; then
    k -n "$ns" patch fluxinstance flux --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
    k -n "$ns" delete fluxinstance flux --ignore-not-found --timeout=30s || return 1
    k delete customresourcedefinition fluxinstances.fluxcd.controlplane.io --ignore-not-found --timeout=60s || return 1
  fi
  k delete customresourcedefinitions,clusterroles,clusterrolebindings -l app.kubernetes.io/part-of=flux \
    --ignore-not-found --timeout=60s || return 1
  k delete namespace "$ns" --ignore-not-found --timeout=90s
}

for f in flux-2.8-four flux-2.8-no-helm flux-2.9-no-helm flux-2.9-four flux-2.9-six flux-2.9-four-medium; do
  render "$f" "$instances/$f.yaml"
done
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
  stable_snapshot "$before"
  for file in "${invalid[@]}"; do
    apply invalid "$file"
    exit_is 1 || { echo "(for $(basename "$file"))"; return 1; }
    stdout_empty invalid || return 1
    same_snapshot "$before" || return 1
    grep -q . "$work/invalid.err" || { echo "no error on stderr for $(basename "$file")"; return 1; }
  done
}
if in_budget "11a invalid instances on an empty cluster"; then
  check "11a invalid instances on an empty cluster: exit 1, stdout empty, nothing written" invalid_writes_nothing
  check "11a no FluxInstance CRD and no $ns namespace after them" nothing_installed
fi

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
if in_budget "1 install"; then
  apply install "$A"
  check "1 install: apply exits 0" exit_is 0
  check "1 install: change set has the Deployments created" stdout_has install \
    '^Deployment/flux-system/source-controller created$' '^Deployment/flux-system/kustomize-controller created$' \
    '^Deployment/flux-system/helm-controller created$' '^Deployment/flux-system/notification-controller created$'
  check "1 install: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.8-four "$A"
  check "1 install: lastAppliedRevision v2.8.x@sha256" revision_is 2.8
  check "1 install: kubectl get fluxinstance shows Ready/Status/Revision" columns
fi

# ---------------------------------------------------------------------------
# 2. diff right after: nothing to change.
if [ "$has_diff" -eq 0 ]; then
  skip "2 diff after install" "fluxopctl has no diff command"
elif in_budget "2 diff after install"; then
  diff_ diff-clean "$A"
  check "2 diff after install: exit 0" exit_is 0
  check "2 diff after install: stdout empty" stdout_empty diff-clean
fi

# ---------------------------------------------------------------------------
# 3. A re-apply rewrites nothing: no resourceVersion of an inventory object
# changes; with -v every object is `unchanged`.
rv_unchanged() {
  local after
  after=$(live "$work/flux-2.8-four.yaml") || return 1
  [ "$after" = "$(cat "$work/rv.before")" ] ||
    { echo "changed (< before, > after):"; diff "$work/rv.before" <(echo "$after") | grep '^[<>]'; return 1; }
}
only_unchanged() {
  stdout_has reapply '^Deployment/flux-system/source-controller unchanged$' || return 1
  ! grep -E ' (created|configured|deleted)$' "$work/reapply.out" || { echo "^ changes reported"; return 1; }
}
if in_budget "3 re-apply"; then
  stable_snapshot "$work/settled.snap"
  live "$work/flux-2.8-four.yaml" >"$work/rv.before" 2>/dev/null
  apply reapply "$A" -v
  check "3 re-apply: apply -v exits 0" exit_is 0
  check "3 re-apply: no resourceVersion changed" rv_unchanged
  check "3 re-apply: -v says unchanged, nothing created/configured/deleted" only_unchanged
fi

# ---------------------------------------------------------------------------
# 12. --dry-run=server: the change set, and nothing changes.
json_names() {
  exit_is 0 || return 1
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/$1.out" 2>&1 ||
    { echo "stdout is not one JSON document:"; head -c 300 "$work/$1.out"; return 1; }
  grep -q "$2" "$work/$1.out" || { echo "the JSON does not name $2"; return 1; }
}
if in_budget "12 dry run"; then
  stable_snapshot "$work/before.snap"
  apply dryrun "$B" --dry-run=server
  check "12 dry run: exit 0" exit_is 0
  check "12 dry run: the change set names helm-controller deleted" stdout_has dryrun \
    '^Deployment/flux-system/helm-controller deleted'
  if command -v python3 >/dev/null; then
    apply dryrun-json "$B" --dry-run=server -o json
    check "12 dry run: -o json is one JSON document naming helm-controller" json_names dryrun-json helm-controller
  fi
  if ! check "12 dry run: nothing changed in the cluster" same_snapshot "$work/before.snap"; then
    # Case 4 wants the objects the dry run should have left alone.
    say "12: the dry run changed the cluster; applying $(basename "$A") again for case 4"
    apply restore "$A"
  fi
fi

# ---------------------------------------------------------------------------
# 10. A user RBAC forbids everything: exit 1, `forbidden` naming an object,
# nothing changed.
forbidden_named() {
  grep -i forbidden "$work/forbidden.err" | grep -Eqi 'flux|controller|customresourcedefinition' ||
    { echo "no line on stderr says forbidden and names an object"; return 1; }
}
if [ ! -f "$unprivileged" ]; then
  skip "10 unprivileged" "no $unprivileged"
elif in_budget "10 unprivileged"; then
  stable_snapshot "$work/before.snap"
  fx forbidden apply "$B" --distribution-artifact "$dist" --kubeconfig "$unprivileged" --timeout "$apply_timeout"
  check "10 unprivileged: exit 1" exit_is 1
  check "10 unprivileged: stderr says forbidden and names an object" forbidden_named
  if [ "$has_diff" -eq 1 ]; then
    fx forbidden-diff diff "$B" --distribution-artifact "$dist" --kubeconfig "$unprivileged"
    check "10 unprivileged: diff exits 2 or more" exit_at_least 2
  fi
  check "10 unprivileged: nothing changed" same_snapshot "$work/before.snap"
fi

# ---------------------------------------------------------------------------
# 11b. Invalid instances on the installed cluster change nothing.
if in_budget "11b invalid instances on the installed cluster"; then
  check "11b invalid instances on the installed cluster: exit 1, stdout empty, nothing written" invalid_writes_nothing
fi

# ---------------------------------------------------------------------------
# 4. Without helm-controller: diff says so, apply prunes its Deployment and
# its CRDs.
if in_budget "4 prune"; then
  if [ "$has_diff" -eq 1 ]; then
    diff_ diff-prune "$B"
    check "4 prune: diff exits 1" exit_is 1
    check "4 prune: diff mentions helm-controller" stdout_has diff-prune 'helm-controller'
  fi
  apply prune "$B"
  check "4 prune: apply exits 0" exit_is 0
  check "4 prune: change set has the deletions" stdout_has prune \
    '^Deployment/flux-system/helm-controller deleted$' '^CustomResourceDefinition/.*helmreleases\.helm\.toolkit\.fluxcd\.io deleted$'
  check "4 prune: Deployment helm-controller is NotFound" not_found deployment helm-controller namespaced
  check "4 prune: CRD helmreleases.helm.toolkit.fluxcd.io is NotFound" not_found customresourcedefinition \
    helmreleases.helm.toolkit.fluxcd.io
  check "4 prune: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.8-no-helm "$B"
fi

# ---------------------------------------------------------------------------
# 5. The upgrade to Flux 2.9.
new_images() {
  local live_images
  live_images=$(k -n "$ns" get deployments -o jsonpath='{range .items[*]}{.spec.template.spec.containers[*].image}{"\n"}{end}' | sort)
  [ "$live_images" = "$(images "$work/$1.yaml")" ] ||
    { echo "images are $(echo "$live_images" | tr '\n' ' '), not $(images "$work/$1.yaml" | tr '\n' ' ')"; return 1; }
}
if in_budget "5 upgrade"; then
  if [ "$has_diff" -eq 1 ]; then
    diff_ diff-upgrade "$B" --version 2.9.x
    new=$(images "$work/flux-2.9-no-helm.yaml" | grep source-controller)
    old=$(images "$work/flux-2.8-no-helm.yaml" | grep source-controller)
    check "5 upgrade: diff --version 2.9.x exits 1" exit_is 1
    check "5 upgrade: diff shows the image change" stdout_has diff-upgrade "^-.*image: ${old//./\\.}\$" "^\+.*image: ${new//./\\.}\$"
  fi
  apply upgrade "$C"
  check "5 upgrade: apply exits 0" exit_is 0
  check "5 upgrade: the Deployments run the 2.9 images" new_images flux-2.9-no-helm
  check "5 upgrade: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-no-helm "$C"
  check "5 upgrade: lastAppliedRevision v2.9.x@sha256" revision_is 2.9
fi

# ---------------------------------------------------------------------------
# 7. Two applies at once: both succeed (one waited for the Lease) or the
# second says it could not take the lock; the end state is Ready. A Lease in
# flux-system is seen held while they run.
concurrent_outcome() {
  local e1=$1 e2=$2
  [ "$e1" = 0 ] && [ "$e2" = 0 ] && return 0
  if [ "$e1" = 0 ] && [ "$e2" = 1 ] && grep -Eqi 'lock|lease' "$work/c2.err"; then return 0; fi
  if [ "$e2" = 0 ] && [ "$e1" = 1 ] && grep -Eqi 'lock|lease' "$work/c1.err"; then return 0; fi
  echo "exits $e1 and $e2 (a failure must name the lock)"
  tail -n 3 "$work/c1.err" "$work/c2.err"
  return 1
}
lease_seen() {
  grep -q '=.' "$work/leases" || { echo "no Lease with a holder seen in $ns"; return 1; }
}
if in_budget "7 concurrent applies"; then
  mapfile -t flags < <(common_flags)
  timeout -k 5 "$run_limit" "$bin" apply "$D" "${flags[@]}" --timeout "$apply_timeout" >"$work/c1.out" 2>"$work/c1.err" &
  p1=$!
  sleep 0.3
  timeout -k 5 "$run_limit" "$bin" apply "$D" "${flags[@]}" --timeout "$apply_timeout" >"$work/c2.out" 2>"$work/c2.err" &
  p2=$!
  : >"$work/leases"
  while kill -0 "$p1" 2>/dev/null || kill -0 "$p2" 2>/dev/null; do
    k -n "$ns" get leases.coordination.k8s.io -o jsonpath='{range .items[*]}{.metadata.name}={.spec.holderIdentity}{"\n"}{end}' \
      >>"$work/leases" 2>/dev/null
    sleep 0.5
  done
  e1=0 e2=0
  wait "$p1" || e1=$?
  wait "$p2" || e2=$?
  show "$work/c2.err"
  check "7 concurrent applies: both exit 0, or one fails naming the lock" concurrent_outcome "$e1" "$e2"
  say "7: exits $e1 and $e2"
  check "7 concurrent applies: a Lease in $ns was held meanwhile" lease_seen
  check "7 concurrent applies: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-four "$D"
fi

# ---------------------------------------------------------------------------
# 7b. The Lease held by an apply elsewhere that is still renewing it: an
# apply with --lock-timeout 3s gives up, saying so, well within 30 s.
held_elsewhere() {
  cat <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: $1
  namespace: $ns
spec:
  holderIdentity: apply-test-elsewhere/1
  leaseDurationSeconds: 120
  acquireTime: $(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
  renewTime: $(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
YAML
}
lock_refused() {
  [ "$rc" != 124 ] || { echo "the apply still waited after ${run_limit}s"; return 1; }
  exit_is 1 || return 1
  [ "$took" -le 30 ] || { echo "it gave up after ${took}s"; return 1; }
  grep -Eqi 'lock|lease|held' "$work/lock-held.err" || { echo "stderr does not name the lock"; return 1; }
}
lease=$(grep -m 1 '=.' "$work/leases" 2>/dev/null | cut -d= -f1)
if [ -z "$lease" ]; then
  skip "7b lock timeout" "no Lease was seen in case 7"
elif in_budget "7b lock timeout"; then
  if held_elsewhere "$lease" | k apply --server-side --force-conflicts -f - >"$work/lease.out" 2>&1; then
    t0=$SECONDS
    apply lock-held "$D" --lock-timeout 3s
    took=$((SECONDS - t0))
    check "7b lock timeout: Lease $lease held elsewhere: --lock-timeout 3s exits 1 naming the lock" lock_refused
    say "7b: $(grep . "$work/lock-held.err" | tail -n 1)"
    k -n "$ns" delete lease "$lease" >/dev/null
  else
    show "$work/lease.out"
    fail "7b lock timeout" "kubectl could not take Lease $lease"
  fi
fi

# ---------------------------------------------------------------------------
# 8. SIGKILL midway through an apply that adds the image automation
# controllers, then apply again: the state of a clean apply. The kill comes
# once the apply has written something new (the imagerepositories CRD exists:
# CRDs go first, the Deployments later), about a second in, at most 5 s.
if in_budget "8 SIGKILL midway"; then
  mapfile -t flags < <(common_flags)
  "$bin" apply "$E" "${flags[@]}" --timeout "$apply_timeout" >"$work/killed.out" 2>"$work/killed.err" &
  pk=$!
  t0=$SECONDS
  until [ $((SECONDS - t0)) -ge 5 ] || ! kill -0 "$pk" 2>/dev/null ||
    k get customresourcedefinition imagerepositories.image.toolkit.fluxcd.io >/dev/null 2>&1; do
    sleep 0.2
  done
  if kill -0 "$pk" 2>/dev/null; then
    kill -9 "$pk"
    wait "$pk" 2>/dev/null
    say "8: killed after $((SECONDS - t0))s, at: $(grep . "$work/killed.err" | tail -n 1)"
  else
    wait "$pk"
    say "8: the apply was over (exit $?) before the kill"
  fi
  apply after-kill "$E"
  check "8 SIGKILL midway: the next apply exits 0" exit_is 0
  check "8 SIGKILL midway: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-six "$E"
fi

# ---------------------------------------------------------------------------
# 9. The API server stops midway through an apply: the apply fails within
# bounded time with a one-line error; once it is back, an apply succeeds. So
# that the outage surely comes while the apply runs, the nodes are cordoned
# and the instance resized: the new pods cannot be scheduled and the apply
# waits for its rollout; the API server stops once the apply has written the
# new pod templates (a Deployment's generation moved).
outage_failure() {
  local last
  [ "$rc" != 124 ] || { echo "the apply still ran after ${run_limit}s"; return 1; }
  exit_is 1 || return 1
  last=$(grep . "$work/outage.err" | tail -n 1)
  [[ $last == error:* ]] || { echo "the last stderr line is not an error: $last"; return 1; }
  [ "$(grep -c '^error' "$work/outage.err")" = 1 ] || { echo "more than one error line"; return 1; }
}
generation() { k -n "$ns" get deployment source-controller -o jsonpath='{.metadata.generation}' 2>/dev/null; }
if [ "$own_cluster" -eq 0 ]; then
  skip "9 API server outage" "not our cluster"
elif in_budget "9 API server outage"; then
  mapfile -t flags < <(common_flags)
  mapfile -t nodes < <(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
  k cordon "${nodes[@]}" >/dev/null
  t0=$SECONDS
  rc=0
  gen=$(generation)
  timeout -k 5 "$run_limit" "$bin" apply "$M" "${flags[@]}" --timeout "$apply_timeout" >"$work/outage.out" 2>"$work/outage.err" &
  po=$!
  until [ $((SECONDS - t0)) -ge 60 ] || ! kill -0 "$po" 2>/dev/null || [ "$(generation)" != "$gen" ]; do
    sleep 0.2
  done
  if ! kill -0 "$po" 2>/dev/null; then
    wait "$po" || rc=$?
    show "$work/outage.err"
    fail "9 API server outage" "the apply was over (exit $rc) before the outage"
  else
    "$cluster" stop-apiserver >/dev/null 2>"$work/stop.err" || say "stop-apiserver: $(tail -n 1 "$work/stop.err")"
    t_stop=$SECONDS
    wait "$po" || rc=$?
    took=$((SECONDS - t_stop))
    show "$work/outage.err"
    check "9 API server outage: the apply exits 1 with an error line (after ${took}s)" outage_failure
    say "9: $(grep . "$work/outage.err" | tail -n 1)"
    "$cluster" start-apiserver >/dev/null 2>"$work/start.err" || say "start-apiserver: $(tail -n 1 "$work/start.err")"
  fi
  k uncordon "${nodes[@]}" >/dev/null
  apply after-outage "$M"
  check "9 API server outage: once it is back, apply exits 0" exit_is 0
  check "9 API server outage: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-four-medium "$M"
  say "9 took $((SECONDS - t0))s"
fi

# ---------------------------------------------------------------------------
# 6. Take over an installation made with `kubectl apply --server-side` of
# `fluxopctl build` output, on a cluster without Flux (see the header).
replicasets() {
  k -n "$ns" get replicasets.apps -o jsonpath='{range .items[*]}{.metadata.name} {.spec.replicas}{"\n"}{end}' | sort
}
kubectl_owns_nothing() {
  local out owners
  out=$(k get -f "$work/flux-2.9-four.yaml" --show-managed-fields \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name}:{range .metadata.managedFields[*]} {.manager}{end}{"\n"}{end}') ||
    { echo "kubectl get -f failed"; return 1; }
  owners=$(grep -E ' kubectl( |$)' <<<"$out")
  [ -z "$owners" ] || {
    echo "kubectl still manages fields of $(wc -l <<<"$owners") objects:"
    cut -d: -f1 <<<"$owners" | tr '\n' ' ' | fold -s -w 110
    return 1
  }
}
same_replicasets() {
  local now
  now=$(replicasets)
  [ "$now" = "$(cat "$work/rs.before")" ] ||
    { echo "the ReplicaSets changed (< before, > after):"; diff "$work/rs.before" <(echo "$now") | grep '^[<>]'; return 1; }
}
if in_budget "6 take-over"; then
  if ! uninstall >"$work/uninstall.out" 2>&1; then
    show "$work/uninstall.out"
    fail "6 take-over" "could not remove the installation for it"
  elif ! k apply --server-side -f "$work/flux-2.9-four.yaml" >"$work/kubectl-apply.out" 2>&1; then
    show "$work/kubectl-apply.out"
    fail "6 take-over" "kubectl apply --server-side of the build output failed"
  elif ! k -n "$ns" rollout status deployment --timeout=60s >"$work/kubectl-apply.out" 2>&1; then
    show "$work/kubectl-apply.out"
    fail "6 take-over" "the kubectl-applied Deployments did not roll out"
  else
    replicasets >"$work/rs.before"
    apply takeover "$D"
    check "6 take-over: apply exits 0" exit_is 0
    check "6 take-over: the kubectl field manager owns no field any more" kubectl_owns_nothing
    check "6 take-over: no pod template changed (same ReplicaSets)" same_replicasets
    check "6 take-over: the objects, inventory, Deployments Available, Ready=True" state_is flux-2.9-four "$D"
  fi
fi

say "ran in $((SECONDS - started))s"
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
