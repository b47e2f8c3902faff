#!/usr/bin/env bash
# Smoke test of the real Flux controllers (scripts/flux-controllers) on a
# local control plane of its own: `fluxopctl apply` of a Flux 2.9 instance
# whose sync is an OCIRepository in a loopback registry (TLS, a throwaway CA),
# pushed with the real flux CLI; then what the controllers do is checked as a
# user would see it:
#   - source-controller and kustomize-controller run as host processes once
#     their pods are Running;
#   - the OCIRepository is Ready with the pushed revision, its artifact served
#     by source-controller on 127.0.0.1;
#   - the Kustomization is Ready at that revision, and the objects of the
#     artifact (the namespace apps, three ConfigMaps) exist, applied by
#     kustomize-controller (their managed fields say so);
#   - a HelmRelease of a chart in a loopback Helm repository is installed by
#     helm-controller (its ConfigMap, the release's Secret);
#   - a new artifact pushed is applied (a ConfigMap changed, one pruned);
#   - the Deployment kustomize-controller deleted, its process stops (after
#     the stop lag), the others keep running; apply again, it runs again;
#   - stop ends the supervisor and every controller.
#
#   tests/e2e/flux_controllers_smoke.sh BIN ROOT
#
# Closes with `N passed, M failed`. A skip (exit 77; a failure when CI=true,
# see tests/lib/skip.sh) when the controllers, the flux CLI or the cluster
# cannot be built (no Go), docker-registry cannot be installed or there is no
# distribution.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=$root/../shared/flux-distribution
source "$root/tests/e2e/lib.sh"
# shellcheck source=scripts/lib/flux-controllers.sh
source "$root/scripts/lib/flux-controllers.sh"

work=$(mktemp -d)
controllers=$work/controllers
# A safety net should the test be killed before its cleanup: longer than any run.
export REGISTRY_LIFETIME=1200
e2e_cleanup_hook() { flux_controllers_cleanup "$controllers"; }
on_exit e2e_cleanup

e2e_require "$bin" "$dist"
command -v jq >/dev/null || skip_test "jq is not installed"
# A step the rest cannot go without.
stop() { abort "$1: $2"; }
e2e_needs "building the controllers" flux_controllers_ensure_built source-controller kustomize-controller helm-controller
e2e_needs "building the flux CLI" flux_cli_ensure_built "$flux_controllers_flux_version"
registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"

# ---------------------------------------------------------------------------
# The artifact, the chart, the cluster, the controllers

# apps/: what the sync applies; v1 three ConfigMaps, v2 one changed and one gone.
write_apps() {
  rm -rf "$work/apps" && mkdir -p "$work/apps"
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n' >"$work/apps/namespace.yaml"
  local name
  for name in "$@"; do
    printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: apps\ndata:\n  value: "%s"\n' \
      "${name%%=*}" "${name#*=}"
  done >"$work/apps/configmaps.yaml"
}
write_apps one=1 two=2 three=3
flux_sync_registry_start "$work/registry" 2>"$work/registry.err" ||
  stop "registry" "the registry did not start: $(tail -n 1 "$work/registry.err")"
digest=$(flux_sync_push apps:latest "$work/apps" 2>"$work/push.err") ||
  stop "push" "$(tail -n 1 "$work/push.err")"
flux_chart_repo_start "$work/charts" 2>"$work/charts.err" ||
  stop "Helm repository" "$(tail -n 1 "$work/charts.err")"
flux_chart_add demo 0.1.0

started=$SECONDS
e2e_cluster_up "$work/cluster"
echo "# cluster up in $((SECONDS - started))s"
flux_controllers_start "$controllers" 2>"$work/start.err" ||
  { sed 's/^/  | /' "$work/start.err"; stop "supervisor" "scripts/flux-controllers start failed"; }

cat >"$work/instance.yaml" <<YAML
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.9.x"
    registry: ghcr.io/fluxcd
  components:
    - source-controller
    - kustomize-controller
    - helm-controller
  sync:
    kind: OCIRepository
    url: oci://$REGISTRY_ADDR/apps
    ref: latest
    path: ./
    interval: 1m
YAML

# ---------------------------------------------------------------------------
# The checks

# field JSONPATH ARGS...: one field of an object.
field() {
  local path=$1
  shift
  k get "$@" -o jsonpath="$path" 2>&1
}
# ready KIND NAME [NAMESPACE]: Ready=True within 3 minutes, for the
# object's current generation.
ready() {
  local ns_=${3:-$ns}
  kwait 180 -n "$ns_" wait --for=condition=Ready "$1/$2" >/dev/null 2>"$work/ready.err" || {
    echo "$1/$2 is not Ready: $(field '{.status.conditions[?(@.type=="Ready")].message}' -n "$ns_" "$1" "$2")"
    return 1
  }
}
# runs NAME: the controller's process runs (within 60 s).
runs() {
  wait_until 60 flux_controller_pid "$controllers" "$1" >/dev/null ||
    { echo "no $1 process: $(tail -n 3 "$controllers/supervisor.log")"; return 1; }
}
# applied_by MANAGER KIND/NAME...: in namespace apps, each object exists and
# MANAGER is among its field managers.
applied_by() {
  local manager=$1 object managers
  shift
  for object; do
    managers=$(field '{.metadata.managedFields[*].manager}' -n apps "$object") ||
      { echo "$object: $managers"; return 1; }
    [[ " $managers " == *" $manager "* ]] || { echo "$object is managed by '$managers', not $manager"; return 1; }
  done
}

apply_ok() {
  apply "$1" "$work/instance.yaml"
  [ "$rc" = 0 ] || { echo "apply exits $rc: $(tail -n 1 "$work/$1.err")"; return 1; }
}
check "apply of a Flux 2.9 instance with an OCIRepository sync exits 0" apply_ok apply
check "source-controller runs as a host process" runs source-controller
check "kustomize-controller runs as a host process" runs kustomize-controller
check "helm-controller runs as a host process" runs helm-controller

revision_is() {  # KIND NAME REVISION JSONPATH
  local got
  got=$(field "$4" -n "$ns" "$1" "$2")
  [ "$got" = "$3" ] || { echo "$1/$2: $4 is '$got', not '$3'"; return 1; }
}
source_ready() {
  ready ocirepository flux-system || return 1
  revision_is ocirepository flux-system "latest@$digest" '{.status.artifact.revision}' || return 1
  local url storage_port
  url=$(field '{.status.artifact.url}' -n "$ns" ocirepository flux-system)
  # shellcheck source=/dev/null
  storage_port=$(source "$controllers/ports.env" && echo "$storage_port")
  [[ $url == "http://127.0.0.1:$storage_port/"* ]] || { echo "the artifact's URL is $url"; return 1; }
  curl -fsS --max-time 10 -o /dev/null "$url" || { echo "source-controller does not serve $url"; return 1; }
}
check "the OCIRepository is Ready at the pushed revision, served on 127.0.0.1" source_ready

kustomization_ready() {
  ready kustomization flux-system &&
    revision_is kustomization flux-system "latest@$digest" '{.status.lastAppliedRevision}'
}
check "the Kustomization is Ready at that revision" kustomization_ready
check "kustomize-controller applied the artifact's objects" applied_by kustomize-controller \
  namespace/apps configmap/one configmap/two configmap/three

# helm-controller: a HelmRepository on loopback, a HelmRelease of its chart.
helm_release() {
  k apply -f - >/dev/null <<YAML || return 1
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: charts
  namespace: $ns
spec:
  url: $FLUX_CHART_REPO_URL
  interval: 1m
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: demo
  namespace: $ns
spec:
  interval: 1m
  targetNamespace: apps
  chart:
    spec:
      chart: demo
      version: 0.1.0
      sourceRef:
        kind: HelmRepository
        name: charts
YAML
  ready helmrepository charts && ready helmrelease demo || return 1
  local greeting
  greeting=$(field '{.data.greeting}' -n apps configmap apps-demo)
  [ "$greeting" = hello ] || { echo "configmap apps/apps-demo: greeting '$greeting'"; return 1; }
  # The release's record: in the HelmRelease's namespace (its storageNamespace).
  exists -n "$ns" secret sh.helm.release.v1.apps-demo.v1 || { echo "no release Secret in $ns"; return 1; }
}
check "helm-controller installs a HelmRelease of a chart from a loopback Helm repository" helm_release

# A new revision: two changed, three pruned (the sync prunes).
new_revision() {
  write_apps one=1 two=22
  digest=$(flux_sync_push apps:latest "$work/apps") || return 1
  k -n "$ns" annotate --overwrite ocirepository flux-system "reconcile.fluxcd.io/requestedAt=$(date +%s)" >/dev/null &&
    wait_until 120 revision_is kustomization flux-system "latest@$digest" '{.status.lastAppliedRevision}' >/dev/null ||
    { revision_is kustomization flux-system "latest@$digest" '{.status.lastAppliedRevision}'; return 1; }
  [ "$(field '{.data.value}' -n apps configmap two)" = 22 ] || { echo "configmap two not updated"; return 1; }
  wait_until 30 eval '! exists -n apps configmap/three' || { echo "configmap three not pruned"; return 1; }
}
check "a new artifact is applied: a ConfigMap changed, one pruned" new_revision

# The Deployment gone, its process follows within the stop lag, the grace
# and a few ticks; the others run on.
stopped_with_deployment() {
  local pid_ started_at=$SECONDS
  pid_=$(flux_controller_pid "$controllers" kustomize-controller) || { echo "kustomize-controller is not running"; return 1; }
  kwait 60 -n "$ns" delete deployment kustomize-controller >/dev/null || return 1
  wait_until 60 eval '! kill -0 '"$pid_"' 2>/dev/null' ||
    { echo "kustomize-controller (pid $pid_) still runs 60 s after its Deployment's deletion"; return 1; }
  echo "# kustomize-controller stopped $((SECONDS - started_at))s after its Deployment's deletion" >"$work/stop-time"
  grep -q "stopping kustomize-controller" "$controllers/supervisor.log" ||
    { echo "the supervisor did not say it stopped it"; return 1; }
  flux_controller_pid "$controllers" source-controller >/dev/null || { echo "source-controller stopped too"; return 1; }
  flux_controller_pid "$controllers" helm-controller >/dev/null || { echo "helm-controller stopped too"; return 1; }
}
check "the Deployment kustomize-controller deleted, its process stops and the others run on" stopped_with_deployment
cat "$work/stop-time" 2>/dev/null
check "apply again: the Deployment is back" apply_ok apply-again
check "and kustomize-controller runs again" runs kustomize-controller

stop_all() {
  local pids=() name pid_
  for name in source-controller kustomize-controller helm-controller; do
    pid_=$(flux_controller_pid "$controllers" "$name") || { echo "$name was not running"; return 1; }
    pids+=("$pid_")
  done
  flux_controllers_stop "$controllers" || return 1
  for name in "${pids[@]}"; do
    ! kill -0 "$name" 2>/dev/null || { echo "pid $name still runs after stop"; return 1; }
  done
  ! "$root/scripts/flux-controllers" status "$controllers" >/dev/null || { echo "the supervisor still runs"; return 1; }
}
check "stop ends the supervisor and every controller" stop_all

# What a run took, for the record.
grep -h "^[0-9].* \(start\|exit\) " "$controllers"/*.starts 2>/dev/null | sort | sed 's/^/# /'
summary
