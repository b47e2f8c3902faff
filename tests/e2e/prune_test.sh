#!/usr/bin/env bash
# End-to-end tests of what a prune takes (docs/prune.md), on a
# local control plane (scripts/cluster) of their own, with the user's
# resources in other namespaces (HelmReleases, ImageRepositories,
# Kustomizations, held by their controllers' finalizers). Each case sets up
# what it needs from whatever state the cluster is in, so that any of them
# runs alone:
#   crds        dropping components keeps the CRDs whose resources remain:
#               diff (text, -o json) and check name them with the counts per
#               namespace, apply says so (stderr, Ready message, Event);
#               --prune-crds deletes them, their resources released first
#   terminating a CRD held Terminating by a resource's finalizer: get, check
#               and diff name it, apply fails naming it (HealthCheckFailed)
#   sync        a renamed sync: the new Kustomization is created first, the
#               old one pruned without its effects (its finalizer honoured
#               by a stand-in for kustomize-controller: what it applied
#               stays)
#   delete      delete names the context, the instance and what it removes,
#               needs --yes without a terminal, asks on one; --dry-run=server
#               asks nothing
#   inventory   a lost inventory: diff finds the stale objects by their
#               labels, delete removes every labelled object
#   labels      labels kubectl put on the namespace stay through applies
#   downgrade   check, diff and apply refuse a downgrade in the same words
#
#   tests/e2e/prune_test.sh BIN ROOT [CASE...]
#
# The distribution is $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else ROOT/../shared/
# flux-distribution. Prints `ok NAME` / `FAIL NAME: reason` and closes with
# `N passed, M failed`. A skip (exit 77, a failure when CI=true) only when
# kubectl, the distribution or the cluster binaries are missing.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
instances=$root/tests/e2e/instances
run_limit=240
apply_timeout=3m
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

finalizer_pid=

all_cases=(crds terminating sync delete inventory labels downgrade)
e2e_select_cases "$@"

# ---------------------------------------------------------------------------
# Helpers

not_terminating() {  # RESOURCE NAME [-n NS]: exists, without a deletionTimestamp
  local at
  at=$(k get "$@" -o jsonpath='{.metadata.deletionTimestamp}' 2>&1) || { echo "$* does not exist: $at"; return 1; }
  [ -z "$at" ] || { echo "$* is being deleted (since $at)"; return 1; }
}
terminating() { [ -n "$(k get "$@" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]; }
absent_now() { ! k get "$@" >/dev/null 2>&1; }
exit_and_err() {  # CODE NAME REGEX: exit CODE, and a stderr line matching
  exit_is "$1" || return 1
  err_has "$2" "$3"
}
exit_and_out() {  # CODE NAME REGEX: exit CODE, and a stdout line matching
  exit_is "$1" || return 1
  out_has "$2" "$3"
}
# json_holds NAME EXPR: a Python expression over `doc` ($work/NAME.out as
# JSON) and obj(NAME), the entry of that object, holds.
json_holds() {
  python3 - "$work/$1.out" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
def obj(name):
    for o in doc["objects"]:
        if o["object"] == name:
            return o
    return {}
if not eval(sys.argv[2]):
    print("does not hold:", sys.argv[2])
    print(json.dumps([o for o in doc["objects"] if o.get("action") not in ("unchanged",)], indent=1)[:1500])
    sys.exit(1)
PY
}
ready_message_has() {
  local got
  got=$(fi_get '{.status.conditions[?(@.type=="Ready")].message}')
  grep -Eq -- "$1" <<<"$got" || { echo "the Ready message is '$got'"; return 1; }
}
event_has() {  # REASON REGEX: an Event on the instance with the reason and a message matching
  local got
  got=$(k -n "$ns" get events --field-selector "involvedObject.name=flux,reason=$1" \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}')
  grep -Eq -- "$2" <<<"$got" || { echo "no $1 event matching '$2'; they are: $got"; return 1; }
}

# The user's resources, each held by its controller's finalizer (nothing
# runs the controllers here: the finalizers stay until removed).
user_namespaces() { printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n' apps team-b | k apply -f - >/dev/null; }
helmrelease() {  # NAMESPACE NAME
  k apply -f - >/dev/null <<YAML
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: $2, namespace: $1, finalizers: [finalizers.fluxcd.io]}
spec:
  interval: 10m
  chart:
    spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}
YAML
}
imagerepository() {  # NAMESPACE NAME
  k apply -f - >/dev/null <<YAML
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata: {name: $2, namespace: $1, finalizers: [finalizers.fluxcd.io]}
spec: {image: ghcr.io/stefanprodan/podinfo, interval: 5m}
YAML
}
kustomization() {  # NAMESPACE NAME
  k apply -f - >/dev/null <<YAML
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: $2, namespace: $1, finalizers: [finalizers.fluxcd.io]}
spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: apps}}
YAML
}
# Releases every user resource of KIND (its finalizers removed) and deletes them.
release_all() {
  local kind=$1 item
  for item in $(k get "$kind" -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}' 2>/dev/null); do
    k -n "${item%/*}" patch "$kind" "${item#*/}" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
    k -n "${item%/*}" delete "$kind" "${item#*/}" --wait=false >/dev/null 2>&1
  done
}

e2e_cluster_up "$work/cluster"
# The flags of every run, $KUBECONFIG now the cluster's.
mapfile -t flags < <(common_flags)

# ---------------------------------------------------------------------------
# crds: from six components to three (no helm-controller, no image
# controllers), with HelmReleases and an ImageRepository of the user's.
case_crds() {
  local hr=customresourcedefinition/helmreleases.helm.toolkit.fluxcd.io
  local ir=customresourcedefinition/imagerepositories.image.toolkit.fluxcd.io
  local ip=customresourcedefinition/imagepolicies.image.toolkit.fluxcd.io
  if ! check "crds: install six components" install "$instances/flux-2.9-six.yaml" ||
    ! { user_namespaces && helmrelease apps podinfo && helmrelease apps redis &&
      helmrelease team-b api && imagerepository apps podinfo && kustomization apps apps; }; then
    fail "crds" "no installation with the user's resources to prune from"
    return
  fi
  local three=$instances/flux-2.9-no-helm.yaml
  fx crds-diff diff "$three" "${flags[@]}"
  check "crds: diff names each CRD kept with its resources per namespace" out_has crds-diff \
    '^keep CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io: 3 HelmRelease \(apps: 2, team-b: 1\) remain \(--prune-crds deletes them with it\)$' \
    '^keep CustomResourceDefinition/imagerepositories\.image\.toolkit\.fluxcd\.io: 1 ImageRepository \(apps: 1\) remains' \
    '^prune CustomResourceDefinition/imagepolicies\.image\.toolkit\.fluxcd\.io$'
  fx crds-diff-json diff "$three" "${flags[@]}" -o json
  check "crds: diff -o json: keep, with the counts; the CRD without resources deleted" json_holds crds-diff-json \
    'obj("CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io")["action"] == "keep" and sorted((k["namespace"], k["count"]) for k in obj("CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io")["keeps"]) == [("apps", 2), ("team-b", 1)] and obj("CustomResourceDefinition/imagepolicies.image.toolkit.fluxcd.io")["action"] == "delete" and obj("CustomResourceDefinition/imagepolicies.image.toolkit.fluxcd.io")["takes"] == []'
  fx crds-check check "$three" "${flags[@]}"
  check "crds: check warns of the CRDs kept, naming the resources" out_has crds-check \
    '^warning +prune +.*keep CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io: 3 HelmRelease \(apps: 2, team-b: 1\)'

  apply crds-apply "$three"
  check "crds: apply exits 0" exit_is 0
  check "crds: apply warns on stderr, naming the CRD and the counts" err_has crds-apply \
    '^warning: CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io kept: 3 HelmRelease \(apps: 2, team-b: 1\) remain; apply --prune-crds deletes them with it$'
  check "crds: the CRDs with resources stay, not being deleted" eval \
    "not_terminating $hr && not_terminating $ir"
  check "crds: the user's HelmReleases and ImageRepository are not being deleted" eval \
    'not_terminating -n apps helmrelease podinfo && not_terminating -n team-b helmrelease api && not_terminating -n apps imagerepository podinfo'
  check "crds: the CRD without resources is pruned" gone "$ip"
  check "crds: the Ready message says what was kept" ready_message_has \
    'CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io kept: 3 HelmRelease'
  check "crds: a PruneSkipped event names it" event_has PruneSkipped \
    'CustomResourceDefinition/imagerepositories\.image\.toolkit\.fluxcd\.io kept: 1 ImageRepository \(apps: 1\)'
  check "crds: helm-controller is pruned" gone deployment/helm-controller

  fx crds-diff-asked diff "$three" "${flags[@]}" --prune-crds
  check "crds: diff --prune-crds names what goes with the CRD" out_has crds-diff-asked \
    '^prune CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io with its custom resources \(--prune-crds\): 3 HelmRelease \(apps: 2, team-b: 1\)$'
  apply crds-asked "$three" --prune-crds
  check "crds: apply --prune-crds exits 0" exit_is 0
  check "crds: --prune-crds: the CRDs and their resources are gone (released, none held)" gone "$hr" "$ir"
  check "crds: a Kustomization of the user's stays" not_terminating -n apps kustomization apps
  release_all kustomizations.kustomize.toolkit.fluxcd.io
}

# ---------------------------------------------------------------------------
# terminating: the HelmRelease CRD deleted by hand, held by a HelmRelease's
# finalizer.
case_terminating() {
  local hr=customresourcedefinition/helmreleases.helm.toolkit.fluxcd.io
  local four=$instances/flux-2.9-four.yaml
  if ! check "terminating: install four components" install "$four" ||
    ! { user_namespaces && helmrelease apps held && k delete "$hr" --wait=false >/dev/null &&
      wait_until 30 terminating "$hr"; }; then
    fail "terminating" "no CRD held Terminating"
    return
  fi
  fx term-get get -n "$ns" --kubeconfig "$KUBECONFIG"
  check "terminating: get warns of the CRD being deleted and what holds it" err_has term-get \
    '^warning: being deleted: CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io \(.*'
  fx term-check check "$four" "${flags[@]}"
  check "terminating: check fails naming it" exit_and_out 1 term-check \
    '^failed +terminating +being deleted.*CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io'

  fx term-diff diff "$four" "${flags[@]}"
  check "terminating: diff names it" out_has term-diff \
    '^terminating CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io \(being deleted; .*\): apply waits until it is gone, then applies it again$'
  # Nothing releases it: apply waits for it to go until its timeout.
  apply_timeout=20s apply term-apply "$four"
  check "terminating: apply waits for it to go, at its timeout exits 1 naming it" exit_and_err 1 term-apply \
    '^error: .*being deleted.*CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io'

  check "terminating: Ready=False HealthCheckFailed" ready_is False HealthCheckFailed
  # Released, the CRD goes; applied again, it is back.
  release_all helmreleases.helm.toolkit.fluxcd.io
  if wait_until 60 absent_now "$hr"; then
    apply term-repaired "$four"
    check "terminating: once gone, apply puts it back, Ready" eval '[ "$rc" = 0 ] && ready_is True ReconciliationSucceeded'
  else
    fail "terminating: once gone" "the CRD is still there after its resources were released"
  fi
}

# ---------------------------------------------------------------------------
# sync: the Git sync renamed from flux-system to fleet. kustomize-controller
# does not run here; its finalizer does: a stand-in deletes what a
# Kustomization being deleted applied (its inventory), unless it is
# suspended, then removes the finalizer, as the controller does.
kustomize_finalizer() {
  local item suspend prune entry id rest name group kind obj_ns
  while :; do
    while read -r item suspend prune; do
      [ -n "$item" ] || continue
      if [ "$suspend" != true ] && [ "$prune" = true ]; then
        for entry in $(k -n "${item%/*}" get kustomization "${item#*/}" -o jsonpath='{range .status.inventory.entries[*]}{.id}{"\n"}{end}'); do
          IFS=_ read -r obj_ns name group kind <<<"$entry"
          rest=$kind${group:+.$group}
          k ${obj_ns:+-n "$obj_ns"} delete "$rest" "$name" --wait=false >/dev/null 2>&1
        done
      fi
      k -n "${item%/*}" patch kustomization "${item#*/}" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
    done < <(k get kustomizations -A -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.namespace}/{.metadata.name} {.spec.suspend} {.spec.prune}{"\n"}{end}' 2>/dev/null)
    sleep 1
  done
}
case_sync() {
  local git=$instances/flux-2.9-four-git-sync.yaml
  sed 's/^  sync:$/&\n    name: fleet/' "$git" >"$work/renamed.yaml"
  grep -q '^    name: fleet$' "$work/renamed.yaml" || { fail "sync" "no renamed instance"; return; }
  # What the Kustomization applied: a workload in apps.
  if ! check "sync: install with a Git sync" install "$git" ||
    ! { user_namespaces && k -n apps create deployment podinfo --image=ghcr.io/stefanprodan/podinfo >/dev/null 2>&1 || exists -n apps deployment podinfo; } ||
    ! k -n "$ns" patch kustomization flux-system --type=merge -p '{"metadata":{"finalizers":["finalizers.fluxcd.io"]}}' >/dev/null ||
    ! k -n "$ns" patch kustomization flux-system --subresource=status --type=merge \
      -p '{"status":{"inventory":{"entries":[{"id":"apps_podinfo_apps_Deployment","v":"v1"}]}}}' >/dev/null; then
    fail "sync" "no sync Kustomization with an inventory and a finalizer"
    return
  fi
  kustomize_finalizer &
  finalizer_pid=$!
  fx sync-diff diff "$work/renamed.yaml" "${flags[@]}"
  check "sync: diff says the old Kustomization goes without its effects, naming what stays" out_has sync-diff \
    '^prune Kustomization/flux-system/flux-system without its effects \(suspended, its finalizers removed\): what it applied stays, 1 Deployment \(apps: 1\)$'
  fx sync-diff-json diff "$work/renamed.yaml" "${flags[@]}" -o json
  check "sync: diff -o json: what stays" json_holds sync-diff-json \
    'obj("Kustomization/flux-system/flux-system")["action"] == "delete" and obj("Kustomization/flux-system/flux-system")["keeps"] == [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "apps", "count": 1}]'
  apply sync-apply "$work/renamed.yaml"
  check "sync: apply exits 0" exit_is 0
  check "sync: the new sync is created before the old one goes" eval \
    '[ "$(grep -n "^Kustomization/flux-system/fleet created$" "$work/sync-apply.out" | cut -d: -f1)" -lt "$(grep -n "^Kustomization/flux-system/flux-system deleted$" "$work/sync-apply.out" | cut -d: -f1)" ]'
  check "sync: the old Kustomization and GitRepository are gone, not held" gone \
    kustomization/flux-system gitrepository/flux-system
  check "sync: what the old Kustomization applied stays" not_terminating -n apps deployment podinfo
  stop_process "$finalizer_pid"
  finalizer_pid=
}

# ---------------------------------------------------------------------------
# delete: asked, on a terminal or by --yes.
asked() {  # CONTEXT: $work/delete-tty.out shows the question and the refusal
  grep -qF "On context \"$1\"" "$work/delete-tty.out" &&
    grep -qF 'Proceed? [y/N]' "$work/delete-tty.out" &&
    grep -qF 'not confirmed: nothing deleted' "$work/delete-tty.out" ||
    { echo "the terminal shows:"; tail -n 5 "$work/delete-tty.out"; return 1; }
  exists -n "$ns" fluxinstance flux || { echo "the instance is gone"; return 1; }
}
case_delete() {
  local four=$instances/flux-2.9-four.yaml context
  check "delete: install four components" install "$four" || { fail "delete" "nothing to delete"; return; }
  context=$(kubectl config current-context)
  fx delete-no-tty delete -n "$ns" --kubeconfig "$KUBECONFIG" </dev/null
  check "delete: without a terminal, --yes is needed (exit 2), naming the context, the instance, what goes" \
    exit_and_err 2 delete-no-tty "^error: --yes: delete removes, on context \"$context\" \\(https://[^)]*\\), FluxInstance/flux-system/flux and [0-9]+ objects of its inventory: .*[0-9]+ Deployment \\(flux-system: [0-9]+\\).*; without a terminal to ask on, --yes says to go on$"
  check "delete: refused, nothing is deleted" eval 'exists -n "$ns" fluxinstance flux && exists -n "$ns" deployment source-controller'
  if command -v script >/dev/null; then
    printf 'n\n' | XDG_CACHE_HOME=$work/cache timeout -k 5 120 script -qec \
      "$bin delete -n $ns --kubeconfig $KUBECONFIG" /dev/null >"$work/delete-tty.out" 2>&1
    check "delete: on a terminal it asks, naming the context; 'n' deletes nothing" asked "$context"
  else
    skip "delete: on a terminal" "script(1) is not installed"
  fi
  fx delete-dry delete -n "$ns" --kubeconfig "$KUBECONFIG" --dry-run=server </dev/null
  check "delete: --dry-run=server asks nothing, deletes nothing" eval \
    '[ "$rc" = 0 ] && exists -n "$ns" fluxinstance flux && exists -n "$ns" deployment source-controller'
}

# ---------------------------------------------------------------------------
# inventory: .status.inventory removed.
labelled() {  # what is labelled the instance's, but the namespace (prune: disabled)
  k get deployments,serviceaccounts,services,clusterroles,clusterrolebindings,networkpolicies,crds -A \
    -l fluxcd.controlplane.io/name=flux,fluxcd.controlplane.io/namespace=flux-system -o name 2>/dev/null
}
case_inventory() {
  local four=$instances/flux-2.9-four.yaml
  if ! check "inventory: install four components" install "$four" ||
    ! k -n "$ns" patch fluxinstance flux --subresource=status --type=json \
      -p '[{"op":"remove","path":"/status/inventory"}]' >/dev/null; then
    fail "inventory" "no installation without its inventory"
    return
  fi
  fx inv-diff diff "$instances/flux-2.9-no-helm.yaml" "${flags[@]}"
  check "inventory: diff finds what it would prune by the labels" out_has inv-diff \
    '^prune Deployment/flux-system/helm-controller$'
  fx inv-delete delete -n "$ns" --kubeconfig "$KUBECONFIG" --yes
  check "inventory: delete exits 0, complete" eval '[ "$rc" = 0 ] && err_has inv-delete "^Uninstallation completed in "'
  check "inventory: nothing labelled the instance's is left" eval '[ -z "$(labelled)" ] || { labelled | head -n 5; false; }'
}

# ---------------------------------------------------------------------------
# labels: a PodSecurity level kubectl put on the namespace.
enforced() {  # LEVEL: the namespace's pod-security.kubernetes.io/enforce label
  local got
  got=$(k get namespace "$ns" -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')
  [ "$got" = "$1" ] || { echo "the namespace's enforce label is '$got', not '$1'"; return 1; }
}
case_labels() {
  local four=$instances/flux-2.9-four.yaml label=pod-security.kubernetes.io/enforce
  check "labels: install four components" install "$four" || { fail "labels" "no installation"; return; }
  k label namespace "$ns" "$label=baseline" --overwrite >/dev/null
  apply labels-again "$four"
  apply labels-twice "$four"
  check "labels: two applies later, kubectl's label stays" enforced baseline
  apply labels-other "$instances/flux-2.9-no-helm.yaml"
  check "labels: through a changed instance too" enforced baseline
  k label namespace "$ns" "$label-" >/dev/null
}

# ---------------------------------------------------------------------------
# downgrade: Flux 2.9 installed, 2.8 asked for.
case_downgrade() {
  local old=$instances/flux-2.8-four.yaml reason
  check "downgrade: install Flux 2.9" install "$instances/flux-2.9-four.yaml" || { fail "downgrade" "no installation"; return; }
  reason='downgrading from v2\.9\.[0-9]+ to v2\.8\.[0-9]+ is not supported, reinstall needed'
  apply down-apply "$old"
  check "downgrade: apply refuses it (exit 1)" exit_and_err 1 down-apply \
    "^error: .*: \\.spec\\.distribution\\.version: $reason\$"
  fx down-diff diff "$old" "${flags[@]}"
  check "downgrade: diff gives apply's reason (exit 2)" exit_and_err 2 down-diff \
    "^error: .*: \\.spec\\.distribution\\.version: $reason\$"
  fx down-check check "$old" "${flags[@]}"
  check "downgrade: check fails with apply's reason" exit_and_out 1 down-check "^failed +version +$reason\$"
}

e2e_run_cases
summary
