#!/usr/bin/env bash
# End-to-end tests of `fluxopctl check` and of the checks apply runs before
# its first write, on a local control plane (scripts/cluster) of their own
# (v1.34): the all-good case exits 0 and -o json parses; a StorageClass the
# instance names and the cluster lacks, a caller RBAC forbids everything
# (the control plane's unprivileged.kubeconfig), a Kubernetes version below a
# distribution's minimum (a copy of tests/cli/distribution whose
# kubernetes-versions.yaml asks for 1.35), a namespace being deleted and a
# sync pull secret that does not exist (then one without the keys, then the
# one `fluxopctl create secret` makes) each fail their check (exit 1), and
# apply refuses each cheap one with nothing written; an installation made
# with kubectl is a warning. The cases, each from a cluster without Flux
# (given_clean):
#   good, storage, sync, nobody, kubernetes_version, installation
#
#   tests/e2e/check_test.sh BIN ROOT [CASE...]
#
# Closes with `N passed, M failed`; exit 77 (1 in CI) when there is no
# cluster or no distribution to test with.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
instance=$root/tests/e2e/instances/flux-2.9-four.yaml
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

command -v python3 >/dev/null || skip_test "python3 is not installed"
all_cases=(good storage sync nobody kubernetes_version installation)
e2e_select_cases "$@"
e2e_cluster_up "$work/cluster"

# run_check NAME FILE [FLAGS...]: fluxopctl check (see fx), as $caller
# (default $KUBECONFIG's admin) with the distribution $distribution (default
# $dist).
run_check() {
  local name=$1 file=$2
  shift 2
  fx "$name" check "$file" --kubeconfig "${caller:-$KUBECONFIG}" \
    --distribution-artifact "${distribution:-$dist}" "$@"
}
# line_is NAME STATUS CHECK MESSAGE_START: $work/NAME.out has CHECK's line
# with that status and a message that starts so.
line_is() {
  local line
  line=$(awk -v c="$3" '$2 == c' "$work/$1.out")
  [ -n "$line" ] || { echo "no $3 line in:"; cat "$work/$1.out"; return 1; }
  [[ "$line" =~ ^$2\ +$3\ +(.*)$ ]] || { echo "not $2: $line"; return 1; }
  [[ "${BASH_REMATCH[1]}" == "$4"* ]] || { echo "message: ${BASH_REMATCH[1]}"; return 1; }
}
exit_and_line() {  # STATUS NAME CHECK_STATUS CHECK MESSAGE_START
  exit_is "$1" && line_is "$2" "$3" "$4" "$5"
}
# Nothing was written: no FluxInstance CRD, no namespace but $1's.
nothing_written() {
  ! k get crd fluxinstances.fluxcd.controlplane.io >/dev/null 2>&1 ||
    { echo "the FluxInstance CRD was created"; return 1; }
  [ -n "${1:-}" ] || ! k get namespace "$ns" >/dev/null 2>&1 ||
    { echo "Namespace/$ns was created"; return 1; }
}
# refused_before_writing NAME CHECK [KEPT]: apply exited 1 naming the
# check, before any write (the namespace, when KEPT, was there before).
refused_before_writing() {
  exit_is 1 || return 1
  grep -q "^error: .*: $2: " "$work/$1.err" || { echo "no error naming $2:"; cat "$work/$1.err"; return 1; }
  nothing_written "${3:-}"
}
# given_clean: no namespace $ns (a namespace left Terminating by the
# installation case released first) and no FluxInstance CRD.
given_clean() {
  k -n "$ns" patch configmap held --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
  kwait 180 delete namespace "$ns" --ignore-not-found >/dev/null &&
    kwait 180 delete crd fluxinstances.fluxcd.controlplane.io --ignore-not-found >/dev/null
}

# --- all good ------------------------------------------------------------
json_is_ok() {
  python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["status"] == "ok", doc["status"]
names = [c["name"] for c in doc["checks"]]
assert names == ["distribution", "kubernetes-version", "namespace", "storage-class", "secrets",
                 "flux-instances", "installation", "permissions", "version", "prune",
                 "terminating"], names
assert all(set(c) == {"name", "status", "message"} and c["status"] == "ok" for c in doc["checks"])
' "$work/good-json.out"
}
case_good() {
  local c
  check "good: a cluster without Flux" given_clean || return
  run_check good "$instance"
  check "good: check: every check ok on a fresh v1.34 cluster, exit 0" exit_is 0
  for c in distribution kubernetes-version namespace storage-class secrets flux-instances installation permissions version prune terminating; do
    check "good: check: $c ok" line_is good ok "$c" ""
  done
  check "good: check: the version within Flux 2.9's range" line_is good ok kubernetes-version \
    "Kubernetes v1.34"
  check "good: check: one line per check on stdout" test "$(wc -l <"$work/good.out")" = 11
  run_check good-json "$instance" -o json
  check "good: check -o json: exit 0, the documented document" json_is_ok
}

# --- a StorageClass that does not exist ----------------------------------
case_storage() {
  check "storage: a cluster without Flux, nor the StorageClass fast" \
    eval 'given_clean && k delete storageclass fast --ignore-not-found >/dev/null' || return
  cp "$instance" "$work/storage.yaml"
  printf '  storage:\n    class: fast\n    size: 1Gi\n' >>"$work/storage.yaml"
  run_check storage "$work/storage.yaml"
  check "storage: check: a missing StorageClass fails, exit 1" exit_and_line 1 storage failed storage-class \
    'StorageClass "fast" (.spec.storage.class) does not exist'
  apply storage-apply "$work/storage.yaml"
  check "storage: apply: refused on the missing StorageClass, nothing written" refused_before_writing storage-apply storage-class
  storage_class fast
  run_check storage-made "$work/storage.yaml"
  check "storage: check: the StorageClass once created, exit 0" exit_and_line 0 storage-made ok storage-class \
    'StorageClass "fast" exists'
}

# --- the Secret the sync names -------------------------------------------
# In a namespace of its own, which check and apply leave as they find it.
created_secret() {
  printf 'hunter2\n' | "$bin" create secret basic-auth git-auth -n synced --username flux --password-stdin \
    --kubeconfig "$KUBECONFIG" >"$work/create.out" 2>"$work/create.err" || { cat "$work/create.err"; return 1; }
  grep -qx "Secret synced/git-auth created" "$work/create.err" || { cat "$work/create.err"; return 1; }
  ! grep -q hunter2 "$work/create.out" "$work/create.err" || { echo "the password was printed"; return 1; }
  [ "$(k -n synced get secret git-auth -o jsonpath='{.type} {.data.password}')" = "kubernetes.io/basic-auth $(printf hunter2 | base64)" ] ||
    { echo "not the Secret: $(k -n synced get secret git-auth -o yaml)"; return 1; }
}
case_sync() {
  check "sync: a cluster without Flux, nor the namespace synced" \
    eval 'given_clean && kwait 180 delete namespace synced --ignore-not-found >/dev/null' || return
  sed "s/namespace: flux-system/namespace: synced/" "$instance" >"$work/sync.yaml"
  printf '  sync:\n    kind: GitRepository\n    url: https://example.com/fleet.git\n    ref: refs/heads/main\n    path: clusters/one\n    pullSecret: git-auth\n' >>"$work/sync.yaml"
  k create namespace synced >/dev/null
  run_check sync-missing "$work/sync.yaml"
  check "sync: check: a missing sync pull secret fails, exit 1" exit_and_line 1 sync-missing failed secrets \
    "Secret synced/git-auth (.spec.sync.pullSecret) does not exist"
  apply sync-apply "$work/sync.yaml"
  check "sync: apply: refused on the missing Secret, nothing written" refused_before_writing sync-apply secrets kept
  k -n synced create secret generic git-auth --from-literal=username=flux >/dev/null
  run_check sync-keys "$work/sync.yaml"
  check "sync: check: a Secret without the password fails, naming the keys" exit_and_line 1 sync-keys failed secrets \
    "Secret synced/git-auth (.spec.sync.pullSecret) has not the keys the GitRepository synced reads: username and password;"
  k -n synced delete secret git-auth >/dev/null
  check "sync: create secret basic-auth: applied, of the type and keys Flux reads" created_secret
  run_check sync-made "$work/sync.yaml"
  check "sync: check: the Secret create secret made, exit 0" exit_and_line 0 sync-made ok secrets \
    "Secret synced/git-auth (.spec.sync.pullSecret) exists"
  k delete namespace synced --wait=false >/dev/null
}

# --- a caller RBAC forbids everything ------------------------------------
case_nobody() {
  caller=$(dirname "$KUBECONFIG")/unprivileged.kubeconfig run_check nobody "$instance"
  check "nobody: check: the unprivileged caller may not write, exit 1" exit_and_line 1 nobody failed permissions \
    "the caller may not "
}

# --- a Kubernetes version below the distribution's minimum ---------------
case_kubernetes_version() {
  check "kubernetes_version: a cluster without Flux" given_clean || return
  rm -rf "$work/above"
  cp -r "$root/tests/cli/distribution" "$work/above"
  printf '"2.9": ">=1.35.0-0"\n' >"$work/above/kubernetes-versions.yaml"
  distribution=$work/above run_check above "$instance"
  check "kubernetes_version: check: v1.34 below the distribution's 1.35, exit 1" exit_and_line 1 above failed kubernetes-version \
    "Kubernetes v1.34.10 is outside the range Flux v2.9.0 supports: >=1.35.0-0 ($work/above/kubernetes-versions.yaml)"
  fx above-apply apply "$instance" --kubeconfig "$KUBECONFIG" --distribution-artifact "$work/above" \
    --timeout 3m
  check "kubernetes_version: apply: refused on the Kubernetes version, nothing written" refused_before_writing above-apply kubernetes-version
}

# --- an installation apply would take over, a namespace being deleted ----
case_installation() {
  check "installation: a cluster without Flux" given_clean || return
  k create namespace "$ns" >/dev/null
  run_check kubectl-made "$instance"
  # A Namespace is shared (issue 40): what kubectl set on it stays kubectl's, nothing is taken over.
  check "installation: check: a namespace kubectl created is no take-over, exit 0" exit_and_line 0 kubectl-made ok \
    installation "1 of its objects exist, none that apply would take over from another tool"
  k -n "$ns" apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: held
  finalizers: [example.com/held]
EOF
  k delete namespace "$ns" --wait=false >/dev/null
  run_check terminating "$instance"
  check "installation: check: a Terminating namespace fails, exit 1" exit_and_line 1 terminating failed namespace \
    "Namespace/$ns is being deleted (Terminating)"
  apply terminating-apply "$instance"
  check "installation: apply: refused on the Terminating namespace, nothing written" refused_before_writing terminating-apply namespace kept
  k -n "$ns" patch configmap held --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
}

e2e_run_cases
summary
