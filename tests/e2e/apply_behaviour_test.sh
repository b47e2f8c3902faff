#!/usr/bin/env bash
# End-to-end tests of what `fluxopctl apply` and `diff` promise beyond the
# ordinary install and upgrade, on a local control plane (scripts/cluster) of
# their own; every outcome is checked with kubectl. Each case sets up what
# it needs from whatever state the cluster is in, so that any of them runs
# alone:
#   errors      diff and apply on errors: an invalid instance (diff exit 2,
#               nothing on stdout, one error line); an unreachable API server
#               (diff exit 2, apply exit 1, both within a bound)
#   migration   a resource migration the API server refuses (a
#               ValidatingAdmissionPolicy freezes Receivers): apply exits 1
#               naming the object, storedVersions stay; without the policy
#               the next apply migrates
#   rejected    an apply the API server rejects midway (a Deployment with
#               replicas -1) prunes nothing, and the stale objects stay in
#               the inventory
#   prune       pruning spares what is not the instance's: an object
#               annotated fluxcd.controlplane.io/prune: disabled, one whose
#               instance labels were removed, one of the same name made by
#               kubectl; the others are deleted
#   lease       the Lease: an expired one held elsewhere and one whose holder
#               died on this host are taken at once; live holders are not
#   lease_lost  the Lease taken by someone else while an apply waits for a
#               rollout (nodes cordoned): the apply fails saying so, and
#               writes nothing more
#
#   tests/e2e/apply_behaviour_test.sh BIN ROOT [CASE...]
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

all_cases=(errors migration rejected prune lease lease_lost)
e2e_select_cases "$@"

# ---------------------------------------------------------------------------
# Instances and objects

# patched_instance NAME BASE [COMPONENT]: $work/NAME.yaml, the instance file BASE
# with COMPONENT added after helm-controller, and the kustomize patch on
# stdin appended.
patched_instance() {
  sed "s/^    - helm-controller$/&${3:+\\n    - $3}/" "$instances/$2" >"$work/$1.yaml"
  cat >>"$work/$1.yaml"
}
# deployment_patch DEPLOYMENT FIELDS: .spec.kustomize with a strategic
# merge patch of the Deployment; FIELDS are the patch's lines after
# `metadata:\n  name: DEPLOYMENT` (\n-separated, as printf reads them).
deployment_patch() {
  printf '  kustomize:\n    patches:\n      - target:\n          kind: Deployment\n          name: %s\n' "$1"
  printf '        patch: |\n          apiVersion: apps/v1\n          kind: Deployment\n'
  printf '          metadata:\n            name: %s\n' "$1"
  printf "$2\n" | sed 's/^/          /'
}
not() {  # COMMAND...: succeeds when COMMAND fails
  if "$@" >/dev/null 2>&1; then echo "true: $*"; return 1; fi
}
lines_are() {  # NAME COUNT: $work/NAME.err has COUNT non-empty lines
  local n
  n=$(grep -c . "$work/$1.err")
  [ "$n" = "$2" ] || { echo "stderr has $n lines, not $2"; return 1; }
}

still_there() {  # RESOURCE/NAME...: each exists (namespaced ones in $ns)
  local missing=
  for object; do
    case $object in
      customresourcedefinition/*) k get "$object" >/dev/null 2>&1 ;;
      *) exists -n "$ns" "$object" ;;
    esac || missing+=" $object"
  done
  [ -z "$missing" ] || { echo "gone:$missing"; return 1; }
}
# stderr_ends NAME REGEX: the last line of $work/NAME.err is an error
# matching REGEX, and the only error line.
stderr_ends() {
  local last
  last=$(grep . "$work/$1.err" | tail -n 1)
  [[ $last == error:* ]] && grep -Eq -- "$2" <<<"$last" ||
    { echo "the last stderr line is not an error matching '$2': $last"; return 1; }
  [ "$(grep -c '^error' "$work/$1.err")" = 1 ] || { echo "more than one error line"; return 1; }
}
# failed_in_time: the run ended by itself (not killed by timeout) with $1.
failed_in_time() {
  [ "$rc" != 124 ] || { echo "still running after ${run_limit}s"; return 1; }
  exit_is "$1"
}

# cluster_state: the namespaces, and the FluxInstance and Leases in $ns,
# each with its resourceVersion: what a refused run must leave as it was.
cluster_state() {
  k get namespaces -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}'
  k -n "$ns" get fluxinstances,leases -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}' 2>/dev/null
}
wrote_nothing() {  # STATE: cluster_state is still STATE
  [ "$(cluster_state)" = "$1" ] || { echo "the cluster changed (< before, > after):"; diff <(echo "$1") <(cluster_state) | grep '^[<>]'; return 1; }
}

e2e_cluster_up "$work/cluster"
mapfile -t flags < <(common_flags)

# ---------------------------------------------------------------------------
# Errors before anything is written: diff exits 2, apply 1.

# A kubeconfig whose server is a closed port of 127.0.0.1.
closed_port() {
  local port
  for port in $(shuf -i 20000-32000 -n 50); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return 0; }
  done
  return 1
}
case_errors() {
  local before port unreachable
  before=$(cluster_state)
  fx diff-invalid diff "$instances/invalid-unknown-field.yaml" "${flags[@]}"
  check "errors: diff of an invalid instance: exit 2" exit_is 2
  check "errors: diff of an invalid instance: nothing on stdout" stdout_empty diff-invalid
  check "errors: diff of an invalid instance: one error line naming the field" stderr_ends diff-invalid 'versoin'
  check "errors: diff of an invalid instance: stderr is that line alone" lines_are diff-invalid 1

  port=$(closed_port)
  sed "s|server: https://127.0.0.1:[0-9]*|server: https://127.0.0.1:$port|" "$KUBECONFIG" >"$work/closed.kubeconfig"
  unreachable=(--kubeconfig "$work/closed.kubeconfig" --distribution-artifact "$dist")
  fx diff-unreachable diff "$instances/flux-2.9-no-helm.yaml" "${unreachable[@]}"
  check "errors: diff, API server unreachable: exit 2 by itself" failed_in_time 2
  check "errors: diff, API server unreachable: nothing on stdout" stdout_empty diff-unreachable
  check "errors: diff, API server unreachable: one error line naming the server" stderr_ends diff-unreachable "127\.0\.0\.1:$port"
  fx apply-unreachable apply "$instances/flux-2.9-no-helm.yaml" "${unreachable[@]}"
  check "errors: apply, API server unreachable: exit 1 by itself" failed_in_time 1
  check "errors: apply, API server unreachable: one error line naming the server" stderr_ends apply-unreachable "127\.0\.0\.1:$port"
  check "errors: the errors wrote nothing (namespaces, the FluxInstance, Leases)" wrote_nothing "$before"
}

# ---------------------------------------------------------------------------
# A migration the API server refuses. Flux 2.8 serves Receivers as v1
# (storage) and v1beta2; storedVersions listing both is what an upgrade from
# an older Flux leaves, so apply migrates. A ValidatingAdmissionPolicy
# refuses every update of a Receiver, the migration's rewrite included.
crd=receivers.notification.toolkit.fluxcd.io
stored() { k get crd "$crd" -o jsonpath='{.status.storedVersions}'; }
stored_is() {
  [ "$(stored)" = "$1" ] || { echo "storedVersions are $(stored), not $1"; return 1; }
}
receiver_version() { k -n "$ns" get receiver behaviour -o jsonpath='{.metadata.resourceVersion}'; }
frozen() {  # true once the policy refuses an update (it is enforced a moment after creation)
  ! k -n "$ns" annotate receiver behaviour behaviour/probe=1 --overwrite --dry-run=server >/dev/null 2>&1
}
policy() {
  cat <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: behaviour-frozen-receivers}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [notification.toolkit.fluxcd.io]
        apiVersions: ["*"]
        operations: [UPDATE]
        resources: [receivers]
  validations:
    - expression: "false"
      message: behaviour test, receivers are frozen
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: behaviour-frozen-receivers}
spec:
  policyName: behaviour-frozen-receivers
  validationActions: [Deny]
YAML
}
receiver() {
  cat <<YAML
apiVersion: notification.toolkit.fluxcd.io/v1
kind: Receiver
metadata: {name: behaviour, namespace: $ns}
spec:
  type: generic
  resources: [{kind: GitRepository, name: flux-system}]
  secretRef: {name: behaviour}
YAML
}
case_migration() {
  local before
  check "migration: install Flux 2.8" install "$instances/flux-2.8-four.yaml" ||
    { fail "migration" "nothing to migrate without an installation"; return; }
  if ! { receiver | k apply -f - >"$work/setup.err" 2>&1 &&
    k patch crd "$crd" --subresource=status --type=merge -p '{"status":{"storedVersions":["v1beta2","v1"]}}' \
      >>"$work/setup.err" 2>&1 && policy | k apply -f - >>"$work/setup.err" 2>&1 &&
    wait_until 60 frozen; }; then
    show "$work/setup.err"
    fail "migration: refused" "could not set up the Receiver, its storedVersions and the policy"
    return
  fi
  before=$(receiver_version)
  apply migrate-refused "$instances/flux-2.8-four.yaml"
  check "migration: refused: exit 1" exit_is 1
  check "migration: refused: the error names the Receiver and the policy's message" \
    stderr_ends migrate-refused 'Receiver/flux-system/behaviour: .*receivers are frozen'
  check "migration: refused: storedVersions stay [v1beta2, v1]" stored_is '["v1beta2","v1"]'
  check "migration: refused: Ready=False ReconciliationFailed" ready_is False ReconciliationFailed
  k delete -f <(policy) >"$work/setup.err" 2>&1
  if ! wait_until 60 not frozen >/dev/null; then
    show "$work/setup.err"
    fail "migration: allowed again" "the policy still refuses updates 60 s after its deletion"
    return
  fi
  apply migrate "$instances/flux-2.8-four.yaml"
  check "migration: allowed again: exit 0" exit_is 0
  check "migration: allowed again: stderr says 1 object migrated" \
    err_has migrate "$crd: migrated 1 objects to v1"
  check "migration: allowed again: storedVersions trimmed to [v1]" stored_is '["v1"]'
  check "migration: allowed again: the Receiver was written again" test "$(receiver_version)" != "$before"
}

# ---------------------------------------------------------------------------
# Flux 2.9 with helm-controller and image-reflector-controller; its
# helm-controller Deployment annotated prune: disabled (by the instance's
# patch): five.yaml.
patched_instance five flux-2.9-four.yaml image-reflector-controller < <(deployment_patch helm-controller \
  '  annotations:\n    fluxcd.controlplane.io/prune: disabled')
stale=(customresourcedefinition/helmreleases.helm.toolkit.fluxcd.io
  customresourcedefinition/imagerepositories.image.toolkit.fluxcd.io
  customresourcedefinition/imagepolicies.image.toolkit.fluxcd.io
  deployment/helm-controller serviceaccount/helm-controller
  deployment/image-reflector-controller serviceaccount/image-reflector-controller)
stale_ids='_(helm|image-reflector)-controller_|_(helmreleases|imagerepositories|imagepolicies)\.'
in_inventory() {  # COUNT: that many inventory entries are the stale objects
  local n
  n=$(inventory | grep -Ec "$stale_ids")
  [ "$n" = "$1" ] || { echo "$n inventory entries are helm's or image-reflector's, not $1"; inventory | grep -E "$stale_ids"; return 1; }
}
prune_disabled() {
  local value
  value=$(k -n "$ns" get deployment helm-controller -o jsonpath='{.metadata.annotations.fluxcd\.controlplane\.io/prune}')
  [ "$value" = disabled ] || { echo "the annotation prune is '$value'"; return 1; }
}

# The upgrade to the instance without helm and image-reflector, with a
# source-controller the API server rejects: the apply stops there.
case_rejected() {
  patched_instance rejected flux-2.9-no-helm.yaml < <(deployment_patch source-controller 'spec:\n  replicas: -1')
  check "rejected: Flux 2.9 with helm and image-reflector installed: exit 0" install "$work/five.yaml" ||
    { fail "rejected" "no installation"; return; }
  check "rejected: the helm-controller Deployment is annotated prune: disabled" prune_disabled
  apply rejected "$work/rejected.yaml"
  check "rejected: exit 1" exit_is 1
  check "rejected: the error names source-controller" stderr_ends rejected 'Deployment/flux-system/source-controller: .*replicas'
  check "rejected: no deletion reported" not grep -q ' deleted$' "$work/rejected.out"
  check "rejected: nothing was pruned" still_there "${stale[@]}"
  check "rejected: the inventory still lists the ${#stale[@]} stale objects" in_inventory "${#stale[@]}"
  check "rejected: Ready=False ReconciliationFailed" ready_is False ReconciliationFailed
}

# ---------------------------------------------------------------------------
# From five.yaml, the apply without helm and image-reflector prunes the
# stale objects that are the instance's; it spares the helm-controller
# Deployment (annotated), the image-reflector-controller ServiceAccount (its
# instance labels removed) and a helm-controller ServiceAccount made by
# kubectl.
labels_gone() {
  k -n "$ns" label serviceaccount image-reflector-controller \
    fluxcd.controlplane.io/name- fluxcd.controlplane.io/namespace- >"$work/setup.err" 2>&1 &&
    k -n "$ns" delete serviceaccount helm-controller >>"$work/setup.err" 2>&1 &&
    k -n "$ns" create serviceaccount helm-controller >>"$work/setup.err" 2>&1
}
case_prune() {
  check "prune: Flux 2.9 with helm and image-reflector installed" install "$work/five.yaml" ||
    { fail "prune" "no installation"; return; }
  check "prune: the ${#stale[@]} objects to prune are in the inventory" in_inventory "${#stale[@]}"
  if ! labels_gone; then
    show "$work/setup.err"
    fail "prune" "kubectl could not relabel or recreate the ServiceAccounts"
    return
  fi
  apply prune "$instances/flux-2.9-no-helm.yaml"
  check "prune: exit 0" exit_is 0
  check "prune: the stale objects of the instance are deleted" gone \
    customresourcedefinition/helmreleases.helm.toolkit.fluxcd.io \
    customresourcedefinition/imagerepositories.image.toolkit.fluxcd.io \
    customresourcedefinition/imagepolicies.image.toolkit.fluxcd.io \
    deployment/image-reflector-controller
  check "prune: the annotated and unlabelled ones and kubectl's are left" still_there \
    deployment/helm-controller serviceaccount/image-reflector-controller serviceaccount/helm-controller
  check "prune: the change set says which were skipped and deleted" out_has prune \
    '^Deployment/flux-system/helm-controller skipped$' '^ServiceAccount/flux-system/helm-controller skipped$' \
    '^ServiceAccount/flux-system/image-reflector-controller skipped$' \
    '^Deployment/flux-system/image-reflector-controller deleted$' \
    '^CustomResourceDefinition/helmreleases\.helm\.toolkit\.fluxcd\.io deleted$'
  check "prune: the inventory no longer lists any of them" in_inventory 0
  check "prune: Ready=True" ready_is True ReconciliationSucceeded
}

# ---------------------------------------------------------------------------
# The Lease fluxopctl-flux set by kubectl, then an apply with
# --lock-timeout 0s: it takes the Lease at once or fails.

# taken_and_released: the apply took the Lease and released it: no holder,
# renewed after kubectl set it (MicroTimes, in one format, sort as text).
taken_and_released() {
  local holder renewed
  holder=$(lease_holder)
  renewed=$(lease_get '{.spec.renewTime}')
  [ -z "$holder" ] || { echo "the Lease is held by $holder"; return 1; }
  [[ $renewed > $lease_renewed ]] ||
    { echo "the Lease was last renewed at $renewed, by kubectl at $lease_renewed: not by the apply"; return 1; }
}
held_by() {
  local holder
  holder=$(lease_holder)
  [ "$holder" = "$1" ] || { echo "the Lease is held by '$holder', not $1"; return 1; }
}
# lease_case NAME HOLDER RENEWED DURATION TAKEN(taken|refused)
lease_case() {
  local name=$1 holder=$2
  if ! set_lease "$lease" "$holder" "$3" "$4"; then
    show "$work/lease.err"
    fail "lease: $name" "kubectl could not set the Lease"
    return
  fi
  apply "lease-$5" "$instances/flux-2.9-no-helm.yaml" --no-wait --lock-timeout 0s
  show "$work/lease-$5.err"
  if [ "$5" = taken ]; then
    check "lease: $name: apply takes it, exit 0" exit_is 0
    check "lease: $name: the Lease was taken and released" taken_and_released
  else
    check "lease: $name: apply exits 1" exit_is 1
    check "lease: $name: the error names the holder" stderr_ends "lease-$5" "held by $holder"
    check "lease: $name: the Lease is untouched" held_by "$holder"
  fi
}
dead_pid() {  # a pid that no process has
  local pid
  sleep 0 &
  pid=$!
  wait "$pid"
  kill -0 "$pid" 2>/dev/null && return 1
  echo "$pid"
}
case_lease() {
  local here
  here=$(hostname)
  k create namespace "$ns" --dry-run=client -o yaml | k apply -f - >"$work/setup.err" 2>&1 ||
    { show "$work/setup.err"; fail "lease" "kubectl could not create the namespace $ns"; return; }
  lease_case "a Lease held elsewhere, renewed now" elsewhere/1 now 300 refused
  lease_case "a Lease held elsewhere, expired" elsewhere/1 "10 minutes ago" 30 taken
  lease_case "a Lease held on this host by a live process" "$here/$$" now 300 refused
  lease_case "a Lease held on this host by a dead process" "$here/$(dead_pid)" now 300 taken
}

# ---------------------------------------------------------------------------
# The Lease lost during an apply: nodes cordoned, the apply changes
# source-controller's pod template (an annotation of this run's) and waits
# for a rollout that cannot happen; once it waits, kubectl takes the Lease
# (for 1 s, so that the next apply need not wait). Within the renewal
# period (10 s) the apply finds out: exit 1 saying so, the thief's Lease and
# the FluxInstance untouched.
untouched() {
  [ "$(instance_version)" = "$1" ] || { echo "the FluxInstance was written after the Lease was lost"; return 1; }
}
case_lease_lost() {
  local background version
  patched_instance template flux-2.9-no-helm.yaml < <(deployment_patch source-controller \
    "spec:\n  template:\n    metadata:\n      annotations:\n        behaviour/renew: lost-$(date +%s%N)")
  waiting() { grep -q 'waiting for the components' "$work/renew.err" || ! running "$background"; }
  cordon
  XDG_CACHE_HOME=$work/cache timeout -k 5 "$run_limit" "$bin" apply "$work/template.yaml" "${flags[@]}" \
    --timeout "$apply_timeout" >"$work/renew.out" 2>"$work/renew.err" &
  background=$!
  show "$work/renew.err"
  if wait_until 120 waiting && running "$background"; then
    version=$(instance_version)
    set_lease "$lease" thief/1 now 1
    rc=0
    wait "$background" || rc=$?
    check "lease_lost: the apply exits 1 by itself" failed_in_time 1
    check "lease_lost: the error says the Lease was lost" stderr_ends renew "Lease/flux-system/$lease: lost"
    check "lease_lost: the thief still holds it" held_by thief/1
    check "lease_lost: the FluxInstance was not written after" untouched "$version"
  else
    fail "lease_lost" "the apply did not wait for the rollout (it ended or took over 120 s)"
    stop_process "$background"
  fi
  uncordon
  apply after-lost "$instances/flux-2.9-no-helm.yaml"
  check "lease_lost: the next apply exits 0" exit_is 0
  check "lease_lost: then Ready=True" ready_is True ReconciliationSucceeded
}

e2e_run_cases
summary
