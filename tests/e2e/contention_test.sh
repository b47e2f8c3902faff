#!/usr/bin/env bash
# End-to-end tests of two reconcilers on one cluster, and of what a
# reconciler writes when it no longer may, on a local control plane
# (scripts/cluster) of their own; every outcome is checked with kubectl.
# Each case sets up what it needs (Flux installed by a one-shot apply, user
# resources in a namespace of its own) and can run alone, in any order, on
# the one cluster they share:
#   stale_render   the daemon (--from-cluster) waits for the Lease with a
#                  render of four components while the instance goes to six:
#                  once it has the Lease it renders again, and nothing of the
#                  six (an image controller, a user's ImageRepository) goes
#   stolen_lease   the Lease held by another (renewTime in the future): the
#                  daemon's Ready message and a Warning event name the holder
#                  and since when; once it is free, the retry is Ready
#   paused_writer  a one-shot apply paused (SIGSTOP) past its Lease while
#                  another apply takes over, then stopped (SIGTERM): it
#                  writes nothing, the status stays the other apply's
#   no_reconciler  reconcile and resume with no operator and no daemon say so
#                  at once (exit 1), naming what to run
#   file_requests  `apply --watch FILE` handles `fluxopctl reconcile`
#   namespace_deleted
#                  `kubectl delete namespace flux-system` with the daemon
#                  running: the uninstall finishes without a Lease, the
#                  namespace goes, the daemon says what it did
#   force_failed   a forced migration (forceAt) that fails does not record
#                  lastHandledForceAt; the next apply makes it
#   force_outage   a forced migration of 1,200 objects through a 20 s API
#                  server outage: it finishes, lastHandledForceAt recorded
#   controller_beside
#                  the daemon warns (log, Warning event) of an operator
#                  Deployment beside it, and of its status written by another
#                  controller during an apply
#   unestablished  a CRD left Established=False by an API server stopped
#                  before it established it (the state written into etcd
#                  while it is down): apply names it and writes it again, it
#                  is Established, the instance Ready
#
#   tests/e2e/contention_test.sh BIN ROOT [CASE...]
#
# The distribution is $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else ROOT/../shared/
# flux-distribution. Closes with `N passed, M failed`; a skip (exit 77, a
# failure when CI=true) only when kubectl, the distribution or the cluster
# binaries are missing.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
instances=$root/tests/e2e/instances
run_limit=600
apply_timeout=5m
lease=fluxopctl-flux
cluster=$root/scripts/cluster
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

daemon= background=

all_cases=(stale_render stolen_lease paused_writer no_reconciler file_requests force_failed
  force_outage controller_beside namespace_deleted unestablished)
e2e_select_cases "$@"

# ---------------------------------------------------------------------------
# Helpers

ready_status() { fi_get '{.status.conditions[?(@.type=="Ready")].status}'; }
uid_of() { k -n "$ns" get "$1" -o jsonpath='{.metadata.uid}' 2>/dev/null; }
inventory_count() { inventory | grep -c .; }

# logged_more PATTERN N: the daemon's log has more than N lines matching.
logged_more() { [ "$(grep -c -- "$1" "$log")" -gt "$2" ]; }
# reconciled N: the daemon's log has N lines saying a reconcile finished.
reconciled() { [ "$(grep -c 'Reconciliation finished in' "$log")" -ge "$1" ]; }
request_reconcile() {
  requested=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
  k -n "$ns" annotate fluxinstance flux --overwrite "reconcile.fluxcd.io/requestedAt=$requested" >/dev/null
}
handled() { [ "$(fi_get '{.status.lastHandledReconcileAt}')" = "$requested" ] && ready_current; }
# components_patch NAME...: the instance's components become NAME...
components_patch() {
  local list
  list=$(printf '"%s",' "$@")
  k -n "$ns" patch fluxinstance flux --type merge -p "{\"spec\":{\"components\":[${list%,}]}}" >/dev/null
}
four=(source-controller kustomize-controller helm-controller notification-controller)
six=("${four[@]}" image-reflector-controller image-automation-controller)
# with_annotation NAME FILE KEY VALUE: $work/NAME.yaml, FILE annotated.
with_annotation() {
  sed "s|^  name: flux$|&\n  annotations:\n    $3: \"$4\"|" "$2" >"$work/$1.yaml"
}
# user_namespace CASE: the namespace of CASE's user resources, $apps (one
# per case: another case's, being deleted, takes nothing new).
user_namespace() {
  apps=${1//_/-}
  k create namespace "$apps" --dry-run=client -o yaml | k apply -f - >/dev/null
}
# no_reconciler_left: no daemon, no Leases of one.
clear_reconcilers() {
  stop_daemon
  k -n "$ns" delete lease flux-operator fluxopctl.watch "$lease" --ignore-not-found >/dev/null 2>&1
}

e2e_cluster_up "$work/cluster"

# ---------------------------------------------------------------------------
# stale_render (issue 40, point 5)
case_stale_render() {
  local name=stale_render reflector generation
  clear_reconcilers
  given "$name: given flux-2.9-six" install "$instances/flux-2.9-six.yaml" || return
  user_namespace "$name"
  local version
  version=$(k get crd imagerepositories.image.toolkit.fluxcd.io \
    -o jsonpath='{.spec.versions[?(@.storage==true)].name}')
  k apply -f - >/dev/null <<YAML
apiVersion: image.toolkit.fluxcd.io/$version
kind: ImageRepository
metadata: {name: podinfo, namespace: $apps}
spec: {image: ghcr.io/stefanprodan/podinfo, interval: 1h}
YAML
  reflector=$(uid_of deployment/image-reflector-controller)
  start_daemon "$name" --distribution-artifact "$dist" --from-cluster -n "$ns"
  if ! wait_until 300 reconciled 1; then
    fail "$name" "the daemon did not reconcile the installed instance"
    return
  fi
  # The daemon renders four components and waits for the Lease, which
  # another holds; meanwhile the instance goes back to six.
  set_lease "$lease" test/1 now 3600 || { show "$work/lease.err"; fail "$name" "kubectl set no Lease"; return; }
  components_patch "${four[@]}"
  if ! wait_until 180 logged "waiting for Lease/$ns/$lease"; then
    fail "$name" "the daemon did not wait for the Lease"
    return
  fi
  components_patch "${six[@]}"
  generation=$(fi_get '{.metadata.generation}')
  set_lease "$lease" "" now 30
  check "$name: the daemon reconciles the current generation ($generation) to Ready" \
    wait_until 300 eval 'ready_current && [ "$(fi_get "{.status.conditions[?(@.type==\"Ready\")].observedGeneration}")" = "$generation" ]'
  check "$name: the daemon says it rendered again" logged "was rendered: nothing applied, the instance is rendered again"
  check "$name: image-reflector-controller was never deleted" \
    eval '[ "$(uid_of deployment/image-reflector-controller)" = "$reflector" ] || { echo "its uid changed: deleted and created again"; false; }'
  check "$name: the user's ImageRepository stays" \
    eval 'k -n "$apps" get imagerepository podinfo >/dev/null 2>&1 || { echo "ImageRepository $apps/podinfo is gone"; false; }'
  stop_daemon
  k delete namespace "$apps" --wait=false >/dev/null
}

# ---------------------------------------------------------------------------
# stolen_lease (issue 40, point 6)
case_stolen_lease() {
  local name=stolen_lease
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  start_daemon "$name" --distribution-artifact "$dist" --from-cluster -n "$ns" --lock-timeout 5s
  if ! wait_until 300 reconciled 1; then
    fail "$name" "the daemon did not reconcile the installed instance"
    return
  fi
  # Held by another, renewed in the future: never expired as it says.
  set_lease "$lease" thief/1 "+1 hour" 7200 || { show "$work/lease.err"; fail "$name" "kubectl set no Lease"; return; }
  request_reconcile
  said_on_instance() {
    ready_message | grep -q "held by thief/1 since" ||
      { echo "the Ready message is: $(ready_message)"; return 1; }
    [ "$(ready_status)" = False ] || { echo "Ready is $(ready_status)"; return 1; }
    events ReconciliationFailed | grep -q "^Warning .*held by thief/1 since" ||
      { echo "no Warning event names the holder"; return 1; }
  }
  check "$name: the Ready message and a Warning event name the holder and since when" \
    wait_until 180 said_on_instance
  k -n "$ns" delete lease "$lease" >/dev/null
  check "$name: once the Lease is free, the daemon's retry handles the request, Ready" wait_until 300 handled
  stop_daemon
}

# ---------------------------------------------------------------------------
# paused_writer (issue 40, point 6)
case_paused_writer() {
  local name=paused_writer first expired_at version inventory_then revision pid_stopped=0
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  # The first apply changes a pod template and waits for a rollout that
  # cannot happen (nodes cordoned), holding the Lease.
  sed 's|^  cluster:|  kustomize:\n    patches:\n      - target: {kind: Deployment, name: source-controller}\n        patch: \|\n          - op: add\n            path: /spec/template/metadata/annotations/contention~1paused\n            value: "1"\n&|' \
    "$instances/flux-2.9-four.yaml" >"$work/paused.yaml"
  cordon
  mapfile -t flags < <(common_flags)
  XDG_CACHE_HOME=$work/cache "$bin" apply "$work/paused.yaml" "${flags[@]}" --timeout "$apply_timeout" \
    >"$work/paused.out" 2>"$work/paused.err" &
  background=$!
  show "$work/paused.err"
  if ! wait_until 300 eval 'grep -q "waiting for the components" "$work/paused.err" || ! running "$background"' ||
    ! running "$background"; then
    uncordon
    fail "$name" "the first apply did not wait for its rollout"
    return
  fi
  first=$(lease_get '{.spec.holderIdentity}')
  kill -STOP "$background"
  # Past its Lease: its renewTime and duration are behind us.
  expired() {
    local renewed duration
    renewed=$(lease_get '{.spec.renewTime}')
    duration=$(lease_get '{.spec.leaseDurationSeconds}')
    [ -n "$renewed" ] && [ $(($(date -u +%s) - $(date -u -d "$renewed" +%s))) -gt $((duration + 2)) ]
  }
  wait_until 120 expired || { kill -CONT "$background"; uncordon; fail "$name" "the Lease of $first did not expire"; return; }
  uncordon
  apply "$name-second" "$instances/flux-2.9-six.yaml"
  check "$name: a second apply takes the expired Lease and succeeds" exit_is 0
  version=$(instance_version)
  inventory_then=$(inventory_count)
  revision=$(fi_get '{.status.lastAppliedRevision}')
  # Stopped while paused: the SIGTERM is handled as soon as it runs again.
  kill -TERM "$background"
  kill -CONT "$background"
  wait_until 120 eval '! running "$background"' || kill -9 "$background"
  wait "$background" 2>/dev/null
  background=
  check "$name: the paused apply wrote nothing after its Lease was taken" \
    eval '[ "$(instance_version)" = "$version" ] || { echo "the FluxInstance was written: Ready $(ready_status): $(ready_message)"; false; }'
  check "$name: the status is the second apply's: its revision, its $inventory_then objects, Ready" \
    eval '[ "$(fi_get "{.status.lastAppliedRevision}")" = "$revision" ] && [ "$(inventory_count)" = "$inventory_then" ] && ready_current'
  check "$name: the Lease is not the paused apply's" eval '[ "$(lease_get "{.spec.holderIdentity}")" != "$first" ]'
}

# ---------------------------------------------------------------------------
# no_reconciler (issue 40, point 9)
case_no_reconciler() {
  local name=no_reconciler
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  run_limit=120 fx "$name-reconcile" reconcile -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 5m
  check "$name: reconcile exits 1 at once" eval '[ "$rc" = 1 ] || { echo "exit $rc"; false; }'
  check "$name: reconcile says nothing reconciles it and what to run" \
    grep -q "nothing reconciles it .*fluxopctl apply" "$work/$name-reconcile.err"
  k -n "$ns" annotate fluxinstance flux --overwrite fluxcd.controlplane.io/reconcile=disabled >/dev/null
  run_limit=120 fx "$name-resume" resume -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 5m
  check "$name: resume exits 1 at once, saying so" \
    eval '[ "$rc" = 1 ] && grep -q "nothing reconciles it" "$work/no_reconciler-resume.err" || { echo "exit $rc"; false; }'
}

# ---------------------------------------------------------------------------
# file_requests (issue 40, point 9)
case_file_requests() {
  local name=file_requests
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  cp "$instances/flux-2.9-four.yaml" "$work/watched.yaml"
  start_daemon "$name" --distribution-artifact "$dist" "$work/watched.yaml"
  if ! wait_until 300 reconciled 1; then
    fail "$name" "the daemon did not reconcile the file"
    return
  fi
  run_limit=300 fx "$name-reconcile" reconcile -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 4m
  check "$name: reconcile exits 0, the daemon handled it" exit_is 0
  check "$name: lastHandledReconcileAt is the request's" eval \
    '[ "$(fi_get "{.status.lastHandledReconcileAt}")" = "$(fi_get "{.metadata.annotations.reconcile\.fluxcd\.io/requestedAt}")" ]'
  stop_daemon
}

# ---------------------------------------------------------------------------
# force_failed (issue 40, point 14)
case_force_failed() {
  local name=force_failed
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  user_namespace "$name"
  k apply -f - >/dev/null <<YAML
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: frozen, namespace: $apps}
spec: {url: https://example.com/repo, interval: 1h}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: contention-frozen}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $apps}}
    resourceRules:
      - apiGroups: [source.toolkit.fluxcd.io]
        apiVersions: ["*"]
        operations: [UPDATE]
        resources: [gitrepositories]
  validations:
    - expression: "false"
      message: contention test, frozen
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: contention-frozen}
spec: {policyName: contention-frozen, validationActions: [Deny]}
YAML
  frozen() { ! k -n "$apps" annotate gitrepository frozen contention/probe=1 --overwrite --dry-run=server >/dev/null 2>&1; }
  wait_until 60 frozen || { fail "$name" "the policy does not refuse updates"; return; }
  with_annotation forced "$instances/flux-2.9-four.yaml" reconcile.fluxcd.io/forceAt force-1
  apply "$name-refused" "$work/forced.yaml"
  check "$name: the forced migration refused: apply exits 1" exit_is 1
  check "$name: lastHandledForceAt is not recorded" \
    eval '[ "$(fi_get "{.status.lastHandledForceAt}")" != force-1 ] || { echo "recorded as handled"; false; }'
  k delete validatingadmissionpolicybinding contention-frozen >/dev/null
  k delete validatingadmissionpolicy contention-frozen >/dev/null
  wait_until 60 eval '! frozen'
  apply "$name-again" "$work/forced.yaml"
  check "$name: the next apply migrates, exit 0" exit_is 0
  check "$name: then lastHandledForceAt is recorded" eval '[ "$(fi_get "{.status.lastHandledForceAt}")" = force-1 ]'
  k delete namespace "$apps" --wait=false >/dev/null
}

# ---------------------------------------------------------------------------
# force_outage (issue 40, point 11)
case_force_outage() {
  local name=force_outage kind i
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  user_namespace "$name"
  # 1,200 custom resources in three kinds, so that the outage comes while
  # the migration's patches are under way.
  for kind in GitRepository HelmRepository Bucket; do
    {
      echo "apiVersion: v1"
      echo "kind: List"
      echo "items:"
      for ((i = 0; i < 400; i++)); do
        case $kind in
          GitRepository) spec="{url: https://example.com/r$i, interval: 1h}" ;;
          HelmRepository) spec="{url: https://example.com/c$i, interval: 1h}" ;;
          Bucket) spec="{bucketName: b$i, endpoint: example.com, interval: 1h}" ;;
        esac
        echo "- {apiVersion: source.toolkit.fluxcd.io/v1, kind: $kind, metadata: {name: o$i, namespace: $apps}, spec: $spec}"
      done
    } >"$work/$kind.yaml"
    timeout -k 5 600 kubectl apply --server-side -f "$work/$kind.yaml" >/dev/null 2>"$work/objects.err" ||
      { show "$work/objects.err"; fail "$name" "kubectl could not create the ${kind}s"; return; }
  done
  with_annotation outage "$instances/flux-2.9-four.yaml" reconcile.fluxcd.io/forceAt outage-1
  mapfile -t flags < <(common_flags)
  XDG_CACHE_HOME=$work/cache "$bin" apply "$work/outage.yaml" "${flags[@]}" --timeout 10m \
    >"$work/outage.out" 2>"$work/outage.err" &
  background=$!
  show "$work/outage.err"
  if ! wait_until 300 eval 'grep -q ": migrated " "$work/outage.err" || ! running "$background"' ||
    ! running "$background"; then
    fail "$name" "the apply ended before its migration was under way"
    return
  fi
  "$cluster" stop-apiserver >/dev/null 2>"$work/stop.err" || echo "stop-apiserver: $(tail -n 1 "$work/stop.err")"
  sleep 20 # the outage itself, not a wait for a condition
  "$cluster" start-apiserver >/dev/null 2>"$work/start.err" || echo "start-apiserver: $(tail -n 1 "$work/start.err")"
  rc=0
  wait "$background" || rc=$?
  background=
  check "$name: the forced migration rides out a 20 s outage, exit 0" exit_is 0
  check "$name: no request body that could not be sent again" \
    eval '! grep -q "rewind" "$work/outage.err" || { grep rewind "$work/outage.err"; false; }'
  check "$name: lastHandledForceAt recorded, Ready" \
    eval '[ "$(fi_get "{.status.lastHandledForceAt}")" = outage-1 ] && ready_current'
  k delete namespace "$apps" --wait=false >/dev/null
}

# ---------------------------------------------------------------------------
# controller_beside (issue 40, point 14)
case_controller_beside() {
  local name=controller_beside
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  start_daemon "$name" --distribution-artifact "$dist" --from-cluster -n "$ns"
  if ! wait_until 300 reconciled 1; then
    fail "$name" "the daemon did not reconcile the installed instance"
    return
  fi
  k apply -f - >/dev/null 2>"$work/operator.err" <<YAML ||
apiVersion: apps/v1
kind: Deployment
metadata:
  name: flux-operator
  namespace: $ns
  labels: {app.kubernetes.io/name: flux-operator}
spec:
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/name: flux-operator}}
  template:
    metadata: {labels: {app.kubernetes.io/name: flux-operator}}
    spec:
      containers: [{name: manager, image: ghcr.io/controlplaneio-fluxcd/flux-operator:v0.58.1}]
YAML
    {
      show "$work/operator.err"
      fail "$name" "kubectl created no operator Deployment"
      stop_daemon
      return
    }
  request_reconcile
  check "$name: a Warning event names the operator Deployment beside the daemon" \
    wait_until 180 eval 'events ControllerConflict | grep -q "^Warning .*Deployment/$ns/flux-operator"'
  check "$name: the daemon's log says so" logged "an operator runs beside this daemon"
  k -n "$ns" delete deployment flux-operator >/dev/null
  # Another controller writes the status while the daemon's apply waits for
  # a rollout (nodes cordoned, a pod template changed).
  local waits
  waits=$(grep -c "waiting for the components" "$log")
  cordon
  k -n "$ns" patch fluxinstance flux --type merge \
    -p '{"spec":{"kustomize":{"patches":[{"target":{"kind":"Deployment","name":"source-controller"},"patch":"- op: add\n  path: /spec/template/metadata/annotations/contention~1beside\n  value: \"1\"\n"}]}}}' >/dev/null
  if ! wait_until 300 logged_more "waiting for the components" "$waits"; then
    uncordon
    fail "$name" "the daemon's apply did not wait for the rollout"
    stop_daemon
    return
  fi
  k -n "$ns" patch fluxinstance flux --subresource status --type merge \
    -p '{"status":{"lastAttemptedRevision":"written-by-another"}}' >/dev/null
  uncordon
  check "$name: its status written by another during the apply: a Warning event" \
    wait_until 300 eval 'events ControllerConflict | grep -q "^Warning .*its status was written by another controller"'
  check "$name: then Ready for the current generation" wait_until 300 ready_current
  stop_daemon
}

# ---------------------------------------------------------------------------
# namespace_deleted (issue 40, point 12)
case_namespace_deleted() {
  local name=namespace_deleted
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  user_namespace "$name"
  k -n "$apps" create configmap kept --from-literal=a=b >/dev/null 2>&1
  start_daemon "$name" --distribution-artifact "$dist" --from-cluster -n "$ns"
  has_finalizer() { fi_get '{.metadata.finalizers}' | grep -q fluxcd.controlplane.io/finalizer; }
  if ! wait_until 300 eval 'reconciled 1 && has_finalizer'; then
    fail "$name" "the daemon did not reconcile the installed instance"
    return
  fi
  k delete namespace "$ns" --wait=false >/dev/null
  check "$name: the namespace is gone" wait_until 400 eval '! k get namespace "$ns" >/dev/null 2>&1'
  check "$name: the daemon says it uninstalled without a Lease" \
    logged "is being deleted: uninstalled without taking the Lease"
  check "$name: the Flux CRDs are gone" \
    eval '[ -z "$(k get crd -o name | grep toolkit.fluxcd.io)" ] || { k get crd -o name | grep toolkit; false; }'
  check "$name: the user's objects in other namespaces stay" eval 'k -n "$apps" get configmap kept >/dev/null'
  stop_daemon
}

# ---------------------------------------------------------------------------
# unestablished (issue 40, point 8)
# unestablish CRD: the CRD as the API server leaves it when it stops between
# accepting a new CRD's names and establishing it (which it queues only when
# the CRD is written): Established=False, "Installing". Written into etcd
# (where CRDs are stored as JSON) while the API server is stopped.
unestablish() {
  local etcd_port
  etcd_port=$(sed -n 's/^etcd_port="\{0,1\}\([0-9]*\)"\{0,1\}$/\1/p' "$FLUXOPCTL_CLUSTER_DIR/ports.env")
  python3 - "http://127.0.0.1:$etcd_port" "/registry/apiextensions.k8s.io/customresourcedefinitions/$1" <<'PY'
import base64, json, sys, urllib.request
url, key = sys.argv[1], sys.argv[2]
def call(path, body):
    request = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=30))
kv = call("/v3/kv/range", {"key": base64.b64encode(key.encode()).decode()})["kvs"][0]
crd = json.loads(base64.b64decode(kv["value"]))
for condition in crd["status"]["conditions"]:
    if condition["type"] == "Established":
        condition.update(status="False", reason="Installing", message="the initial names have been accepted")
call("/v3/kv/put", {"key": kv["key"], "value": base64.b64encode(json.dumps(crd).encode()).decode()})
PY
}
established() { k get crd "$1" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}'; }

case_unestablished() {
  local name=unestablished crd=buckets.source.toolkit.fluxcd.io
  clear_reconcilers
  given "$name: given flux-2.9-four" install "$instances/flux-2.9-four.yaml" || return
  "$cluster" stop-apiserver >/dev/null 2>"$work/stop.err" || { show "$work/stop.err"; fail "$name" "stop-apiserver failed"; return; }
  unestablish "$crd" 2>"$work/unestablish.err"
  local written=$?
  "$cluster" start-apiserver >/dev/null 2>"$work/start.err" || { show "$work/start.err"; fail "$name" "start-apiserver failed"; return; }
  if [ "$written" != 0 ] || [ "$(established "$crd")" != False ]; then
    show "$work/unestablish.err"
    fail "$name" "the CRD $crd could not be left Established=False (it is '$(established "$crd")')"
    return
  fi
  # Within 2 minutes: the API server's informers resync every 5 minutes
  # from its start, which queues the CRD too.
  apply_timeout=2m apply "$name-repair" "$instances/flux-2.9-four.yaml"
  check "$name: apply repairs the CRD, exit 0" exit_is 0
  check "$name: apply names the CRD not established and writes it again" \
    grep -q "CustomResourceDefinition/$crd is not established after .*written again to requeue it" "$work/$name-repair.err"
  check "$name: the CRD is Established, the instance Ready" eval '[ "$(established "$crd")" = True ] && ready_current'
}

e2e_run_cases
clear_reconcilers
summary
