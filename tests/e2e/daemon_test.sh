#!/usr/bin/env bash
# End-to-end tests of `fluxopctl apply --watch`, the daemon, on a local
# control plane (scripts/cluster) of their own and a local registry; every
# outcome is checked with kubectl, curl and the daemon's logs. The cases,
# each from whatever the cluster holds:
#   file        from a file: installs it and says so (events, OutdatedVersion among
#     them, status, /metrics, /healthz, /readyz); an edit of the file starts
#     a reconcile within 5 s and is applied; so is a ConfigMap
#     volume's update (its ..data symlink swapped); a deleted Deployment is
#     restored at the next reconcileEvery; `reconcile: disabled` pauses it
#     (an event says so, flux_instance_info says suspended) and `enabled`
#     resumes it; a file that no longer parses is logged, and nothing
#     changes; SIGTERM: exit 0 within 10 s
#   cluster     from the cluster (--from-cluster, -n): disabled before any reconcile,
#     the status says so (as the operator initializes it), enabled it is
#     reconciled; a `kubectl patch` of the spec is
#     applied at once and the instance's spec is never written by the daemon;
#     reconcile.fluxcd.io/requestedAt is recorded in lastHandledReconcileAt;
#     a newer distribution artifact pushed to the registry (a changed
#     manifest) is rolled out by the artifact poll (reconcileArtifactEvery);
#     the registry down is an ArtifactFailed event, counted on one Event as
#     the checks fail again (as Kubernetes' recorders do), and once it is back a
#     new artifact is found; an API server outage of 30 s is ridden out (the
#     watch reconnects);
#     --log-format json lines; SIGINT: exit 0 within 10 s; the CRD refuses
#     an unknown component; a spec it lets through that does not load is
#     Ready=False BuildFailed with an event, `wait` fails
#   second_instance
#               a second instance (team-a) is refused on itself (Ready=False,
#               an event naming the owner)
#   leader      two replicas with --enable-leader-election: one leads (the Lease
#     flux-operator) and reconciles, the other does not, and neither logged
#     an ERROR while starting; the leader killed,
#     the standby takes over; SIGTERM releases the Lease at once
#   status      the status pages (--status-addr) with Flux objects in every
#     state (Ready; Failed with <script>, a URL with credentials and an ANSI
#     escape in its message; Suspended; Reconciling): their headers, the API's
#     counts equal to `report -o json`'s, each state as it is, the instance's
#     Events, its next reconcile and verification; the Failed object's
#     details (its inventory's states, condition, source, Event; only the
#     report's objects); the overview, the resources page, the details page
#     and the instance's in chromium (nothing logged, no script, the markup
#     text, no secret in the DOM; screenshots kept); a non-loopback address
#     refused without --status-insecure
#   status_auth the status pages with --status-auth kubernetes: no token and a
#     forged one 401 (WWW-Authenticate), a service account without `get` on
#     fluxinstances 403, one with it and a cluster admin's 200
#   usage       --watch with neither FILE nor --from-cluster, --from-cluster
#     without --watch, --watch with --dry-run: exit 2, naming the flag
#
# From the cluster, the instance's distribution is an artifact in a local
# registry (given_artifact), pushed once per run.
#
#   tests/e2e/daemon_test.sh BIN ROOT [CASE...]
#
# The distribution is $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else ROOT/../shared/
# flux-distribution. Closes with `N passed, M failed`; a skip (exit 77, a
# failure when CI=true) only when kubectl, curl, the distribution, the
# registry or the cluster binaries are missing.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

daemon=

command -v curl >/dev/null || skip_test "curl is not installed"
all_cases=(file cluster second_instance leader status status_auth usage)
e2e_select_cases "$@"
registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"

# ---------------------------------------------------------------------------
# The daemon

# The daemon: lib.sh's start_daemon, stop_daemon SIGNAL 10 (its exit bound
# to 10 s) and stopped_cleanly.
metrics() { curl -sf --max-time 10 "http://127.0.0.1:$metrics_port/metrics"; }
probe() { curl -sf --max-time 10 "http://127.0.0.1:$health_port/$1" >/dev/null; }

ready() { [ "$(fi_get '{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
deployment_label() { k -n "$ns" get deployment "$1" -o jsonpath="{.metadata.labels.$2}" 2>/dev/null; }
label_is() { [ "$(deployment_label "$1" "$2")" = "$3" ]; }
deployment_exists() { k -n "$ns" get deployment "$1" >/dev/null 2>&1; }
has_event() { [ -n "$(events "$1")" ]; }

# daemon_instance FILE [ANNOTATIONS_YAML] [PATCH_LABEL]: Flux 2.8 with four
# controllers (its distribution $artifact when set); the label
# test/edit=PATCH_LABEL on every Deployment when given.
daemon_instance() {
  local file=$1 annotations=${2:-} label=${3:-}
  {
    printf 'apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n  namespace: %s\n' "$ns"
    [ -z "$annotations" ] || printf '  annotations:\n%s\n' "$annotations"
    printf 'spec:\n  distribution:\n    version: "2.8.x"\n    registry: ghcr.io/fluxcd\n'
    [ -z "${artifact:-}" ] || printf '    artifact: %s\n' "$artifact"
    if [ -n "$label" ]; then
      printf '  kustomize:\n    patches:\n      - target:\n          kind: Deployment\n'
      printf '        patch: |\n          - op: add\n            path: /metadata/labels/test~1edit\n'
      printf '            value: "%s"\n' "$label"
    fi
  } >"$file"
}

# no_instance: no FluxInstance in $ns (nor a daemon's finalizer on one:
# no daemon runs to honour it); the installation stays, for the next daemon
# to take over.
no_instance() {
  exists crd fluxinstances.fluxcd.controlplane.io || return 0
  k -n "$ns" patch fluxinstance flux --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  kwait 60 -n "$ns" delete fluxinstance flux --ignore-not-found >/dev/null
}
# no_events [NAMESPACE]: no Events of an earlier instance flux in NAMESPACE
# ($ns), that a check of this case's would take for its own.
no_events() {
  k -n "${1:-$ns}" delete events --field-selector involvedObject.kind=FluxInstance,involvedObject.name=flux >/dev/null
}
# given_artifact: $artifact, a distribution of the one 2.8 version in a
# local registry ($small, to be changed and pushed again; the version in
# $version); pushed once per run.
given_artifact() {
  [ -z "${artifact:-}" ] || return 0
  local revision
  daemon_instance "$work/version.yaml"
  revision=$(XDG_CACHE_HOME=$work/cache timeout -k 5 300 "$bin" build --operator "$work/version.yaml" -v \
    --distribution-artifact "$dist" 2>&1 >/dev/null | sed -n 's/^revision: //p')
  version=$(sed -n 's/^v\([0-9.]*\)@.*/\1/p' <<<"$revision")
  [ -n "$version" ] || { echo "fluxopctl build -v names no revision"; return 1; }
  registry_start "$work/registry" >/dev/null || { echo "the local registry did not start"; return 1; }
  small=$work/small
  mkdir -p "$small/flux" "$small/flux-images"
  cp -r "$dist/flux/v$version" "$small/flux/" && cp -r "$dist/flux-images/v$version" "$small/flux-images/"
  registry_push_artifact flux-manifests:latest "$small" flux flux-images >/dev/null ||
    { echo "pushing the distribution failed"; return 1; }
  artifact=oci://$REGISTRY_ADDR/flux-manifests:latest
}
# kubectl_applies FILE: kubectl (the user, kubectl-user) applies the instance.
kubectl_applies() {
  k apply --server-side --field-manager=kubectl-user -f "$1" >"$work/kubectl.out" 2>&1 ||
    { head -n 1 "$work/kubectl.out"; return 1; }
}

# ---------------------------------------------------------------------------
e2e_cluster_up "$work/cluster"
k create namespace "$ns" >/dev/null

# --- from a file -------------------------------------------------------------
# The file is what a ConfigMap volume mounts: DIR/instance.yaml ->
# ..data/instance.yaml, ..data -> ..v1.
installed() { ready && label_is source-controller test/edit one; }
outdated() { events OutdatedVersion | grep -q "^Normal Flux v2\.8\.[0-9]* is outdated, the latest stable version is v"; }
instance_metrics() {
  local out
  out=$(metrics) || { echo "GET /metrics failed"; return 1; }
  grep -q '^flux_instance_info{.*name="flux".*ready="True".*' <<<"$out" ||
    { echo "no flux_instance_info ready=True"; grep flux_instance_info <<<"$out"; return 1; }
  # The uid of the instance the file's apply made (the file has none).
  local uid
  uid=$(fi_get '{.metadata.uid}')
  grep -q "^flux_instance_info{.*uid=\"$uid\"" <<<"$out" ||
    { echo "flux_instance_info's uid is not $uid"; grep flux_instance_info <<<"$out"; return 1; }
  grep -q '^controller_runtime_reconcile_total{controller="fluxinstance",result="requeue_after"} [1-9]' <<<"$out" ||
    { echo "no successful reconcile counted"; grep reconcile_total <<<"$out"; return 1; }
  grep -q '^process_start_time_seconds ' <<<"$out" || { echo "no process metrics"; return 1; }
}
changes_seen() { grep -c "the FluxInstance changed" "$log"; }
first_reading() {
  [ "$before" = 0 ] || { echo "the start was logged as a change"; return 1; }
  grep -q "reconciling the FluxInstance" "$log" || { echo "no first reconcile logged"; return 1; }
  ! grep -q "controllerGroup=" "$log" || { echo "the text log repeats the constant fields"; return 1; }
}
suspended() { metrics | grep -q '^flux_instance_info{.*suspended="True"'; }
# An absence can only be watched for a while: three reconcile intervals.
stays_deleted() {
  local deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    ! deployment_exists helm-controller || { echo "restored while disabled"; return 1; }
    sleep 1
  done
}
case_file() {
  local volume=$work/volume every='    fluxcd.controlplane.io/reconcileEvery: "10s"' before artifact=
  check "file: no instance in the cluster to start from" no_instance || return
  check "file: no Events of an earlier instance" no_events || return
  rm -rf "$volume"
  mkdir -p "$volume/..v1"
  daemon_instance "$volume/..v1/instance.yaml" "$every" one
  ln -s ..v1 "$volume/..data"
  ln -s ..data/instance.yaml "$volume/instance.yaml"
  start_daemon file "$volume/instance.yaml" --distribution-artifact "$dist"

  check "file: the instance is installed and Ready" wait_until 300 installed
  check "file: an event says it was installed" has_event ReconciliationSucceeded
  check "file: an event says Flux 2.8 is outdated" outdated
  check "file: /healthz and /readyz answer" eval 'probe healthz && probe readyz'
  check "file: /metrics exports the instance and its reconciles" instance_metrics

  # An edit in place: its reconcile starts within 5 s (the daemon's part;
  # the apply's own time is the cluster's) and applies it.
  before=$(changes_seen)
  check "file: the start is no change, the text log without constant fields" first_reading
  daemon_instance "$volume/..v1/instance.yaml" "$every" two
  check "file: an edit starts a reconcile within 5 s" wait_until 5 eval '[ "$(changes_seen)" -gt "$before" ]'
  check "file: an edit of the file is applied" wait_until 120 label_is source-controller test/edit two

  # A ConfigMap update: a new directory, the ..data symlink swapped.
  mkdir -p "$volume/..v2"
  daemon_instance "$volume/..v2/instance.yaml" "$every" three
  ln -s ..v2 "$volume/..data_tmp" && mv -T "$volume/..data_tmp" "$volume/..data"
  check "file: a ConfigMap volume's symlink swap is applied" wait_until 120 label_is source-controller test/edit three

  # Drift: a deleted Deployment comes back at the next reconcile (10 s).
  k -n "$ns" delete deployment helm-controller --wait=false >/dev/null
  check "file: a deleted Deployment is restored" wait_until 120 deployment_exists helm-controller

  # Disabled: nothing is reconciled, an event and the metrics say so.
  daemon_instance "$volume/..v2/instance.yaml" "$every
    fluxcd.controlplane.io/reconcile: disabled" three
  check "file: reconcile disabled is recorded as an event" wait_until 60 has_event ReconciliationDisabled
  check "file: flux_instance_info says suspended" wait_until 30 suspended
  k -n "$ns" delete deployment helm-controller --wait=false >/dev/null
  check "file: while disabled, drift is left alone" stays_deleted
  daemon_instance "$volume/..v2/instance.yaml" "$every" three
  check "file: enabled again, the drift is corrected" wait_until 120 deployment_exists helm-controller

  # A file that does not parse: logged, nothing applied, the last state kept.
  echo "spec: [" >"$volume/..v2/instance.yaml"
  check "file: an unreadable file is logged" wait_until 30 logged "cannot read the FluxInstance"
  check "file: the daemon keeps running" running "$daemon"
  daemon_instance "$volume/..v2/instance.yaml" "$every" four
  check "file: a fixed file is applied" wait_until 120 label_is source-controller test/edit four
  stop_daemon TERM 10
  check "file: SIGTERM ends it with exit 0 within 10 s" stopped_cleanly
}

# --- from the cluster ----------------------------------------------------------
initialized_disabled() {
  [ "$(fi_get '{.status.conditions[?(@.type=="Ready")].reason}')" = ReconciliationDisabled ] &&
    [ "$(fi_get '{.status.conditions[?(@.type=="Ready")].message}')" = "Initialized with reconciliation suspended" ]
}
relabel() { # relabel VALUE: the instance's patch sets test/edit=VALUE
  k -n "$ns" patch fluxinstance flux --type=json --field-manager=kubectl-user \
    -p '[{"op":"replace","path":"/spec/kustomize/patches/0/patch","value":"- op: add\n  path: /metadata/labels/test~1edit\n  value: \"'"$1"'\"\n"}]' >/dev/null
}
# (The daemon writes the status, and the finalizer in the metadata.)
spec_managers() {
  k -n "$ns" get fluxinstance flux -o json --show-managed-fields |
    python3 -c 'import json,sys; print("\n".join(sorted({m["manager"] for m in json.load(sys.stdin)["metadata"]["managedFields"] if "f:spec" in m.get("fieldsV1", {})})))'
}
request_handled() { [ "$(fi_get '{.status.lastHandledReconcileAt}')" = "$requested" ]; }
# An unknown component: the CRD refuses it, as the operator's does.
unknown_refused() {
  if k -n "$ns" patch fluxinstance flux --type=merge \
    -p '{"spec":{"components":["source-controller","foo-controller"]}}' >"$work/patch.out" 2>&1; then
    echo "the patch was accepted"
    return 1
  fi
  grep -q foo-controller "$work/patch.out" || { head -n 1 "$work/patch.out"; return 1; }
}
duplicate_event() { events BuildFailed | grep -q "duplicate source-controller"; }
wait_fails() { # wait_fails WORD: `fluxopctl wait` fails at once, naming WORD
  fx wait wait -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 60s
  [ "$rc" != 0 ] && grep -q -- "$1" "$work/wait.err" || { echo "exit $rc: $(head -n 1 "$work/wait.err")"; return 1; }
}
artifact_failed() { events ArtifactFailed | grep -q "fetch failed"; }
# Each failed check again is the same event: one Event, its count grown.
artifact_failed_counted() {
  local counts
  counts=$(k -n "$ns" get events -o jsonpath='{range .items[*]}{.count}{"\n"}{end}' \
    --field-selector "involvedObject.kind=FluxInstance,involvedObject.name=flux,reason=ArtifactFailed")
  [ "$(grep -c . <<<"$counts")" = 1 ] && [ "$counts" -ge 2 ] ||
    { echo "the ArtifactFailed Events' counts: $(tr '\n' ' ' <<<"$counts")"; events ArtifactFailed | head -n 3; return 1; }
}
json_log() { python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' <"$log" 2>&1; }
# new_artifact: a label added to source-controller's manifest, pushed.
new_artifact() {
  chmod -R u+w "$small"
  python3 - "$small/flux/v$version/source-controller.yaml" <<'ENDOFPY'
import re, sys
text = open(sys.argv[1]).read()
# The Deployment's labels get one more.
text = re.sub(r"(kind: Deployment\nmetadata:\n  labels:\n)", r"\1    test/artifact: new\n", text, count=1)
open(sys.argv[1], "w").write(text)
ENDOFPY
  registry_push_artifact flux-manifests:latest "$small" flux flux-images >/dev/null
}
case_cluster() {
  local requested
  given "cluster: the distribution in a local registry" given_artifact || return
  # The instance the file's daemon (or another case) applied goes; the
  # daemon takes the installation over from the cluster's own instance.
  check "cluster: no instance in the cluster to start from" no_instance || return
  check "cluster: no Events of an earlier instance" no_events || return
  # Disabled before any reconcile: the status says so, as the operator
  # initializes it; enabled, it is reconciled.
  daemon_instance "$work/cluster-instance.yaml" '    fluxcd.controlplane.io/reconcileArtifactEvery: "5s"
    fluxcd.controlplane.io/reconcile: disabled' five
  check "cluster: kubectl apply of the instance, disabled" kubectl_applies "$work/cluster-instance.yaml"
  start_daemon cluster --from-cluster -n "$ns" --log-format json
  check "cluster: disabled before any reconcile, the status says so" wait_until 60 initialized_disabled
  daemon_instance "$work/cluster-instance.yaml" '    fluxcd.controlplane.io/reconcileArtifactEvery: "5s"' five
  check "cluster: kubectl apply of the instance, enabled" kubectl_applies "$work/cluster-instance.yaml"
  check "cluster: the instance in the cluster is applied" wait_until 300 label_is source-controller test/edit five

  relabel six
  check "cluster: a patch of the instance is applied" wait_until 120 label_is source-controller test/edit six
  check "cluster: the daemon never writes the instance's spec" eval '[ "$(spec_managers)" = kubectl-user ] || { spec_managers; false; }'

  requested=$(date +%s)
  k -n "$ns" annotate fluxinstance flux --overwrite "reconcile.fluxcd.io/requestedAt=$requested" >/dev/null
  check "cluster: requestedAt is handled" wait_until 120 request_handled

  check "cluster: the CRD refuses an unknown component" unknown_refused
  # A spec the CRD lets through but that does not load (a component listed
  # twice): not Ready for its generation, BuildFailed, an event, and `wait`
  # fails naming it; fixed, it is reconciled.
  k -n "$ns" patch fluxinstance flux --type=merge --field-manager=kubectl-user \
    -p '{"spec":{"components":["source-controller","source-controller"]}}' >/dev/null
  check "cluster: an instance that does not load is Ready=False BuildFailed" wait_until 60 ready_current False BuildFailed
  check "cluster: an event says why it does not load" wait_until 30 duplicate_event
  check "cluster: wait fails naming BuildFailed" wait_fails BuildFailed
  k -n "$ns" patch fluxinstance flux --type=json --field-manager=kubectl-user \
    -p '[{"op":"remove","path":"/spec/components"}]' >/dev/null
  check "cluster: fixed, the instance is reconciled" wait_until 120 ready_current True ReconciliationSucceeded

  # The registry down: the artifact check fails (an ArtifactFailed event) and
  # is retried; once it is back (same port, same storage), a new artifact is
  # found without anyone acting.
  registry_stop
  check "cluster: a registry down is an ArtifactFailed event" wait_until 60 artifact_failed
  check "cluster: the failing checks are counted on one ArtifactFailed Event" wait_until 120 artifact_failed_counted
  check "cluster: the daemon keeps running while the registry is down" running "$daemon"
  setpriv --pdeathsig TERM docker-registry serve "$REGISTRY_DIR/config.yml" >>"$REGISTRY_LOG" 2>&1 &
  REGISTRY_PID=$!
  REGISTRY_ALL_PIDS+=("$REGISTRY_PID")
  wait_until 60 eval 'curl -sf -o /dev/null --max-time 5 "$REGISTRY_URL/v2/"' || fail "cluster: registry" "did not start again"
  new_artifact || fail "cluster: pushing the new artifact" "failed"
  check "cluster: a new artifact digest is rolled out, the registry back" wait_until 180 label_is source-controller test/artifact new
  # An API server outage of 30 s: the watch reconnects (with its backoff)
  # and a change made after it is applied.
  if "$root/scripts/cluster" stop-apiserver >/dev/null 2>"$work/stop.err"; then
    sleep 30 # the outage itself, not a wait for a condition
    "$root/scripts/cluster" start-apiserver >/dev/null 2>"$work/start.err" ||
      fail "cluster: start-apiserver" "$(tail -n 1 "$work/start.err")"
    wait_until 120 eval 'k get namespace "$ns" >/dev/null 2>&1' || fail "cluster: the API server" "not back"
    relabel seven
    check "cluster: after an API server outage, a change is applied" wait_until 180 label_is source-controller test/edit seven
    check "cluster: the daemon ran through the outage" running "$daemon"
  else
    fail "cluster: stop-apiserver" "$(tail -n 1 "$work/stop.err")"
  fi
  check "cluster: --log-format json logs JSON lines" json_log
  stop_daemon INT 10
  check "cluster: SIGINT ends it with exit 0 within 10 s" stopped_cleanly
}

# given_owner: an instance in $ns, whose distribution is the registry's
# artifact: the one there, else one installed by apply.
given_owner() {
  given_artifact || return 1
  [ "$(fi_get '{.spec.distribution.artifact}')" = "$artifact" ] && return 0
  no_instance || return 1
  daemon_instance "$work/owner.yaml" '    fluxcd.controlplane.io/reconcileArtifactEvery: "5s"' five
  install "$work/owner.yaml"
}

# --- a second instance -------------------------------------------------------------
# In team-a: its daemon refuses it, and says so on it (Ready=False, an
# event), naming the instance that owns the cluster, which it leaves alone.
second_refused() {
  local got
  got=$(ns=team-a fi_get '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}: {.status.conditions[?(@.type=="Ready")].message}')
  [ "$got" = "False ReconciliationFailed: FluxInstance $ns/flux already manages Flux on this cluster; there can be only one (delete it first, or apply it instead)" ] ||
    { echo "Ready: $got"; return 1; }
}
refused_event() { ns=team-a events ReconciliationFailed | grep -q "FluxInstance $ns/flux already manages Flux"; }
case_second_instance() {
  local owner_version
  given "second_instance: an instance in $ns owns the cluster" given_owner || return
  owner_version=$(instance_version)
  k create namespace team-a --dry-run=client -o yaml | k apply -f - >/dev/null
  check "second_instance: no Events of an earlier instance in team-a" no_events team-a || return
  daemon_instance "$work/second.yaml" '    fluxcd.controlplane.io/reconcileArtifactEvery: "5s"' five
  sed "s/namespace: $ns$/namespace: team-a/" "$work/second.yaml" >"$work/team-a.yaml"
  check "second_instance: kubectl apply of the second instance" kubectl_applies "$work/team-a.yaml"
  start_daemon team-a --from-cluster -n team-a
  check "second_instance: a second instance refused is Ready=False, naming the owner" wait_until 60 second_refused
  check "second_instance: an event on the second instance says why" wait_until 30 refused_event
  check "second_instance: the instance that owns the cluster is not touched" \
    eval '[ "$(instance_version)" = "$owner_version" ]'
  stop_daemon TERM 10
  k -n team-a delete fluxinstance flux >/dev/null
}

# --- two replicas, one leader ------------------------------------------------------
# Short leases, so that a takeover is quick: 4 s, renewed every second.
election=(--enable-leader-election --leader-election-lease-duration 4s
  --leader-election-renew-deadline 3s --leader-election-retry-period 1s)
replica() { # replica N: a daemon from the cluster, its pid in replica_N
  XDG_CACHE_HOME=$work/cache "$bin" apply --watch --from-cluster -n "$ns" --kubeconfig "$KUBECONFIG" \
    --timeout 3m "${election[@]}" >/dev/null 2>"$work/replica$1.log" &
  eval "replica_$1=$!"
}
holder() { k -n "$ns" get lease flux-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
leaders() { grep -l "acquired the leader Lease" "$work"/replica?.log 2>/dev/null | wc -l; }
one_leader() { [ -n "$(holder)" ] && [ "$(leaders)" = 1 ]; }
no_error_logged() { ! grep -h ' ERROR ' "$work"/replica?.log; }
standby_took_over() { grep -q "acquired the leader Lease" "$standby_log"; }
released() { [ -z "$(holder)" ]; }
case_leader() {
  local replica_1 replica_2 leader_log leader standby standby_log requested
  given "leader: an instance in $ns whose distribution is the registry's" given_owner || return
  rm -f "$work"/replica?.log
  replica 1
  replica 2
  check "leader: one of two replicas leads" wait_until 60 one_leader
  check "leader: neither replica logged an ERROR while starting" no_error_logged
  leader_log=$(grep -l "acquired the leader Lease" "$work"/replica?.log | head -n 1)
  leader=$replica_1 standby=$replica_2 standby_log=$work/replica2.log
  [ "$leader_log" = "$work/replica1.log" ] || { leader=$replica_2 standby=$replica_1 standby_log=$work/replica1.log; }
  show "$leader_log"
  requested=$(date +%s%N)
  k -n "$ns" annotate fluxinstance flux --overwrite "reconcile.fluxcd.io/requestedAt=$requested" >/dev/null
  check "leader: the leader reconciles" wait_until 120 request_handled
  check "leader: the standby does not" eval '! grep -q "Reconciliation finished" "$standby_log"'
  # The leader dies without releasing the Lease: the standby takes over once it
  # has seen the Lease unrenewed for its duration.
  kill -9 "$leader"
  wait "$leader" 2>/dev/null
  show "$standby_log"
  check "leader: the standby takes over from a dead leader" wait_until 60 standby_took_over
  requested=$(date +%s%N)
  k -n "$ns" annotate fluxinstance flux --overwrite "reconcile.fluxcd.io/requestedAt=$requested" >/dev/null
  check "leader: the new leader reconciles" wait_until 120 request_handled
  daemon=$standby
  stop_daemon TERM 10
  check "leader: SIGTERM exits 0 within 10 s" stopped_cleanly
  check "leader: the Lease is released on SIGTERM" released
}

# --- the status pages ---------------------------------------------------------
# Flux objects of every state in $status_ns, their statuses written as the
# controllers would (none runs here).
status_ns=status-pages
status_objects() {
  cat <<'YAML'
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ready-one, namespace: status-pages}
spec: {interval: 10m, prune: true, path: ./apps, sourceRef: {kind: GitRepository, name: repo}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: failed-one, namespace: status-pages}
spec: {interval: 10m, prune: true, path: ./apps, sourceRef: {kind: GitRepository, name: repo}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: suspended-one, namespace: status-pages}
spec: {interval: 10m, url: "https://example.com/repo.git", suspend: true}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: reconciling-one, namespace: status-pages}
spec: {interval: 10m, chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}}}
YAML
}
# condition TYPE STATUS REASON MESSAGE: one condition as JSON.
condition() {
  jq -cn --arg t "$1" --arg s "$2" --arg r "$3" --arg m "$4" \
    '{type: $t, status: $s, reason: $r, message: $m, lastTransitionTime: "2026-12-07T00:00:00Z"}'
}
# set_conditions KIND NAME CONDITION_JSON...
set_conditions() {
  local kind=$1 name=$2
  shift 2
  k -n "$status_ns" patch "$kind" "$name" --subresource=status --type=merge \
    -p "$(jq -cn '{status: {conditions: $ARGS.positional}}' --jsonargs "$@")" >/dev/null
}
hostile_message=$'<script>alert(1)</script> "x" pull https://bot:s3cret@git.example/repo?token=t0ken \e[31mred'
given_status_objects() {
  k create namespace "$status_ns" --dry-run=client -o yaml | k apply -f - >/dev/null &&
    status_objects | k apply -f - >/dev/null &&
    set_conditions kustomization ready-one "$(condition Ready True ReconciliationSucceeded 'Applied revision: main@sha1:abc')" &&
    set_conditions kustomization failed-one "$(condition Ready False BuildFailed "$hostile_message")" &&
    set_conditions helmrelease reconciling-one "$(condition Reconciling True Progressing 'Fresh install in progress')" \
      "$(condition Ready Unknown Progressing 'Fresh install in progress')"
}
# given_details: failed-one applied a ConfigMap (there), a Secret (there)
# and a ConfigMap since deleted, as its inventory says; a Warning Event on
# it holds the hostile message.
given_details() {
  k -n "$status_ns" create configmap tree-config --dry-run=client -o yaml | k apply -f - >/dev/null &&
    k -n "$status_ns" create secret generic tree-secret --from-literal=token=t0ken --dry-run=client -o yaml |
    k apply -f - >/dev/null &&
    k -n "$status_ns" patch kustomization failed-one --subresource=status --type=merge -p \
      "{\"status\": {\"inventory\": {\"entries\": [{\"id\": \"${status_ns}_tree-config__ConfigMap\", \"v\": \"v1\"}, {\"id\": \"${status_ns}_tree-secret__Secret\", \"v\": \"v1\"}, {\"id\": \"${status_ns}_gone__ConfigMap\", \"v\": \"v1\"}]}}}" >/dev/null &&
    jq -cn --arg m "$hostile_message" --arg ns "$status_ns" '{apiVersion: "v1", kind: "Event",
      metadata: {name: "failed-one.details", namespace: $ns},
      involvedObject: {apiVersion: "kustomize.toolkit.fluxcd.io/v1", kind: "Kustomization", name: "failed-one", namespace: $ns},
      reason: "BuildFailed", message: $m, type: "Warning", count: 1, source: {component: "kustomize-controller"},
      firstTimestamp: "2026-12-07T00:00:00Z", lastTimestamp: "2026-12-07T00:00:00Z"}' | k apply -f - >/dev/null
}
details_path="/resource?kind=Kustomization&namespace=$status_ns&name=failed-one"
# The details' API: the conditions, the source, the Event, the inventory's
# states in its order, nothing secret.
details_api_holds() {
  local details
  details=$(status_get "/api/v1${details_path}") || { echo "GET /api/v1${details_path} failed"; return 1; }
  jq -e --arg ns "$status_ns" '.ready == "False" and .conditions[0].reason == "BuildFailed" and
    .source == {kind: "GitRepository", namespace: $ns, name: "repo"} and
    (.events | any(.reason == "BuildFailed" and .type == "Warning")) and
    ([.inventory.resources[] | "\(.kind)/\(.name)=\(.state)"] == ["ConfigMap/tree-config=Ready", "Secret/tree-secret=NotRead", "ConfigMap/gone=NotFound"])' \
    <<<"$details" >/dev/null || { echo "$details" | head -c 600; return 1; }
  ! grep -q -e s3cret -e t0ken <<<"$details" || { echo "a secret in the details"; return 1; }
}
code_of() { curl -s -o /dev/null -w '%{http_code}' --max-time 20 "$(status_url "$1")"; }
status_url() { printf 'http://127.0.0.1:%s%s' "$status_port" "$1"; }
status_get() { curl -sf --max-time 10 "$(status_url "$1")"; }
# The daemon reported the objects (a report follows each reconcile).
status_reported() {
  [ "$(status_get "/api/v1/resources?namespace=$status_ns" | jq '.matching')" = 4 ]
}
status_headers_hold() {
  local headers
  headers=$(curl -sfI --max-time 10 "$(status_url /)" | tr -d '\r') || { echo "HEAD / failed"; return 1; }
  grep -q "^Content-Security-Policy: default-src 'none'; style-src 'sha256-[^']*'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'$" <<<"$headers" &&
    grep -q '^X-Content-Type-Options: nosniff$' <<<"$headers" &&
    grep -q '^Cache-Control: no-store$' <<<"$headers" &&
    grep -q '^Content-Type: text/html; charset=utf-8$' <<<"$headers" || { echo "$headers"; return 1; }
}
# Each object's state, as the API lists them: "NAME=STATE ...", by name.
api_states() {
  status_get "/api/v1/resources?namespace=$status_ns" | jq -r '[.items[] | "\(.name)=\(.state)"] | sort | join(" ")'
}
# The API's counts are report -o json's: per kind, and the states summed
# over the Flux kinds.
counts_agree() {
  local api report
  api=$(status_get /api/v1/overview) || { echo "GET /api/v1/overview failed"; return 1; }
  report=$(cat "$work/status-report.out")
  local theirs ours
  theirs=$(jq -c '[.spec.reconcilers[] | {kind, stats: (.stats | {running, failing, suspended})}] | sort_by(.kind)' <<<"$report")
  ours=$(jq -c '[.report.reconcilers[] | {kind, stats: (.stats | {running, failing, suspended})}] | sort_by(.kind)' <<<"$api")
  [ "$theirs" = "$ours" ] || { echo "report: $theirs"; echo "pages: $ours"; return 1; }
  # The resources are the Flux CRDs' objects; the report counts the
  # operator's kinds (the FluxInstance) besides.
  jq -e --argjson r "$report" '
    [$r.spec.reconcilers[] | select(.apiVersion | startswith("fluxcd.controlplane.io/") | not) | .stats] as $flux |
    ([$flux[].failing] | add) as $failing |
    ([$flux[].suspended] | add) as $suspended |
    ([$flux[] | .running + .suspended] | add) as $total |
    .resources.states.Failed == $failing and .resources.states.Suspended == $suspended and .resources.total == $total' \
    <<<"$api" >/dev/null || { jq -c .resources <<<"$api"; return 1; }
}
status_page() { python3 "$root/tests/e2e/html_page.py" "$work/$1.dom" "$2" >"$work/$1.page.json"; }
status_page_has() {
  jq -e "$2" "$work/$1.page.json" >/dev/null || { jq -c '{tags, active, rows}' "$work/$1.page.json"; return 1; }
}
no_console() { [ ! -s "$work/$1.console" ] || { cat "$work/$1.console"; return 1; }; }
# Nothing on the page runs, and every link stays on the daemon's pages.
only_own_links='(.tags | any(. == "script") | not) and (.active | all(test("^(a href|form action)=/([^/]|$)")))'
case_status() {
  local every='    fluxcd.controlplane.io/reconcileEvery: "10s"'
  check "status: no instance in the cluster to start from" no_instance || return
  check "status: no objects of an earlier run" kwait 120 delete namespace "$status_ns" --ignore-not-found || return
  daemon_instance "$work/status-instance.yaml" "$every"
  status_port=$(registry_free_port)
  start_daemon status "$work/status-instance.yaml" --distribution-artifact "$dist" \
    --status-addr "127.0.0.1:$status_port"
  check "status: the instance is installed and Ready" wait_until 300 ready || { stop_daemon; return; }
  check "status: Flux objects in every state" given_status_objects
  check "status: a reconcile's report shows them" wait_until 120 status_reported
  check "status: the headers: the policy, nosniff, no caching" status_headers_hold
  check "status: each object's state, as it is" \
    test "$(api_states)" = "failed-one=Failed ready-one=Ready reconciling-one=Reconciling suspended-one=Suspended"
  fx status-report report --kubeconfig "$KUBECONFIG" -o json
  check "status: report -o json" exit_is 0 status-report
  check "status: the counts are report -o json's" counts_agree
  check "status: the overview has the next reconcile (an instant near now: every 10 s) and says the signatures are not verified" \
    eval 'status_get /api/v1/overview | jq -e --arg now "$(date -u -d "-5 minutes" +%FT%TZ)" --arg later "$(date -u -d "+5 minutes" +%FT%TZ)" \
      ".instance.nextReconcile >= \$now and .instance.nextReconcile <= \$later and (.instance.verification | startswith(\"not verified\"))" >/dev/null'
  check "status: the overview has the instance's Events" \
    eval 'status_get /api/v1/overview | jq -e ".events | any(.reason == \"ReconciliationSucceeded\")" >/dev/null'
  check "status: the API redacts the credentials" \
    eval '! status_get /api/v1/resources | grep -q -e s3cret -e t0ken'
  check "status: a failing object's inventory and Event" given_details
  check "status: its details, read when asked: conditions, source, Event, inventory states" details_api_holds
  fx status-tree-hr tree hr reconciling-one -n "$status_ns" --kubeconfig "$KUBECONFIG"
  check "status: tree of a HelmRelease that keeps no inventory: its line, and why on stderr" \
    eval 'exit_is 0 status-tree-hr && [ "$(wc -l <"$work/status-tree-hr.out")" = 1 ] &&
      out_has status-tree-hr "^HelmRelease/$status_ns/reconciling-one  InProgress" &&
      err_has status-tree-hr "keeps no inventory: a HelmRelease keeps one since Flux 2.8"'
  check "status: details only of the report's objects: a ConfigMap is 404, a missing name 400" \
    eval '[ "$(code_of "/resource?kind=ConfigMap&namespace=$status_ns&name=tree-config")" = 404 ] &&
      [ "$(code_of "/api/v1/resource?kind=Kustomization&namespace=$status_ns")" = 400 ]'
  if command -v chromium >/dev/null; then
    check "status: chromium loads the overview" e2e_browse status-overview "$(status_url /)"
    status_page status-overview states
    check "status: chromium: the overview logged nothing" no_console status-overview
    check "status: chromium: the overview counts the four states, and nothing runs" \
      status_page_has status-overview "(.rows | length == 5) and ([.rows[1:][][0]] == [\"Failed\", \"Reconciling\", \"Suspended\", \"Ready\"]) and (.text | contains(\"ReconciliationSucceeded\")) and $only_own_links"
    check "status: chromium loads the resources page, filtered" \
      e2e_browse status-resources "$(status_url "/resources?namespace=$status_ns")"
    status_page status-resources resources
    check "status: chromium: the resources page logged nothing" no_console status-resources
    check "status: chromium: failing first, each state as it is" \
      status_page_has status-resources '[.rows[1:][] | [.[0], .[3]]] == [["Failed", "failed-one"], ["Reconciling", "reconciling-one"], ["Suspended", "suspended-one"], ["Ready", "ready-one"]]'
    check "status: chromium: the hostile message is text, its secrets redacted, nothing runs" \
      status_page_has status-resources "(.text | contains(\"<script>alert(1)</script>\")) and (.text | contains(\"https://***@git.example\")) and (.text | test(\"s3cret|t0ken|\u001b\") | not) and $only_own_links"
    check "status: chromium loads a failing object's details" e2e_browse status-details "$(status_url "$details_path")"
    status_page status-details summary
    check "status: chromium: the details page logged nothing" no_console status-details
    check "status: chromium: its conditions, Event and inventory tree, the hostile message as text, nothing runs" \
      status_page_has status-details "(.text | contains(\"ConfigMap/$status_ns/tree-config\")) and (.text | contains(\"NotRead\")) and (.text | contains(\"NotFound\")) and (.text | contains(\"GitRepository/$status_ns/repo\")) and (.text | contains(\"<script>alert(1)</script>\")) and (.text | test(\"s3cret|t0ken|\u001b\") | not) and $only_own_links"
    check "status: chromium loads the FluxInstance's details" \
      e2e_browse status-instance "$(status_url "/resource?kind=FluxInstance&namespace=$ns&name=flux")"
    status_page status-instance summary
    check "status: chromium: what the instance applied, Ready" \
      status_page_has status-instance "(.text | test(\"Ready Deployment/$ns/source-controller\")) and $only_own_links"
  else
    skip "status: in a real browser" "chromium is not installed"
  fi
  stop_daemon TERM 10
  check "status: SIGTERM exits 0 within 10 s" stopped_cleanly
  # Objects of its own would count in the next cases' reports.
  kwait 120 delete namespace "$status_ns" --ignore-not-found >/dev/null

  fx status-exposed apply --watch "$work/status-instance.yaml" --status-addr "0.0.0.0:$status_port"
  check "status: a non-loopback address needs --status-insecure" usage_error status-exposed --status-insecure
}

# --- the status pages, for users the API server vouches for -------------------
# given_accounts: the service accounts status-reader (may get fluxinstances in
# $ns), status-stranger (may not) and status-admin (cluster-admin).
given_accounts() {
  local account
  for account in status-reader status-stranger status-admin; do
    k -n "$ns" create serviceaccount "$account" --dry-run=client -o yaml | k apply -f - >/dev/null || return 1
  done
  k -n "$ns" create role status-reader --verb=get --resource=fluxinstances.fluxcd.controlplane.io \
    --dry-run=client -o yaml | k apply -f - >/dev/null &&
    k -n "$ns" create rolebinding status-reader --role=status-reader --serviceaccount="$ns:status-reader" \
      --dry-run=client -o yaml | k apply -f - >/dev/null &&
    k create clusterrolebinding status-admin --clusterrole=cluster-admin --serviceaccount="$ns:status-admin" \
      --dry-run=client -o yaml | k apply -f - >/dev/null
}
token_of() { k -n "$ns" create token "$1"; }
# answer_is CODE PATH [TOKEN]: the page's status code, asked with TOKEN.
answer_is() {
  local code auth=()
  [ -z "${3:-}" ] || auth=(-H "Authorization: Bearer $3")
  code=$(curl -s -o "$work/status-auth.body" -D "$work/status-auth.headers" -w '%{http_code}' --max-time 20 \
    "${auth[@]}" "$(status_url "$2")")
  [ "$code" = "$1" ] || { echo "$code, not $1: $(head -c 200 "$work/status-auth.body")"; return 1; }
}
asks_for_bearer() { tr -d '\r' <"$work/status-auth.headers" | grep -q '^WWW-Authenticate: Bearer'; }
case_status_auth() {
  daemon_instance "$work/status-auth-instance.yaml"
  status_port=$(registry_free_port)
  start_daemon status-auth "$work/status-auth-instance.yaml" --distribution-artifact "$dist" \
    --status-addr "127.0.0.1:$status_port" --status-auth kubernetes
  # The reader's Role names the FluxInstance CRD, which the daemon installs.
  check "status_auth: the instance is installed and Ready" wait_until 300 ready || { stop_daemon; return; }
  check "status_auth: the service accounts" given_accounts || { stop_daemon; return; }
  local reader stranger admin
  reader=$(token_of status-reader) && stranger=$(token_of status-stranger) && admin=$(token_of status-admin)
  check "status_auth: their tokens" test -n "$reader" -a -n "$stranger" -a -n "$admin"
  check "status_auth: the reader's page, once reported" wait_until 300 answer_is 200 / "$reader"
  check "status_auth: no token: 401" answer_is 401 /
  check "status_auth: 401 asks for a bearer token" asks_for_bearer
  check "status_auth: a forged token: 401" answer_is 401 /api/v1/overview forged-token
  check "status_auth: a user who may not get fluxinstances: 403" answer_is 403 /api/v1/overview "$stranger"
  check "status_auth: the reader: 200" answer_is 200 /api/v1/resources "$reader"
  check "status_auth: the cluster admin: 200" answer_is 200 /resources "$admin"
  stop_daemon TERM 10
  check "status_auth: SIGTERM exits 0 within 10 s" stopped_cleanly
  k delete clusterrolebinding status-admin --ignore-not-found >/dev/null
}

# --- usage ---------------------------------------------------------------------
case_usage() {
  daemon_instance "$work/usage-instance.yaml"
  fx usage-no-file apply --watch
  check "usage: --watch needs FILE or --from-cluster" usage_error usage-no-file --from-cluster
  fx usage-no-watch apply --from-cluster
  check "usage: --from-cluster needs --watch" usage_error usage-no-watch "only with --watch"
  fx usage-dry-run apply --watch "$work/usage-instance.yaml" --dry-run=server
  check "usage: --watch is not a dry run" usage_error usage-dry-run --dry-run
}

e2e_run_cases
summary
