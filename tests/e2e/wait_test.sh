#!/usr/bin/env bash
# End-to-end tests of the waits that say why, on a local control plane
# (scripts/cluster) of their own: `fluxopctl apply` prints on stderr why a
# Deployment is still pending, puts it in its error and in the FluxInstance's
# Ready message, and fails at once where waiting cannot help:
# - .spec.storage naming a StorageClass whose provisioner never provisions
#   (volumeBindingMode Immediate): the scheduler's "unbound immediate
#   PersistentVolumeClaims" printed within 15 s, and named at the timeout;
# - a StorageClass that does not exist: refused before the apply when
#   .spec.storage names it, and failing the wait at once when a patch moves
#   the claim to it;
# - an image that cannot be pulled and a crash loop, the containers' waiting
#   states written by kwok (the pod-container-waiting stage of
#   scripts/cluster.d/kwok-stages.yaml, asked for by a pod annotation);
# - a ResourceQuota that refuses the pods: "exceeded quota", long before the
#   timeout;
# - the waits show they are alive: without a terminal, a line with the
#   elapsed time when the cause changes; on one (script(1)), a status line
#   redrawn in place and erased when the wait ends.
#
# The cases (each installs the four-controller instance first, without a
# quota or the claims another left, so that any of them runs alone):
#   unbound, wait_status, missing_class, containers, quota
#
#   tests/e2e/wait_test.sh BIN ROOT [CASE...]
#
# Closes with `N passed, M failed`; exit 77 (1 in CI) when there is no
# cluster or no distribution to test with.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

all_cases=(unbound wait_status missing_class containers quota)
e2e_select_cases "$@"
e2e_cluster_up "$work/cluster"

four=$root/tests/e2e/instances/flux-2.8-four.yaml
# instance_with NAME [LINES...]: the four-controller instance with the extra
# spec LINES, in $work/NAME.yaml.
instance_with() {
  local name=$1
  shift
  cp "$four" "$work/$name.yaml"
  printf '%s\n' "$@" >>"$work/$name.yaml"
}
# wait_apply NAME TIMEOUT: fluxopctl apply of $work/NAME.yaml with --timeout
# TIMEOUT; $elapsed holds the seconds it took.
elapsed=0
wait_apply() {
  local started=$SECONDS
  apply_timeout=$2 apply "$1" "$work/$1.yaml"
  elapsed=$((SECONDS - started))
  echo "  apply $1 (--timeout $2) ended after ${elapsed}s"
}
# failed_with NAME TEXT...: the apply NAME exited 1 with each TEXT in its
# error line, and the FluxInstance's Ready condition is False naming each.
failed_with() {
  local name=$1 text
  shift
  exit_is 1 || return 1
  [ "$(fi_get '{.status.conditions[?(@.type=="Ready")].status}')" = False ] ||
    { echo "the FluxInstance is not Ready=False"; return 1; }
  for text; do
    grep '^error: ' "$work/$name.err" | grep -qF "$text" ||
      { echo "the error does not name '$text': $(grep '^error' "$work/$name.err")"; return 1; }
    ready_message | grep -qF "$text" ||
      { echo "the Ready message does not name '$text': $(ready_message)"; return 1; }
  done
}
# refused_with NAME TEXT: the apply NAME exited 1 with TEXT in its error
# line, before it wrote anything: the Ready message is still $ready_before,
# the one before it.
ready_before=
refused_with() {
  exit_is 1 || return 1
  grep '^error: ' "$work/$1.err" | grep -qF "$2" ||
    { echo "the error does not name '$2': $(grep '^error' "$work/$1.err")"; return 1; }
  [ "$(ready_message)" = "$ready_before" ] || { echo "the Ready message changed: $(ready_message)"; return 1; }
}
# ended_within SECONDS: the last apply ended so soon (its timeout far off).
ended_within() {
  [ "$elapsed" -le "$1" ] || { echo "it took ${elapsed}s, not at most ${1}s"; return 1; }
}
# no_pvc: the claims .spec.storage made are gone, released from their
# kubernetes.io/pvc-protection finalizer first: at once, whatever pod still
# mounts them.
no_pvc() {
  local claim
  for claim in $(k -n "$ns" get pvc -o name); do
    k -n "$ns" patch "$claim" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null &&
      k -n "$ns" delete "$claim" --wait=false >/dev/null || return 1
  done
}
# no_quota: the quota case's gone, and the pods it refused created (its
# pod templates have no claim: they roll out once it is gone): a
# Deployment keeps the quota's ReplicaFailure until its ReplicaSet next
# creates a pod, which would fail the next apply at once.
no_quota() {
  local deployment
  exists -n "$ns" resourcequota no-pods || return 0
  k -n "$ns" delete resourcequota no-pods >/dev/null || { echo "kubectl could not delete the quota"; return 1; }
  for deployment in $(k -n "$ns" get deployments -o name 2>/dev/null); do
    kwait 300 -n "$ns" rollout status "$deployment" >/dev/null || { echo "$deployment not rolled out"; return 1; }
  done
}
# storage_class_never: a StorageClass whose provisioner never comes.
storage_class_never() {
  k apply -f - >/dev/null <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: never
provisioner: example.com/never
volumeBindingMode: Immediate
EOF
}
# given_four CASE: the four-controller instance installed and Ready, without
# the quota or the claims a case leaves, and the StorageClass never. False
# (the case failed) when it cannot be.
given_four() {
  check "$1: no quota left" no_quota &&
    check "$1: no claims left" no_pvc &&
    check "$1: the StorageClass never" storage_class_never &&
    check "$1: the four-controller instance installed" install "$four" ||
    { fail "$1" "no installation to start from"; return 1; }
}

# A StorageClass whose provisioner never comes: the claim stays unbound, the
# scheduler says so of the source-controller's pod.
said_unbound() { grep -q 'pending (.*unbound immediate PersistentVolumeClaims' "$work/unbound.err" 2>/dev/null; }
pod_pending() {
  [ -n "$(k -n "$ns" get pods -l app=source-controller --field-selector=status.phase=Pending -o name 2>/dev/null)" ]
}
case_unbound() {
  local started first_pod seconds apply_pid
  given_four unbound || return
  instance_with unbound '  storage:' '    class: never' '    size: 1Gi'
  started=$SECONDS
  (
    apply_timeout=45s apply unbound "$work/unbound.yaml"
    exit "$rc"
  ) &
  apply_pid=$!
  # Counted from the first pending pod, as seen here (a little after it is
  # created), and shown from the start of the apply too.
  if wait_until 45 pod_pending; then
    first_pod=$SECONDS
    if wait_until 45 said_unbound; then
      seconds=$((SECONDS - first_pod))
      echo "  the scheduler's reason printed ${seconds}s after the first pending pod," \
        "$((SECONDS - started))s after the apply began:"
      grep -m 1 'pending (' "$work/unbound.err" | sed 's/^/  | /'
      check "unbound: the unbound claim's cause is printed within 15 s" test "$seconds" -le 15
    else
      fail "unbound: the unbound claim's cause is printed within 15 s" "not printed: $(tail -n 3 "$work/unbound.err")"
    fi
  else
    fail "unbound: the unbound claim's cause is printed within 15 s" "no pending pod of source-controller"
  fi
  wait "$apply_pid"
  rc=$?
  check "unbound: the unbound claim fails the apply at the timeout, naming the scheduler's reason" \
    failed_with unbound "unbound immediate PersistentVolumeClaims" \
    'StorageClass "never", provisioner "example.com/never"'
  check "unbound: the cause is printed once, not on every poll" \
    test "$(grep -c 'Deployment/flux-system/source-controller pending' "$work/unbound.err")" -le 2
  check "unbound: without a terminal, the cause comes in a line with the elapsed time when it changes" grep -Eq \
    '^\[[0-9]+s\] waiting for the components to roll out: Deployment/flux-system/source-controller pending \(.*\): .*unbound immediate PersistentVolumeClaims' \
    "$work/unbound.err"
}

# `wait` for an instance not created yet (in a namespace not there yet
# either). Without a terminal: one line, its
# cause never changing within the 30 s a line is repeated after.
not_yet_logged() {
  fx not-yet wait instance flux -n not-yet --timeout 3s --kubeconfig "$KUBECONFIG"
  exit_is 1 || return 1
  local lines
  lines=$(grep -Ec '^\[[0-9]+s\] waiting for FluxInstance/not-yet/flux to be ready: not found$' "$work/not-yet.err")
  [ "$lines" = 1 ] || { echo "$lines status lines, not 1:"; cat "$work/not-yet.err"; return 1; }
}

# On a terminal (a pseudo-terminal from script(1)): one status line redrawn
# in place (\r, then erased to the end of the line) as the seconds pass,
# erased before the error.
redrawn() {
  local command
  printf -v command '%q ' env TERM=xterm XDG_CACHE_HOME="$work/cache" "$bin" wait instance flux -n not-yet \
    --timeout 4s --kubeconfig "$KUBECONFIG"
  timeout -k 5 60 script -qec "$command" /dev/null </dev/null >"$work/tty.out" 2>&1
  python3 - "$work/tty.out" <<'EOF'
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
draw = re.compile(r"\r\x1b\[K\[(\d+)s\] waiting for FluxInstance/not-yet/flux to be ready: not found")
seconds = draw.findall(text)
if len(set(seconds)) < 2:
    sys.exit("the status line was not redrawn as the seconds passed (%d draws, at %s): %r" % (len(seconds), seconds, text[:300]))
last = list(draw.finditer(text))[-1]
if not re.match(r"\r\x1b\[K(\r?\n)?error: timeout waiting for FluxInstance/not-yet/flux", text[last.end():]):
    sys.exit("the status line was not erased before the error: %r" % text[last.end():last.end() + 200])
EOF
}
case_wait_status() {
  check "wait_status: without a terminal, wait says its cause once, with the elapsed time" not_yet_logged
  if command -v script >/dev/null; then
    check "wait_status: on a terminal, wait redraws its status line in place and erases it" redrawn
  else
    skip "wait_status: on a terminal, wait redraws its status line in place and erases it" "script(1) is not installed"
  fi
}

# A StorageClass that does not exist: the claim would never bind. apply's
# checks refuse the instance's own class before anything is written; a claim
# a patch moves to one is found by the wait, which fails at once.
case_missing_class() {
  given_four missing_class || return
  instance_with nowhere '  storage:' '    class: nowhere' '    size: 1Gi'
  ready_before=$(ready_message)
  wait_apply nowhere 2m
  check "missing_class: a StorageClass that does not exist is refused before the apply" \
    refused_with nowhere 'StorageClass "nowhere" (.spec.storage.class) does not exist'
  check "missing_class: a StorageClass that does not exist is refused at once" ended_within 60
  instance_with patched '  storage:' '    class: never' '    size: 1Gi' '  kustomize:' '    patches:' \
    '      - target: {kind: PersistentVolumeClaim}' \
    '        patch: |' \
    '          - {op: replace, path: /spec/storageClassName, value: nowhere}'
  wait_apply patched 2m
  check "missing_class: a claim patched onto a StorageClass that does not exist fails the wait" \
    failed_with patched 'StorageClass "nowhere" does not exist'
  check "missing_class: a claim patched onto a StorageClass that does not exist fails at once" ended_within 60
}

# Containers that wait: an image that cannot be pulled, a crash loop.
case_containers() {
  given_four containers || return
  instance_with containers '  kustomize:' '    patches:' \
    '      - target: {kind: Deployment, name: kustomize-controller}' \
    '        patch: |' \
    '          - op: add' \
    '            path: /spec/template/metadata/annotations/container-waiting.e2e.fluxopctl.dev' \
    '            value: ErrImagePull' \
    '      - target: {kind: Deployment, name: helm-controller}' \
    '        patch: |' \
    '          - op: add' \
    '            path: /spec/template/metadata/annotations/container-waiting.e2e.fluxopctl.dev' \
    '            value: CrashLoopBackOff'
  wait_apply containers 30s
  check "containers: an image that cannot be pulled is named" failed_with containers "container manager: ErrImagePull"
  check "containers: a crash loop is named with how the container last ended" \
    failed_with containers "container manager: CrashLoopBackOff" "(last terminated: Error, exit code 1)"
}

# A quota of no pods: the ReplicaSets cannot create any (given_four removes
# it, and the ReplicaFailure it leaves). Every pod template changed, so that
# each Deployment needs new pods.
case_quota() {
  given_four quota || return
  k -n "$ns" create quota no-pods --hard=pods=0 >/dev/null
  instance_with quota '  kustomize:' '    patches:' \
    '      - target: {kind: Deployment}' \
    '        patch: |' \
    '          - op: add' \
    '            path: /spec/template/metadata/annotations/quota.e2e.fluxopctl.dev' \
    '            value: "no-pods"'
  wait_apply quota 2m
  check "quota: a quota that refuses the pods is named" failed_with quota "exceeded quota"
  check "quota: the quota's refusal ends the wait at once" ended_within 60
}

e2e_run_cases
summary
