#!/usr/bin/env bash
# Hand-off between fluxopctl and the real Flux Operator: the upstream
# controller (v0.58.1, built from the Go module proxy by
# scripts/lib/upstream-operator.sh) runs out of cluster against a control
# plane of this test's own (scripts/cluster) with the upstream CRDs, and the
# two take turns on one FluxInstance:
#
#   operator -> fluxopctl: the operator reconciles a spec (kubectl apply of
#     the instance); then its inventory is what `fluxopctl build --operator`
#     renders, its lastAppliedRevision is build's revision, a server-side dry
#     run of build's objects by the operator's field manager changes nothing
#     (field by field), `fluxopctl diff` exits 0 and `fluxopctl apply`
#     changes no object;
#   fluxopctl -> operator: `fluxopctl apply` of the next spec; then the
#     operator, started, reconciles it and changes no object, and keeps
#     fluxopctl's inventory.
#
# "Changes no object": no manager writes an inventory object's spec or
# metadata, nor takes or gives up a field (tests/handoff/object_writes.py);
# the status the Deployment and quota controllers keep writing does not
# count.
#
# The turns cover an upgrade (2.8 -> 2.9) in both directions, the image
# catalog of every registry the operator maps to a variant and of an explicit
# variant, the fallback to tags, a non-default namespace with sharding on
# persistent storage, storage, every sync kind (each tool pruning the source
# of the other kind), patches and common metadata, the operator's storage path
# and the distribution served as an OCI artifact from a local registry.
# Between the namespaces the operator uninstalls Flux (the FluxInstance
# deleted). Last, the daemon (apply --watch --from-cluster) takes the
# operator's place and changes nothing, applies an edit of the instance in
# the cluster, and hands it back to the operator, which changes nothing.
#
#   tests/handoff/handoff_test.sh BIN ROOT
#
# Closes with `N passed, M failed`; exit 77 (1 in CI) when it cannot run.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=$(realpath "${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}")
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
# shellcheck source=scripts/lib/upstream-operator.sh
source "$root/scripts/lib/upstream-operator.sh"
work=$(mktemp -d)
cleanup() {
  op_stop
  [ -z "${dm_pid:-}" ] || kill -9 "$dm_pid" 2>/dev/null
  registry_stop_all
  e2e_cluster_down
  [ "${HANDOFF_TEST_KEEP:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
}
on_exit cleanup

command -v kubectl >/dev/null || skip_test "kubectl is not installed"
[ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"
status=0
upstream_operator_ensure_built 2>"$work/operator-build.err" || status=$?
[ "$status" = 77 ] && skip_test "$(tail -n 1 "$work/operator-build.err")"
[ "$status" = 0 ] || {
  tail -n 20 "$work/operator-build.err"
  fail "operator" "building the upstream operator failed"
  summary
  exit
}
registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"

e2e_cluster_up "$work/cluster"
k apply --server-side -f "$upstream_operator_crds" >"$work/crds.out" 2>&1 &&
  kwait 120 wait --for=condition=Established customresourcedefinition --all >/dev/null 2>&1 || {
  show "$work/crds.out"
  fail "setup" "installing the upstream CRDs failed"
  summary
  exit
}
registry_start "$work/registry" >/dev/null 2>&1 &&
  registry_push_artifact flux-operator-manifests:latest "$dist" flux flux-images >/dev/null 2>&1 || {
  fail "setup" "serving the distribution from a local registry failed"
  summary
  exit
}
artifact=oci://$REGISTRY_ADDR/flux-operator-manifests:latest

# ---------------------------------------------------------------------------
# The operator, out of cluster (tests/e2e/lib.sh).

op_start() { e2e_operator_start "$work/operator.log"; }
op_stop() { e2e_operator_stop; }

# instance NAME NAMESPACE VERSION [SPEC LINES...]: writes $work/NAME.yaml.
instance() {
  local name=$1 namespace=$2 version=$3
  shift 3
  {
    printf 'apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n'
    printf '  name: flux\n  namespace: %s\nspec:\n' "$namespace"
    printf '  distribution:\n    version: "%s"\n' "$version"
    printf '%s\n' "$@"
  } >"$work/$name.yaml"
}

# built NAME: `fluxopctl build --operator` of $work/NAME.yaml into
# $work/NAME.out, its revision into $work/NAME.revision.
built() {
  XDG_CACHE_HOME=$work/cache timeout -k 5 300 "$bin" build --operator -v "$work/$1.yaml" \
    --distribution-artifact "$dist" >"$work/$1.out" 2>"$work/$1.build.err" ||
    { echo "fluxopctl build --operator failed: $(tail -n 1 "$work/$1.build.err")"; return 1; }
  sed -n 's/^revision: //p' "$work/$1.build.err" >"$work/$1.revision"
}
fi_status() { k -n "$ns" get fluxinstance flux -o jsonpath="$1" 2>/dev/null; }
ready_for_generation() {
  local ready gen obs
  ready=$(fi_status '{.status.conditions[?(@.type=="Ready")].status}')
  gen=$(fi_status '{.metadata.generation}')
  obs=$(fi_status '{.status.conditions[?(@.type=="Ready")].observedGeneration}')
  [ "$ready" = True ] && [ "$gen" = "$obs" ]
}
applied_is() { [ "$(fi_status '{.status.lastAppliedRevision}')" = "$1" ] && ready_for_generation; }
reconciled_more_than() { [ "$(fi_status '{.status.history[0].totalReconciliations}')" -gt "$1" ] && ready_for_generation; }
# snapshot FILE: every inventory object, as `kubectl get -o json` lists
# them (its errors in FILE.err).
snapshot() {
  local id namespace name group kind rest objects=()
  while read -r id; do
    IFS=_ read -r namespace name group kind rest <<<"$id"
    # Namespaced objects are all in $ns: one request for them all.
    [ -z "$namespace" ] || [ "$namespace" = "$ns" ] ||
      { echo "$id is outside $ns" >"$1.err"; return 1; }
    objects+=("$kind${group:+.$group}/$name")
  done < <(inventory)
  k -n "$ns" get "${objects[@]}" -o json --show-managed-fields >"$1" 2>"$1.err"
}
# The Deployments whose generation the Deployment controller has not yet
# observed, "name generation observedGeneration"; fails when they cannot be
# read.
unobserved_deployments() {
  local out
  out=$(k -n "$ns" get deployments \
    -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.generation} {.status.observedGeneration}{"\n"}{end}') ||
    return 1
  awk '$2 != $3' <<<"$out"
}
deployments_observed() {
  local out
  out=$(unobserved_deployments) && [ -z "$out" ]
}
inventory_is_build() {
  local want
  want=$(k get -f "$work/$1.out" -o jsonpath="$listing" 2>&1 | to_ids | cut -d' ' -f1 | sort)
  [ "$(inventory)" = "$want" ] ||
    { echo "the inventory is not what build --operator renders (< build, > inventory):"; diff <(echo "$want") <(inventory) | grep '^[<>]' | head; return 1; }
}
revision_is_build() {
  local applied
  applied=$(fi_status '{.status.lastAppliedRevision}')
  [ "$applied" = "$(cat "$work/$1.revision")" ] ||
    { echo "lastAppliedRevision '$applied', build --operator says '$(cat "$work/$1.revision")'"; return 1; }
}
fields_are_build() {
  local rc=0
  timeout -k 5 300 kubectl --request-timeout=60s diff --server-side --force-conflicts \
    --field-manager=flux-operator -f "$work/$1.out" >"$work/$1.fields.diff" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { echo "the operator's objects differ from build --operator (kubectl diff exit $rc):"; grep -E '^[-+] |rror' "$work/$1.fields.diff" | head -n 12; return 1; }
}
# remember NAME: what the next turn must keep, in $work/NAME.before.json,
# $work/inventory and $work/revision. Taken once the Deployment controller has
# observed every Deployment (with `wait: false` a rollout may still be under
# way): it writes a new revision's annotation before it observes the
# generation, and that write is not the next turn's.
remember() {
  wait_until 300 deployments_observed ||
    fail "$1: the Deployment controller observes every Deployment's generation" \
      "not observed (name generation observed): $(unobserved_deployments | tr '\n' ' ')"
  snapshot "$work/$1.before.json" ||
    fail "$1: reading the inventory's objects" "$(head -n 1 "$work/$1.before.json.err")"
  inventory >"$work/inventory"
  fi_status '{.status.lastAppliedRevision}' >"$work/revision"
}
# unchanged NAME: nobody wrote an object remember NAME saw: no spec, metadata
# or managed field changed (object_writes.py; the status subresource aside).
unchanged() {
  snapshot "$work/$1.after.json" ||
    { echo "reading the inventory's objects failed: $(head -n 1 "$work/$1.after.json.err")"; return 1; }
  python3 "$root/tests/handoff/object_writes.py" "$work/$1.before.json" "$work/$1.after.json" >"$work/$1.writes" ||
    { echo "objects written (by whom, what):"; cat "$work/$1.writes"; return 1; }
}
inventory_kept() {
  [ "$(inventory)" = "$(cat "$work/inventory")" ] ||
    { echo "the inventory changed (< before, > after):"; diff "$work/inventory" <(inventory) | grep '^[<>]' | head; return 1; }
}
revision_kept() {
  local now
  now=$(fi_status '{.status.lastAppliedRevision}')
  [ "$now" = "$(cat "$work/revision")" ] || { echo "lastAppliedRevision is '$now', fluxopctl's was '$(cat "$work/revision")'"; return 1; }
}
exit_is() { [ "$rc" = "$1" ] || { echo "exit $rc, not $1: $(tail -n 1 "$work/$2.err")"; return 1; }; }
fxrun() {
  local name=$1
  shift
  rc=0
  XDG_CACHE_HOME=$work/cache timeout -k 5 300 "$bin" "$@" --kubeconfig "$KUBECONFIG" \
    >"$work/$name.stdout" 2>"$work/$name.err" || rc=$?
}

# operator_turn NAME: the operator reconciles $work/NAME.yaml, then
# fluxopctl finds nothing to change.
operator_turn() {
  local name=$1 flags=()
  [ -n "${2:-}" ] || flags=(--distribution-artifact "$dist")
  built "$name" || { fail "$name: build --operator" "$(built "$name")"; return; }
  op_start
  # As Flux applies it from Git in a fleet. (Fields kubectl owns, fluxopctl
  # takes over: a spec edit by hand is then removed by its next apply.)
  # --force-conflicts: the spec's fields are fluxopctl's too after its turn.
  k apply --server-side --force-conflicts --field-manager=kustomize-controller -f "$work/$name.yaml" >/dev/null 2>"$work/$name.kubectl.err" ||
    { show "$work/$name.kubectl.err"; fail "$name: operator" "kubectl apply of the instance failed"; op_stop; return; }
  if ! wait_until 300 applied_is "$(cat "$work/$name.revision")"; then
    show "$work/operator.log"
    fail "$name: the operator reconciles the instance to build --operator's revision" \
      "lastAppliedRevision '$(fi_status '{.status.lastAppliedRevision}')', Ready: $(fi_status '{.status.conditions[?(@.type=="Ready")].message}')"
    op_stop
    return
  fi
  op_stop
  pass "$name: the operator reconciles the instance to build --operator's revision"
  check "$name: the operator's inventory is build --operator's objects" inventory_is_build "$name"
  check "$name: the operator's objects are build --operator's, field by field" fields_are_build "$name"
  remember "$name"
  fxrun "$name.diff" diff "$work/$name.yaml" "${flags[@]}"
  check "$name: then fluxopctl diff exits 0" exit_is 0 "$name.diff"
  fxrun "$name.apply" apply "$work/$name.yaml" "${flags[@]}" --timeout 4m
  check "$name: then fluxopctl apply exits 0" exit_is 0 "$name.apply"
  check "$name: and changes no object" unchanged "$name"
}

# fluxopctl_turn NAME [artifact]: fluxopctl applies $work/NAME.yaml, then the
# operator reconciles it without changing anything.
fluxopctl_turn() {
  local name=$1 flags=() before
  [ -n "${2:-}" ] || flags=(--distribution-artifact "$dist")
  fxrun "$name.apply" apply "$work/$name.yaml" "${flags[@]}" --timeout 4m
  check "$name: fluxopctl apply exits 0" exit_is 0 "$name.apply" || return
  remember "$name"
  before=$(fi_status '{.status.history[0].totalReconciliations}')
  op_start
  if ! wait_until 300 reconciled_more_than "$before"; then
    show "$work/operator.log"
    fail "$name: then the operator reconciles it" "Ready: $(fi_status '{.status.conditions[?(@.type=="Ready")].message}')"
    op_stop
    return
  fi
  op_stop
  pass "$name: then the operator reconciles it"
  check "$name: and changes no object" unchanged "$name"
  check "$name: and keeps fluxopctl's inventory" inventory_kept
  check "$name: and fluxopctl's revision" revision_kept
}

four='  components: [source-controller, kustomize-controller, helm-controller, notification-controller]'

# --- flux-system: upgrades and the image catalogs --------------------------
ns=flux-system
# The operator needs its namespace to start; it is created by whoever
# installs the operator (not kubectl or helm, whose fields fluxopctl would
# take over).
k create namespace "$ns" --field-manager=provisioner >/dev/null
instance a1-2.8 "$ns" 2.8.x '    registry: ghcr.io/fluxcd' "$four"
operator_turn a1-2.8
instance a2-2.9 "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "$four"
fluxopctl_turn a2-2.9
instance a3-distroless "$ns" 2.9.x '    registry: ghcr.io/controlplaneio-fluxcd/distroless' "$four"
operator_turn a3-distroless
instance a4-tags "$ns" 2.9.x '    registry: registry.example.com/flux' "$four"
fluxopctl_turn a4-tags
grep -q 'images are not pinned by digest' "$work/a4-tags.apply.err" &&
  pass "a4-tags: fluxopctl says the images are not pinned" ||
  fail "a4-tags: fluxopctl says the images are not pinned" "no warning on stderr"
# Every other registry the operator maps to a variant.
instance a4b-alpine "$ns" 2.9.x '    registry: ghcr.io/controlplaneio-fluxcd/alpine' "$four"
operator_turn a4b-alpine
instance a4c-fips "$ns" 2.9.x '    registry: ghcr.io/controlplaneio-fluxcd/distroless-fips' "$four"
fluxopctl_turn a4c-fips
instance a4d-dockerhub "$ns" 2.9.x '    registry: fluxcd' "$four"
operator_turn a4d-dockerhub
instance a4e-ecr "$ns" 2.9.x '    registry: 709825985650.dkr.ecr.us-east-1.amazonaws.com/controlplane/fluxcd' "$four"
fluxopctl_turn a4e-ecr
# A field one tool applied and the other's file lacks stays (server-side
# apply keeps what another manager owns, and each renders its own input):
# the variant, once given, stays given.
instance a5-variant "$ns" 2.9.x '    registry: registry.example.com/mirror' '    variant: enterprise-alpine' "$four"
operator_turn a5-variant
instance a6-fips "$ns" 2.9.x '    registry: registry.example.com/mirror' '    variant: enterprise-distroless-fips' "$four"
fluxopctl_turn a6-fips

# The operator uninstalls, as when its FluxInstance is deleted.
op_start
uninstalled() {
  k -n "$ns" delete fluxinstance flux --wait=false >/dev/null 2>&1
  gone fluxinstance/flux customresourcedefinition/kustomizations.kustomize.toolkit.fluxcd.io
}
check "the operator uninstalls Flux" uninstalled
op_stop

# --- another namespace: shards on persistent storage, sync, patches -------
ns=flux-ops
k create namespace "$ns" --field-manager=provisioner >/dev/null
# The syncs' pullSecret, which apply's checks want to exist with the keys of
# each sync kind below (an OCIRepository's type, a GitRepository's and a
# Bucket's keys): one Secret for them all.
k -n "$ns" create secret docker-registry registry-auth --docker-server=example.com \
  --docker-username=flux --docker-password=unused >/dev/null
k -n "$ns" patch secret registry-auth --type=merge \
  -p '{"stringData":{"username":"flux","password":"unused","accesskey":"flux","secretkey":"unused"}}' >/dev/null
storage_class standard  # the instances' .spec.storage.class
features=(
  "$four"
  '  cluster:'
  '    type: kubernetes'
  '    multitenant: true'
  '    size: medium'
  '  storage:'
  '    class: standard'
  '    size: 2Gi'
  '  sharding:'
  '    shards: [shard1, shard2]'
  '    storage: persistent'
  '  commonMetadata:'
  '    labels:'
  '      team: platform'
  '  kustomize:'
  '    patches:'
  '      - target:'
  '          kind: Deployment'
  '          name: kustomize-controller'
  '        patch: |'
  '          - op: add'
  '            path: /spec/template/spec/containers/0/args/-'
  '            value: --concurrent=7'
  # PersistentVolumeClaims stay Pending here: no health wait.
  '  wait: false'
)
# Every sync has the same name, pullSecret and interval: a field one tool
# applied and the next one's file lacks would stay (see a5), and then the
# other tool would render another spec than the file's.
sync_common=('    name: fleet' '    pullSecret: registry-auth' '    interval: 5m')
git_sync=(
  '  sync:'
  '    kind: GitRepository'
  '    url: https://example.com/fleet.git'
  '    ref: refs/heads/main'
  '    path: clusters/one'
  "${sync_common[@]}"
)
instance b1-2.8 "$ns" 2.8.x '    registry: ghcr.io/fluxcd' "${features[@]}" "${git_sync[@]}"
fluxopctl_turn b1-2.8
instance b2-2.9 "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "${features[@]}" "${git_sync[@]}"
operator_turn b2-2.9
instance b3-artifact "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "    artifact: $artifact" "${features[@]}" "${git_sync[@]}"
fluxopctl_turn b3-artifact artifact
artifact_revision_kept() {
  local digest
  digest=$(fi_status '{.status.lastArtifactRevision}')
  [[ "$digest" == sha256:* ]] || { echo "lastArtifactRevision is '$digest'"; return 1; }
}
check "b3-artifact: lastArtifactRevision is the artifact's digest" artifact_revision_kept
instance b4-artifact "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "    artifact: $artifact" "${features[@]/size: medium/size: large}" "${git_sync[@]}"
operator_turn b4-artifact artifact
# The other sync kinds: the source object of one kind is pruned and one of
# the next kind applied, by each tool in turn.
instance b5-oci-sync "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "${features[@]}" \
  '  sync:' '    kind: OCIRepository' '    url: oci://registry.example.com/fleet/manifests' \
  '    ref: latest' '    path: clusters/one' "${sync_common[@]}"
fluxopctl_turn b5-oci-sync
instance b6-bucket-sync "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "${features[@]}" \
  '  sync:' '    kind: Bucket' '    url: s3.amazonaws.com' '    ref: fleet-manifests' \
  '    path: ./clusters/one' "${sync_common[@]}"
operator_turn b6-bucket-sync
instance b7-git-sync "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "${features[@]}" "${git_sync[@]}"
fluxopctl_turn b7-git-sync

# --- the daemon in the operator's place, and back ----------------------------
# fluxopctl apply --watch --from-cluster, as deploy/ runs it (no leader
# election here: one at a time).
dm_pid=
dm_start() {
  XDG_CACHE_HOME=$work/cache "$bin" apply --watch --from-cluster -n "$ns" --kubeconfig "$KUBECONFIG" \
    --distribution-artifact "$dist" --timeout 4m >>"$work/daemon.log" 2>&1 &
  dm_pid=$!
}
dm_stop() {
  stop_process "$dm_pid"
  dm_pid=
}
handled_at() { [ "$(fi_status '{.status.lastHandledReconcileAt}')" = "$1" ] && ready_for_generation; }

# c1: the operator reconciles; stopped, the daemon starts in its place,
# handles a reconcile request and changes nothing.
instance c1-operator "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "${features[@]/size: medium/size: small}" "${git_sync[@]}"
operator_turn c1-operator
remember c1-daemon
dm_start
requested=$(date +%s%N)
k -n "$ns" annotate fluxinstance flux --overwrite "reconcile.fluxcd.io/requestedAt=$requested" >/dev/null
if wait_until 300 handled_at "$requested"; then
  pass "c1: then the daemon reconciles the operator's installation"
else
  show "$work/daemon.log"
  fail "c1: then the daemon reconciles the operator's installation" \
    "lastHandledReconcileAt '$(fi_status '{.status.lastHandledReconcileAt}')', Ready: $(fi_status '{.status.conditions[?(@.type=="Ready")].message}')"
fi
dm_stop
check "c1: and changes no object" unchanged c1-daemon
check "c1: and keeps the operator's inventory" inventory_kept
check "c1: and the operator's revision" revision_kept

# c2: the daemon applies an edit of the instance in the cluster; stopped,
# the operator starts in its place and changes nothing.
instance c2-daemon "$ns" 2.9.x '    registry: ghcr.io/fluxcd' "${features[@]/size: medium/size: large}" "${git_sync[@]}"
built c2-daemon || fail "c2-daemon: build --operator" "$(built c2-daemon)"
dm_start
k apply --server-side --force-conflicts --field-manager=kustomize-controller -f "$work/c2-daemon.yaml" >/dev/null 2>"$work/c2.kubectl.err" ||
  fail "c2: kubectl apply of the instance" "$(tail -n 1 "$work/c2.kubectl.err")"
if wait_until 300 applied_is "$(cat "$work/c2-daemon.revision")"; then
  pass "c2: the daemon applies the instance edited in the cluster"
else
  show "$work/daemon.log"
  fail "c2: the daemon applies the instance edited in the cluster" \
    "lastAppliedRevision '$(fi_status '{.status.lastAppliedRevision}')', Ready: $(fi_status '{.status.conditions[?(@.type=="Ready")].message}')"
fi
dm_stop
check "c2: the daemon's inventory is build --operator's objects" inventory_is_build c2-daemon
remember c2-daemon
before=$(fi_status '{.status.history[0].totalReconciliations}')
op_start
if wait_until 300 reconciled_more_than "$before"; then
  pass "c2: then the operator reconciles it"
else
  show "$work/operator.log"
  fail "c2: then the operator reconciles it" "Ready: $(fi_status '{.status.conditions[?(@.type=="Ready")].message}')"
fi
op_stop
check "c2: and changes no object" unchanged c2-daemon
check "c2: and keeps the daemon's inventory" inventory_kept
check "c2: and the daemon's revision" revision_kept
summary
