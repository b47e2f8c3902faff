#!/usr/bin/env bash
# End-to-end tests of what `fluxopctl apply` and `diff` promise beyond the
# ordinary install and upgrade, on a local control plane (scripts/cluster) of
# their own; every outcome is checked with kubectl. The cases, in the order
# they run (each starts from the state the previous one left):
#   1 diff and apply on errors: an invalid instance (diff exit 2, nothing on
#     stdout, one error line); an unreachable API server (diff exit 2, apply
#     exit 1, both within a bound)
#   2 a resource migration the API server refuses (a ValidatingAdmissionPolicy
#     freezes Receivers): apply exits 1 naming the object, storedVersions
#     stay; without the policy the next apply migrates
#   3 an apply the API server rejects midway (a Deployment with replicas -1)
#     prunes nothing, and the stale objects stay in the inventory
#   4 pruning spares what is not the instance's: an object annotated
#     fluxcd.controlplane.io/prune: disabled, one whose instance labels were
#     removed, one of the same name made by kubectl; the others are deleted
#   5 the Lease: an expired one held elsewhere and one whose holder died on
#     this host are taken at once; live holders are not
#   6 the Lease taken by someone else while an apply waits for a rollout
#     (nodes cordoned): the apply fails saying so, and writes nothing more
#
#   tests/e2e/apply_behaviour_test.sh BIN ROOT
#
# The distribution is $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else ROOT/../shared/
# flux-distribution. Prints `ok NAME` / `FAIL NAME: reason` and closes with
# `N passed, M failed`. A skip (exit 77, a failure when CI=true) only when
# kubectl, the distribution or the cluster binaries are missing.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
instances=$root/tests/e2e/instances
work=$(mktemp -d)
run_limit=240
apply_timeout=3m
lease=fluxopctl-flux
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"

background=
cleanup() {
  [ -z "$background" ] || kill "$background" 2>/dev/null
  e2e_cluster_down
  rm -rf "$work"
}
on_exit cleanup

e2e_require "$bin" "$dist"

# ---------------------------------------------------------------------------
# Instances and objects

# instance NAME BASE [COMPONENT]: $work/NAME.yaml, the instance file BASE
# with COMPONENT added after helm-controller, and the kustomize patch on
# stdin appended.
instance() {
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

exists() { k -n "$ns" get "$@" -o name >/dev/null 2>&1; }
still_there() {  # RESOURCE/NAME...: each exists (namespaced ones in $ns)
  local missing=
  for object; do
    case $object in
      customresourcedefinition/*) k get "$object" >/dev/null 2>&1 ;;
      *) exists "$object" ;;
    esac || missing+=" $object"
  done
  [ -z "$missing" ] || { echo "gone:$missing"; return 1; }
}
ready_is() {  # STATUS REASON: the FluxInstance's Ready condition
  local got
  got=$(fi_get '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}')
  [ "$got" = "$1 $2" ] || { echo "Ready is '$got', not '$1 $2'"; return 1; }
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
stdout_empty() {
  [ ! -s "$work/$1.out" ] || { echo "stdout is not empty:"; head -n 5 "$work/$1.out"; return 1; }
}
stdout_has() {  # NAME LINE...: each LINE is a line of $work/NAME.out
  local name=$1 line
  shift
  for line; do
    grep -qxF -- "$line" "$work/$name.out" || { echo "stdout has no line '$line'; it is:"; head -n 20 "$work/$name.out"; return 1; }
  done
}
# failed_in_time: the run ended by itself (not killed by timeout) with $1.
failed_in_time() {
  [ "$rc" != 124 ] || { echo "still running after ${run_limit}s"; return 1; }
  exit_is "$1"
}

# ---------------------------------------------------------------------------
# 1. Errors before anything is written: diff exits 2, apply 1.

e2e_cluster_up "$work/cluster"
mapfile -t flags < <(common_flags)

fx diff-invalid diff "$instances/invalid-unknown-field.yaml" "${flags[@]}"
check "1 diff of an invalid instance: exit 2" exit_is 2
check "1 diff of an invalid instance: nothing on stdout" stdout_empty diff-invalid
check "1 diff of an invalid instance: one error line naming the field" stderr_ends diff-invalid 'versoin'
check "1 diff of an invalid instance: stderr is that line alone" lines_are diff-invalid 1

# A kubeconfig whose server is a closed port of 127.0.0.1.
closed_port() {
  local port
  for port in $(shuf -i 20000-32000 -n 50); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return 0; }
  done
  return 1
}
port=$(closed_port)
sed "s|server: https://127.0.0.1:[0-9]*|server: https://127.0.0.1:$port|" "$KUBECONFIG" >"$work/closed.kubeconfig"
unreachable=(--kubeconfig "$work/closed.kubeconfig" --distribution-artifact "$dist")
fx diff-unreachable diff "$instances/flux-2.9-no-helm.yaml" "${unreachable[@]}"
check "1 diff, API server unreachable: exit 2 by itself" failed_in_time 2
check "1 diff, API server unreachable: nothing on stdout" stdout_empty diff-unreachable
check "1 diff, API server unreachable: one error line naming the server" stderr_ends diff-unreachable "127\.0\.0\.1:$port"
fx apply-unreachable apply "$instances/flux-2.9-no-helm.yaml" "${unreachable[@]}"
check "1 apply, API server unreachable: exit 1 by itself" failed_in_time 1
check "1 apply, API server unreachable: one error line naming the server" stderr_ends apply-unreachable "127\.0\.0\.1:$port"
check "1 the errors wrote nothing: no namespace $ns" gone "namespace/$ns"

# ---------------------------------------------------------------------------
# 2. A migration the API server refuses. Flux 2.8 serves Receivers as v1
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

apply install-2.8 "$instances/flux-2.8-four.yaml"
if ! check "2 install Flux 2.8: exit 0" exit_is 0; then
  echo "nothing more can be tested without an installation"
  summary
  exit 1
fi
if receiver | k apply -f - >"$work/setup.err" 2>&1 &&
  k patch crd "$crd" --subresource=status --type=merge -p '{"status":{"storedVersions":["v1beta2","v1"]}}' \
    >>"$work/setup.err" 2>&1 && policy | k apply -f - >>"$work/setup.err" 2>&1 &&
  wait_until 60 frozen; then
  before=$(receiver_version)
  apply migrate-refused "$instances/flux-2.8-four.yaml"
  check "2 migration refused: exit 1" exit_is 1
  check "2 migration refused: the error names the Receiver and the policy's message" \
    stderr_ends migrate-refused 'Receiver/flux-system/behaviour: .*receivers are frozen'
  check "2 migration refused: storedVersions stay [v1beta2, v1]" stored_is '["v1beta2","v1"]'
  check "2 migration refused: Ready=False ReconciliationFailed" ready_is False ReconciliationFailed
  k delete -f <(policy) >"$work/setup.err" 2>&1
  if wait_until 60 not frozen >/dev/null; then
    apply migrate "$instances/flux-2.8-four.yaml"
    check "2 migration allowed again: exit 0" exit_is 0
    check "2 migration allowed again: stderr says 1 object migrated" \
      grep -q "$crd: migrated 1 objects to v1" "$work/migrate.err"
    check "2 migration allowed again: storedVersions trimmed to [v1]" stored_is '["v1"]'
    check "2 migration allowed again: the Receiver was written again" test "$(receiver_version)" != "$before"
  else
    show "$work/setup.err"
    fail "2 migration allowed again" "the policy still refuses updates 60 s after its deletion"
  fi
else
  show "$work/setup.err"
  fail "2 migration refused" "could not set up the Receiver, its storedVersions and the policy"
fi

# ---------------------------------------------------------------------------
# 3. Flux 2.9 with helm-controller and image-reflector-controller; its
# helm-controller Deployment annotated prune: disabled (by the instance's
# patch). Then the upgrade to the instance without them, with a
# source-controller the API server rejects: the apply stops there.
instance five flux-2.9-four.yaml image-reflector-controller < <(deployment_patch helm-controller \
  '  annotations:\n    fluxcd.controlplane.io/prune: disabled')
instance rejected flux-2.9-no-helm.yaml < <(deployment_patch source-controller 'spec:\n  replicas: -1')
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

apply upgrade "$work/five.yaml"
check "3 upgrade to Flux 2.9 with helm and image-reflector: exit 0" exit_is 0
check "3 the helm-controller Deployment is annotated prune: disabled" test \
  "$(k -n "$ns" get deployment helm-controller -o jsonpath='{.metadata.annotations.fluxcd\.controlplane\.io/prune}')" = disabled
apply rejected "$work/rejected.yaml"
check "3 rejected midway: exit 1" exit_is 1
check "3 rejected midway: the error names source-controller" stderr_ends rejected 'Deployment/flux-system/source-controller: .*replicas'
check "3 rejected midway: no deletion reported" not grep -q ' deleted$' "$work/rejected.out"
check "3 rejected midway: nothing was pruned" still_there "${stale[@]}"
check "3 rejected midway: the inventory still lists the ${#stale[@]} stale objects" in_inventory "${#stale[@]}"
check "3 rejected midway: Ready=False ReconciliationFailed" ready_is False ReconciliationFailed

# ---------------------------------------------------------------------------
# 4. The next apply, without the rejected patch, prunes the stale objects
# that are the instance's; it spares the helm-controller Deployment
# (annotated), the image-reflector-controller ServiceAccount (its instance
# labels removed) and a helm-controller ServiceAccount made by kubectl.
labels_gone() {
  k -n "$ns" label serviceaccount image-reflector-controller \
    fluxcd.controlplane.io/name- fluxcd.controlplane.io/namespace- >"$work/setup.err" 2>&1 &&
    k -n "$ns" delete serviceaccount helm-controller >>"$work/setup.err" 2>&1 &&
    k -n "$ns" create serviceaccount helm-controller >>"$work/setup.err" 2>&1
}
if labels_gone; then
  apply prune "$instances/flux-2.9-no-helm.yaml"
  check "4 prune: exit 0" exit_is 0
  check "4 prune: the stale objects of the instance are deleted" gone \
    customresourcedefinition/helmreleases.helm.toolkit.fluxcd.io \
    customresourcedefinition/imagerepositories.image.toolkit.fluxcd.io \
    customresourcedefinition/imagepolicies.image.toolkit.fluxcd.io \
    deployment/image-reflector-controller
  check "4 prune: the annotated and unlabelled ones and kubectl's are left" still_there \
    deployment/helm-controller serviceaccount/image-reflector-controller serviceaccount/helm-controller
  check "4 prune: the change set says which were skipped and deleted" stdout_has prune \
    'Deployment/flux-system/helm-controller skipped' 'ServiceAccount/flux-system/helm-controller skipped' \
    'ServiceAccount/flux-system/image-reflector-controller skipped' \
    'Deployment/flux-system/image-reflector-controller deleted' \
    'CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io deleted'
  check "4 prune: the inventory no longer lists any of them" in_inventory 0
  check "4 prune: Ready=True" ready_is True ReconciliationSucceeded
else
  show "$work/setup.err"
  fail "4 prune" "kubectl could not relabel or recreate the ServiceAccounts"
fi

# ---------------------------------------------------------------------------
# 5. The Lease fluxopctl-flux set by kubectl, then an apply with
# --lock-timeout 0s: it takes the Lease at once or fails.
micro_time() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S.000000Z; }
# set_lease HOLDER RENEWED DURATION: RENEWED as `date -d` reads it; the time
# written in $lease_renewed.
set_lease() {
  lease_renewed=$(micro_time "$2")
  k apply --server-side --force-conflicts -f - >"$work/setup.err" 2>&1 <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: $lease, namespace: $ns}
spec:
  holderIdentity: $1
  leaseDurationSeconds: $3
  acquireTime: $lease_renewed
  renewTime: $lease_renewed
YAML
}
lease_get() { k -n "$ns" get lease "$lease" -o jsonpath="$1"; }
# taken_and_released: the apply took the Lease and released it: no holder,
# renewed after kubectl set it (MicroTimes, in one format, sort as text).
taken_and_released() {
  local holder renewed
  holder=$(lease_get '{.spec.holderIdentity}')
  renewed=$(lease_get '{.spec.renewTime}')
  [ -z "$holder" ] || { echo "the Lease is held by $holder"; return 1; }
  [[ $renewed > $lease_renewed ]] ||
    { echo "the Lease was last renewed at $renewed, by kubectl at $lease_renewed: not by the apply"; return 1; }
}
held_by() {
  local holder
  holder=$(lease_get '{.spec.holderIdentity}')
  [ "$holder" = "$1" ] || { echo "the Lease is held by '$holder', not $1"; return 1; }
}
# lease_case NAME HOLDER RENEWED DURATION TAKEN(yes|no)
lease_case() {
  local name=$1 holder=$2
  if ! set_lease "$holder" "$3" "$4"; then
    show "$work/setup.err"
    fail "5 $name" "kubectl could not set the Lease"
    return
  fi
  apply "lease-$5" "$instances/flux-2.9-no-helm.yaml" --no-wait --lock-timeout 0s
  show "$work/lease-$5.err"
  if [ "$5" = taken ]; then
    check "5 $name: apply takes it, exit 0" exit_is 0
    check "5 $name: the Lease was taken and released" taken_and_released
  else
    check "5 $name: apply exits 1" exit_is 1
    check "5 $name: the error names the holder" stderr_ends "lease-$5" "held by $holder"
    check "5 $name: the Lease is untouched" held_by "$holder"
  fi
}
here=$(hostname)
dead_pid() {  # a pid that no process has
  local pid
  sleep 0 &
  pid=$!
  wait "$pid"
  kill -0 "$pid" 2>/dev/null && return 1
  echo "$pid"
}
lease_case "a Lease held elsewhere, renewed now" elsewhere/1 now 300 refused
lease_case "a Lease held elsewhere, expired" elsewhere/1 "10 minutes ago" 30 taken
lease_case "a Lease held on this host by a live process" "$here/$$" now 300 refused
lease_case "a Lease held on this host by a dead process" "$here/$(dead_pid)" now 300 taken

# ---------------------------------------------------------------------------
# 6. The Lease lost during an apply: nodes cordoned, the apply changes
# source-controller's pod template and waits for a rollout that cannot
# happen; once it waits, kubectl takes the Lease (for 1 s, so that the next
# apply need not wait). Within the renewal period (10 s) the apply finds
# out: exit 1 saying so, the thief's Lease and the FluxInstance untouched.
instance template flux-2.9-no-helm.yaml < <(deployment_patch source-controller \
  'spec:\n  template:\n    metadata:\n      annotations:\n        behaviour/renew: lost')
waiting() { grep -q 'waiting for the components' "$work/renew.err" || ! kill -0 "$background" 2>/dev/null; }
instance_version() { k -n "$ns" get fluxinstance flux -o jsonpath='{.metadata.resourceVersion}'; }
untouched() {
  [ "$(instance_version)" = "$1" ] || { echo "the FluxInstance was written after the Lease was lost"; return 1; }
}
mapfile -t nodes < <(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
k cordon "${nodes[@]}" >/dev/null
XDG_CACHE_HOME=$work/cache timeout -k 5 "$run_limit" "$bin" apply "$work/template.yaml" "${flags[@]}" \
  --timeout "$apply_timeout" >"$work/renew.out" 2>"$work/renew.err" &
background=$!
show "$work/renew.err"
if wait_until 120 waiting && kill -0 "$background" 2>/dev/null; then
  version=$(instance_version)
  set_lease thief/1 now 1
  rc=0
  wait "$background" || rc=$?
  background=
  check "6 Lease lost: the apply exits 1 by itself" failed_in_time 1
  check "6 Lease lost: the error says the Lease was lost" stderr_ends renew "Lease/flux-system/$lease: lost"
  check "6 Lease lost: the thief still holds it" held_by thief/1
  check "6 Lease lost: the FluxInstance was not written after" untouched "$version"
else
  fail "6 Lease lost" "the apply did not wait for the rollout (it ended or took over 120 s)"
  kill "$background" 2>/dev/null
  wait "$background"
  background=
fi
k uncordon "${nodes[@]}" >/dev/null
apply after-lost "$instances/flux-2.9-no-helm.yaml"
check "6 Lease lost: the next apply exits 0" exit_is 0
check "6 Lease lost: then Ready=True" ready_is True ReconciliationSucceeded

summary
