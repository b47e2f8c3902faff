#!/usr/bin/env bash
# End-to-end tests of the rarer paths of `fluxopctl apply`, on a local
# control plane (scripts/cluster) of their own:
# - an object whose immutable field differs (a Deployment's selector) is
#   deleted and created again, and reported `replaced`;
# - resource migration: after an upgrade from Flux 2.2 to 2.3, HelmReleases
#   stored as v2beta2 are written again and the CRD's storedVersions trimmed
#   to v2, their managers moved to v2; with .spec.migrateResources false
#   nothing is migrated;
# - a health check timeout (Ready=False HealthCheckFailed), and SIGTERM
#   during an apply (a clean stop that releases the Lease);
# - an upgrade from 2.2 straight to 2.8, whose CRDs no longer serve the
#   versions 2.2 stored objects as: refused before any object is written,
#   naming a version to go through;
# - diff before the first apply (every object new, the FluxInstance too,
#   nothing written), and its colours: --color always, none in a pipe, on a
#   terminal unless NO_COLOR; apply's change lines coloured by action;
# - drift: a spec field patched into the live FluxInstance by hand, and a
#   Deployment given an env var and then stripped of its managed fields:
#   diff shows each, one apply removes them, the next changes nothing;
#   an env var set by hand while the Deployment's status moves is removed
#   by each of five applies in a row.
#
# The cases, each from whatever the cluster holds (the Flux version it
# needs installed, or none):
#   diff_empty, replaced, migration, rollout_stuck, drift_instance,
#   drift_stripped, drift_status
#
#   tests/e2e/apply_edges_test.sh BIN ROOT [CASE...]
#
# Closes with `N passed, M failed`; exit 77 (1 in CI) when there is no
# cluster or no distribution to test with.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

# edge NAME INSTANCE_FILE [FLAGS...]: fluxopctl apply (see fx).
edge() {
  local name=$1 file=$2
  shift 2
  fx "$name" apply "$file" --distribution-artifact "$dist" "$@"
}
# instance_at VERSION MIGRATE: $work/instance.yaml, the four-controller
# instance at VERSION, with migrateResources MIGRATE.
instance_at() {
  sed "s/\"2.8.x\"/\"$1\"/" "$root/tests/e2e/instances/flux-2.8-four.yaml" >"$work/instance.yaml"
  [ "$2" = true ] || printf '  migrateResources: false\n' >>"$work/instance.yaml"
}
stored_versions() {
  k get crd helmreleases.helm.toolkit.fluxcd.io -o jsonpath='{.status.storedVersions}'
}
# stored_versions_are JSON: the HelmRelease CRD's storedVersions.
stored_versions_are() {
  local got
  got=$(stored_versions) || { echo "kubectl could not read the HelmRelease CRD"; return 1; }
  [ "$got" = "$1" ] || { echo "storedVersions $got, not $1"; return 1; }
}
# Read at v2beta2, which 2.2 and 2.3 both serve, by its path: kubectl's
# discovery cache may still prefer a version the CRD no longer serves (after
# a newer Flux was deleted for 2.2).
helmrelease_rv() {
  k get --raw /apis/helm.toolkit.fluxcd.io/v2beta2/namespaces/default/helmreleases/podinfo 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])' 2>/dev/null
}
# helmrelease_rv_is RV: the HelmRelease was not written again.
helmrelease_rv_is() {
  [ "$(helmrelease_rv)" = "$1" ] || { echo "the HelmRelease was written (resourceVersion $1 -> $(helmrelease_rv))"; return 1; }
}
exit_and_stored_versions() {  # STATUS JSON
  exit_is "$1" && stored_versions_are "$2"
}

# given_at VERSION: the four-controller instance at VERSION (migrateResources
# true) installed, from whatever is there.
given_at() {
  instance_at "$1" true
  install "$work/instance.yaml"
}
# given_no_flux: no Flux on the cluster: the instance uninstalled by
# fluxopctl delete, then what else is in flux-system (a hand-made
# Deployment) and Flux's CRDs.
given_no_flux() {
  if exists -n flux-system fluxinstance flux; then
    fx uninstall delete -n flux-system --timeout 3m --yes
    exit_is 0 || { echo "fluxopctl delete: $(tail -n 1 "$work/uninstall.err")"; return 1; }
  fi
  kwait 180 delete namespace flux-system --ignore-not-found >/dev/null &&
    kwait 180 delete customresourcedefinitions -l app.kubernetes.io/part-of=flux --ignore-not-found >/dev/null
}

all_cases=(diff_empty replaced migration rollout_stuck drift_instance drift_stripped drift_status)
e2e_select_cases "$@"
e2e_cluster_up "$work/cluster"

# diff before the first apply: every object is new (and the FluxInstance),
# nothing is written.
diff_on_empty() {
  local objects
  objects=$(XDG_CACHE_HOME=$work/cache timeout -k 5 300 "$bin" build --operator "$work/instance.yaml" --distribution-artifact "$dist" |
    grep -c '^---$') || { echo "fluxopctl build failed"; return 1; }
  fx diff diff "$work/instance.yaml" --distribution-artifact "$dist"
  exit_is 1 || return 1
  [ "$(grep -c '^--- /dev/null' "$work/diff.out")" = "$((objects + 1))" ] ||
    { echo "$(grep -c '^--- /dev/null' "$work/diff.out") new objects in the diff, the build has $objects and the FluxInstance"; return 1; }
  grep -q '^+++ merged FluxInstance/flux-system/flux$' "$work/diff.out" ||
    { echo "the diff does not show the FluxInstance"; return 1; }
  ! k get namespace flux-system >/dev/null 2>&1 || { echo "the namespace flux-system exists"; return 1; }
}

# --color: ANSI colours with `always` (given after the command, or NO_COLOR
# set), on a terminal (script(1)'s) unless NO_COLOR, never in a pipe.
esc=$'\x1b'
colours() {  # NAME: $work/NAME.out has the diff's colours
  grep -q "^$esc\[1m--- /dev/null$esc\[0m$" "$work/$1.out" &&
    grep -q "^$esc\[32m+apiVersion: " "$work/$1.out" &&
    grep -q "^$esc\[36m@@ " "$work/$1.out"
}
diff_colours() {
  ! grep -q "$esc" "$work/diff.out" || { echo "a piped diff has colours"; return 1; }
  fx diff-always diff --color always "$work/instance.yaml" --distribution-artifact "$dist"
  exit_is 1 && colours diff-always || { echo "--color always: no colours"; return 1; }
  NO_COLOR=1 fx diff-no-color-always --color=always diff "$work/instance.yaml" --distribution-artifact "$dist"
  colours diff-no-color-always || { echo "--color=always with NO_COLOR: no colours"; return 1; }
  local command="XDG_CACHE_HOME=$work/cache timeout -k 5 300 $bin diff $work/instance.yaml --distribution-artifact $dist"
  timeout -k 5 330 script -qec "$command" /dev/null >"$work/diff-terminal.out" 2>&1
  tr -d '\r' <"$work/diff-terminal.out" >"$work/diff-terminal.lines"
  grep -q "^$esc\[32m+apiVersion: " "$work/diff-terminal.lines" || { echo "on a terminal: no colours"; return 1; }
  NO_COLOR=1 timeout -k 5 330 script -qec "$command" /dev/null >"$work/diff-terminal-no-color.out" 2>&1
  grep -q "+apiVersion: " "$work/diff-terminal-no-color.out" || { echo "on a terminal with NO_COLOR: no diff"; return 1; }
  ! grep -q "$esc\[3" "$work/diff-terminal-no-color.out" || { echo "on a terminal with NO_COLOR: colours"; return 1; }
  timeout -k 5 330 script -qec "$command --color never" /dev/null >"$work/diff-terminal-never.out" 2>&1
  ! grep -q "$esc\[3" "$work/diff-terminal-never.out" || { echo "on a terminal with --color never: colours"; return 1; }
}
case_diff_empty() {
  check "diff_empty: no Flux on the cluster" given_no_flux || return
  instance_at 2.2.x true
  check "diff_empty: diff on an empty cluster: exit 1, every object new, nothing written" diff_on_empty
  check "diff_empty: diff --color: always, never in a pipe, on a terminal unless NO_COLOR or never" diff_colours
}

# A kustomize-controller Deployment made by hand, with another selector.
hand_made() {
  k create namespace flux-system >/dev/null &&
    k apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: kustomize-controller, namespace: flux-system}
spec:
  selector: {matchLabels: {app: hand-made}}
  template:
    metadata: {labels: {app: hand-made}}
    spec: {containers: [{name: pause, image: registry.k8s.io/pause:3.10}]}
YAML
}
replaced() {
  edge replace "$work/instance.yaml" --color always
  exit_is 0 || return 1
  # Coloured by action: replaced yellow, created green.
  grep -qx "$esc\[33mDeployment/flux-system/kustomize-controller replaced$esc\[0m" "$work/replace.out" ||
    { echo "stdout does not say Deployment/flux-system/kustomize-controller replaced, in yellow"; return 1; }
  grep -qx "$esc\[32mCustomResourceDefinition/[a-z.]* created$esc\[0m" "$work/replace.out" ||
    { echo "stdout does not say the CRDs were created, in green"; return 1; }
  local app
  app=$(k -n flux-system get deployment kustomize-controller -o jsonpath='{.spec.selector.matchLabels.app}')
  [ "$app" = kustomize-controller ] || { echo "the selector's app is '$app'"; return 1; }
}
rolls_out() { kwait 180 -n flux-system rollout status deployment/kustomize-controller; }
case_replaced() {
  check "replaced: no Flux on the cluster" given_no_flux || return
  check "replaced: a kustomize-controller Deployment made by hand" hand_made || return
  instance_at 2.2.x true
  check "replaced: an immutable selector: the Deployment is replaced" replaced
  check "replaced: the replaced Deployment rolls out" rolls_out
}

# A HelmRelease stored as v2beta2 (the storage version of Flux 2.2).
helmrelease_v2beta2() {
  k apply -f - >/dev/null <<'YAML'
apiVersion: helm.toolkit.fluxcd.io/v2beta2
kind: HelmRelease
metadata: {name: podinfo, namespace: default}
spec:
  interval: 5m
  chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}}
YAML
}

# Straight to 2.8, which serves none of the versions 2.2 stored objects as.
crd_versions() { k get crd helmreleases.helm.toolkit.fluxcd.io -o jsonpath='{.spec.versions[*].name}'; }
skipped_minors() {
  instance_at 2.8.x true
  edge skip "$work/instance.yaml"
  exit_is 1 || return 1
  grep -qE '^error: CustomResourceDefinition/[a-z.]+: objects are stored as v[0-9a-z]+, which Flux v2\.8\.[0-9]+ no longer serves: apply Flux v2\.[3-7]\.[0-9]+ first \(with migrateResources, it stores them as v[0-9a-z]+\), then this one$' \
    "$work/skip.err" || { echo "stderr does not name a 2.3-2.7 version to go through"; head -n 3 "$work/skip.err"; return 1; }
  stored_versions_are '["v2beta2"]' || return 1
  [ "$(crd_versions)" = "v2beta1 v2beta2" ] || { echo "the CRD was written: versions $(crd_versions)"; return 1; }
}

# migrateResources true: the apply says what it migrated, the HelmRelease is
# written again, storedVersions is [v2].
migration_said() {
  grep -qxF 'CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io: migrated 1 objects to v2 (stored versions were ["v2beta2","v2"])' \
    "$work/migration.err" || { echo "stderr does not say the HelmRelease CRD's 1 object was migrated to v2"; return 1; }
}
migration_wrote() {
  [ "$(helmrelease_rv)" != "$rv" ] || { echo "the HelmRelease's resourceVersion is still $rv"; return 1; }
}
# The managers kubectl recorded at v2beta2 move to v2, as the operator moves
# them, so that a Flux that drops v2beta2 finds none left at it.
managers_at_v2() {
  local versions
  versions=$(k -n default get helmrelease podinfo -o jsonpath='{.metadata.managedFields[*].apiVersion}')
  [ -n "$versions" ] && [ -z "$(tr ' ' '\n' <<<"$versions" | grep -vx 'helm.toolkit.fluxcd.io/v2')" ] ||
    { echo "the HelmRelease's managers are at: $versions"; return 1; }
}
managers_at_v2beta2() {
  k -n default get helmrelease podinfo -o jsonpath='{.metadata.managedFields[*].apiVersion}' |
    grep -q 'helm.toolkit.fluxcd.io/v2beta2' || { echo "no manager at v2beta2 before the migration"; return 1; }
}
# Flux 2.2 (a newer one deleted first) with a HelmRelease stored as
# v2beta2; straight to 2.8 (refused), then 2.3 without and with
# migrateResources.
case_migration() {
  local rv
  check "migration: Flux 2.2 installed" given_at 2.2.x || return
  check "migration: a HelmRelease applied at v2beta2" helmrelease_v2beta2 || return
  check "migration: 2.2 stores HelmReleases as v2beta2" stored_versions_are '["v2beta2"]'
  check "migration: straight from 2.2 to 2.8: refused before any object is written, naming a version to go through" skipped_minors

  # migrateResources false: the apply succeeds, the old version stays
  # stored, the HelmRelease is not written.
  rv=$(helmrelease_rv)
  instance_at 2.3.x false
  edge no-migration "$work/instance.yaml"
  check "migration: migrateResources false: stored versions stay [v2beta2, v2]" exit_and_stored_versions 0 '["v2beta2","v2"]'
  check "migration: migrateResources false: the HelmRelease is not written again" helmrelease_rv_is "$rv"

  check "migration: before the migration, a manager of the HelmRelease is at v2beta2" managers_at_v2beta2
  instance_at 2.3.x true
  edge migration "$work/instance.yaml"
  check "migration: exit 0, stored versions trimmed to [v2]" exit_and_stored_versions 0 '["v2"]'
  check "migration: the apply says it migrated the HelmRelease" migration_said
  check "migration: the HelmRelease was written again" migration_wrote
  check "migration: the HelmRelease's managers are at v2" managers_at_v2
  rv=$(helmrelease_rv)
  edge migration-again "$work/instance.yaml"
  check "migration: the next apply exits 0, stored versions stay [v2]" exit_and_stored_versions 0 '["v2"]'
  check "migration: the next apply does not write the HelmRelease again" helmrelease_rv_is "$rv"
}

# An upgrade, from 2.3, that cannot roll out (no node takes new pods): a
# health check failure after --timeout, said and recorded.
health_check_failed() {
  edge health "$work/instance.yaml" --timeout 5s -o json
  exit_is 1 || return 1
  grep -q "timeout waiting for Deployment/flux-system/" "$work/health.err" ||
    { echo "stderr does not say which Deployments it waited for"; return 1; }
  # -o json records what the failed apply changed, with its error.
  python3 - "$work/health.out" <<'PY' || return 1
import json, sys
document = json.load(open(sys.argv[1]))
assert "timeout waiting for Deployment/flux-system/" in document["error"], document.get("error")
configured = [c["object"] for c in document["changes"] if c["action"] == "configured"]
assert any(o.startswith("Deployment/flux-system/") for o in configured), document["changes"]
PY
  ready_is False HealthCheckFailed
}

# SIGTERM while the apply waits for that rollout: a clean stop, the Lease
# released (it exists, without a holder), and the next apply does not wait
# for it.
waits_or_over() { grep -q "waiting for the components" "$work/term.err" || ! running "$pid"; }
over() { ! running "$pid"; }
holds_lease() {
  [ "$holder" = "$(hostname)/$pid" ] || { echo "the Lease's holder is '$holder', not the apply ($(hostname)/$pid)"; return 1; }
}
# Exit 143, as a shell reports a command SIGTERM ended; the interruption
# said as such on stderr and in the status, not as the request it cut short.
stopped_by_sigterm() {
  [ "$status" = 143 ] || { echo "exit $status, not 143"; return 1; }
  [ "$(tail -n 1 "$work/term.err")" = "error: interrupted by SIGTERM" ] ||
    { echo "stderr's last line: $(tail -n 1 "$work/term.err")"; return 1; }
  local message
  message=$(k -n flux-system get fluxinstance flux -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}')
  [ "$message" = "interrupted by SIGTERM" ] || { echo "the Ready message: $message"; return 1; }
}
lease_released() {
  local now
  now=$(k -n flux-system get lease fluxopctl-flux -o jsonpath='holder=[{.spec.holderIdentity}]' 2>/dev/null) ||
    { echo "the Lease fluxopctl-flux does not exist"; return 1; }
  [ "$now" = "holder=[]" ] || { echo "the Lease's $now"; return 1; }
}
at_once() {
  run_limit=120 edge after-term "$work/instance.yaml" --lock-timeout 5s
  exit_is 0 || return 1
  ! grep -q 'waiting for Lease' "$work/after-term.err" || { echo "it waited for the Lease"; return 1; }
  ready_is True ReconciliationSucceeded
}
case_rollout_stuck() {
  local pid holder status=0
  check "rollout_stuck: Flux 2.3 installed" given_at 2.3.x || return
  cordon
  instance_at 2.4.x true
  check "rollout_stuck: --timeout 5s, nodes cordoned: exit 1 naming the Deployments, Ready=False HealthCheckFailed" health_check_failed
  XDG_CACHE_HOME=$work/cache "$bin" apply "$work/instance.yaml" --distribution-artifact "$dist" \
    >"$work/term.out" 2>"$work/term.err" &
  pid=$!
  show "$work/term.err"
  if wait_until 180 waits_or_over && running "$pid"; then
    holder=$(lease_holder)
    check "rollout_stuck: SIGTERM: the apply holds the Lease while it waits" holds_lease
    kill -TERM "$pid"
    # It stops within a minute, or it is killed (and fails below).
    wait_until 60 over || kill -9 "$pid"
    wait "$pid" || status=$?
    check "rollout_stuck: SIGTERM: exit 143, interrupted by SIGTERM (stderr, Ready)" stopped_by_sigterm
    check "rollout_stuck: SIGTERM: the Lease exists and has no holder" lease_released
  else
    kill -9 "$pid" 2>/dev/null
    wait "$pid" || status=$?
    fail "rollout_stuck: SIGTERM" "the apply was over (exit $status) before it waited for the rollout"
  fi
  uncordon
  check "rollout_stuck: once nodes take pods, the next apply succeeds without waiting for the Lease" at_once
}

# Drift, each case from Flux 2.4 installed (and in sync).
# (a): a spec field patched into the live FluxInstance by hand. The instance
# applied is the file: diff shows the field going, apply removes it.
instance_size() { k -n flux-system get fluxinstance flux -o jsonpath='{.spec.cluster.size}'; }
diff_shows() {  # NAME PATTERN
  fx "$1" diff "$work/instance.yaml" --distribution-artifact "$dist"
  exit_is 1 || return 1
  grep -q -- "$2" "$work/$1.out" || { echo "the diff does not show '$2'"; cat "$work/$1.out"; return 1; }
}
then_in_sync() {  # NAME
  edge "$1" "$work/instance.yaml" -v
  exit_is 0 || return 1
  edge "$1-again" "$work/instance.yaml" -v
  exit_is 0 || return 1
  ! grep -v ' unchanged$' "$work/$1-again.out" | grep -q . ||
    { echo "the next apply changed:"; grep -v ' unchanged$' "$work/$1-again.out"; return 1; }
  fx "$1-diff" diff "$work/instance.yaml" --distribution-artifact "$dist"
  exit_is 0 || { cat "$work/$1-diff.out"; return 1; }
}
instance_drift() {
  [ "$(instance_size)" = large ] || { echo "the patch did not take"; return 1; }
  diff_shows drift-instance-diff '^-    size: large$' || return 1
  then_in_sync drift-instance || return 1
  [ -z "$(instance_size)" ] || { echo "spec.cluster.size is still '$(instance_size)'"; return 1; }
}
case_drift_instance() {
  check "drift_instance: Flux 2.4 installed" given_at 2.4.x || return
  k -n flux-system patch fluxinstance flux --type=merge -p '{"spec":{"cluster":{"size":"large"}}}' >/dev/null
  check "drift_instance: a spec field patched into the FluxInstance: diff shows it, apply removes it, then nothing changes" instance_drift
}

# Drift (c): an env var added, then the Deployment's managed fields
# stripped: everything it had becomes before-first-apply's.
env_names() {
  k -n flux-system get deployment source-controller \
    -o jsonpath='{range .spec.template.spec.containers[0].env[*]}{.name}{" "}{end}'
}
stripped_drift() {
  case " $(env_names)" in *" DRIFT "*) ;; *) echo "the env var was not set"; return 1 ;; esac
  diff_shows drift-stripped-diff 'Deployment/flux-system/source-controller' || return 1
  then_in_sync drift-stripped || return 1
  case " $(env_names)" in *" DRIFT "*) echo "DRIFT is still set: $(env_names)"; return 1 ;; esac
}
case_drift_stripped() {
  check "drift_stripped: Flux 2.4 installed" given_at 2.4.x || return
  k -n flux-system set env deployment/source-controller DRIFT=1 >/dev/null
  k -n flux-system patch deployment source-controller --type=json \
    -p '[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]' >/dev/null
  check "drift_stripped: an env var, then managedFields stripped: diff shows it, apply removes it, then nothing changes" stripped_drift
}

# Drift (d), the most common there is: an env var set by hand, repaired by
# the next apply every time, five times in a row. The Deployment's status
# moves meanwhile (its rollout, and a writer of its own here, so that the
# object moves between the apply's read and its take-over on every run):
# the take-over's guard used to fail then (exit 1, "invalid").
# Twenty writes a second, straight to the API server (a kubectl a write is
# too slow to land between an apply's read and its take-over every time).
status_writer() {
  local server i=0
  server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  while [ -e "$work/status-writer" ] && [ "$i" -lt 12000 ]; do
    i=$((i + 1))
    # A condition of a type of its own: health checks look at others.
    curl -sS -o /dev/null --max-time 5 --cacert "$FLUXOPCTL_CLUSTER_DIR/pki/ca.crt" \
      --cert "$FLUXOPCTL_CLUSTER_DIR/pki/admin.crt" --key "$FLUXOPCTL_CLUSTER_DIR/pki/admin.key" \
      -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' \
      --data "{\"status\":{\"conditions\":[{\"type\":\"E2EStatusWriter\",\"status\":\"True\",\"reason\":\"Write$i\"}]}}" \
      "$server/apis/apps/v1/namespaces/flux-system/deployments/source-controller/status" 2>/dev/null
    sleep 0.05
  done
}
drift_repaired() {
  local run=$1
  k -n flux-system set env deployment/source-controller "FOO=$run" >/dev/null ||
    { echo "kubectl set env failed"; return 1; }
  edge "drift-env-$run" "$work/instance.yaml" -v
  exit_is 0 || { tail -n 1 "$work/drift-env-$run.err"; return 1; }
  grep -q 'source-controller: taken over from its previous managers' "$work/drift-env-$run.err" ||
    { echo "the apply did not take the Deployment over"; return 1; }
  case " $(env_names)" in *" FOO "*) echo "FOO is still set: $(env_names)"; return 1 ;; esac
}
writer_writes() {
  [ -n "$(k -n flux-system get deployment source-controller \
    -o jsonpath='{.status.conditions[?(@.type=="E2EStatusWriter")].reason}')" ]
}
case_drift_status() {
  local writer run
  check "drift_status: Flux 2.4 installed" given_at 2.4.x || return
  touch "$work/status-writer"
  status_writer &
  writer=$!
  check "drift_status: the status writer writes the Deployment's status" wait_until 60 writer_writes
  for run in 1 2 3 4 5; do
    check "drift_status: an env var set by hand while the status moves, repaired by apply (run $run of 5)" \
      drift_repaired "$run"
  done
  rm -f "$work/status-writer"
  wait "$writer"
}

e2e_run_cases
summary
