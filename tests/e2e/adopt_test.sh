#!/usr/bin/env bash
# End-to-end test of `fluxopctl adopt --from-cluster` and of the apply that
# takes a flux bootstrap installation over, on a fresh local control plane
# (scripts/cluster) of its own.
#
#   tests/e2e/adopt_test.sh BIN ROOT
#
# The installation: a bootstrap directory written by the real flux CLI
# (scripts/lib/flux-cli.sh) with a patch, built and applied server-side as
# kustomize-controller applies it (its field manager, its labels). Then
# adopt --from-cluster (exit 0), diff of its FluxInstance (only what the
# operator always does differently: its labels, kustomize-controller's
# dropped, images pinned by digest, --events-addr with the namespace, the
# Git reference's full name), apply (no Flux object, CRD or the namespace
# recreated: the same uids; a user's objects untouched), and diff again
# (exit 0). Closes with `N passed, M failed`; exit 77 (1 in CI) when it
# cannot run.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
version=v2.9.4
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
# shellcheck source=tests/adopt/lib.sh
source "$root/tests/adopt/lib.sh"
work=$(mktemp -d)
cleanup() {
  e2e_cluster_down
  rm -rf "$work"
}
on_exit cleanup

adopt_prerequisites "$version"

# The bootstrap directory, as flux bootstrap writes it, with a patch.
dir=$work/flux-system
bootstrap "$dir" "$version" git || abort "the flux CLI did not write the bootstrap directory"
cat >>"$dir/kustomization.yaml" <<'EOF'
patches:
- patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --requeue-dependency=5s
  target:
    kind: Deployment
    name: (kustomize-controller|helm-controller)
EOF
# What kustomize-controller applies: the build, with its labels.
kubectl kustomize "$dir" | python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    d["metadata"].setdefault("labels", {}).update(
        {"kustomize.toolkit.fluxcd.io/name": "flux-system", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"})
crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
rest = [d for d in docs if d["kind"] != "CustomResourceDefinition"]
open(sys.argv[1], "w").write("---\n".join(yaml.safe_dump(d) for d in crds))
open(sys.argv[2], "w").write("---\n".join(yaml.safe_dump(d) for d in rest))
' "$work/crds.yaml" "$work/rest.yaml" || abort "building the bootstrap directory"

e2e_cluster_up "$work/cluster"

ssa() { k apply --server-side --field-manager=kustomize-controller -f "$1" >/dev/null; }
bootstrapped() {
  ssa "$work/crds.yaml" || { echo "applying the CRDs failed"; return 1; }
  kwait 120 wait --for=condition=Established -f "$work/crds.yaml" >/dev/null ||
    { echo "the CRDs are not established"; return 1; }
  ssa "$work/rest.yaml" || { echo "applying the installation failed"; return 1; }
  # A user's objects: a source beside the bootstrap's, a ConfigMap elsewhere.
  k apply --server-side --field-manager=kubectl -f - >/dev/null <<'EOF' || { echo "the user's objects"; return 1; }
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: podinfo
  namespace: flux-system
spec:
  interval: 5m
  url: https://example.com/podinfo.git
  ref:
    branch: master
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: user-data
  namespace: default
data:
  a: b
EOF
}
check "the bootstrap installation, applied as kustomize-controller applies it" bootstrapped ||
  abort "no installation to adopt"

uids() { k get -f "$work/crds.yaml" -f "$work/rest.yaml" -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.uid}{"\n"}{end}' | sort; }
user_versions() {
  { k -n flux-system get gitrepository podinfo -o jsonpath='{.metadata.uid} {.metadata.resourceVersion}{"\n"}'
    k -n default get configmap user-data -o jsonpath='{.metadata.uid} {.metadata.resourceVersion}{"\n"}'; }
}
uids >"$work/uids.before"
user_versions >"$work/user.before"

adopted() {
  fx adopt adopt --from-cluster --kubeconfig "$KUBECONFIG" --distribution-artifact "$dist"
  exit_is 0 || { cat "$work/adopt.err"; return 1; }
  grep '^adopt: ' "$work/adopt.err" | sed 's/^/# /'
  grep -q -- '--requeue-dependency=5s' "$work/adopt.out" || { echo "the patch's argument is not in the instance"; return 1; }
  [ "$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["spec"]["sync"]["ref"])' "$work/adopt.out")" = refs/heads/main ] ||
    { echo "the sync's ref is not refs/heads/main"; return 1; }
}
check "adopt --from-cluster: exit 0, the instance" adopted || abort "no instance to apply"
cp "$work/adopt.out" "$work/instance.yaml"

# diff: only what the operator always does differently.
expected_only() {
  local flags
  mapfile -t flags < <(common_flags)
  fx diff diff "$work/instance.yaml" "${flags[@]}" -o json
  exit_is 1 || return 1
  python3 - "$work/diff.out" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
unexpected = []
for o in doc["objects"]:
    if o["object"].startswith("FluxInstance/"):
        continue
    if o["action"] not in ("update", "unchanged"):
        unexpected.append("%s: %s" % (o["object"], o["action"]))
        continue
    for f in o["fields"]:
        p, before, after = f["path"], f.get("before"), f.get("after")
        if re.match(r"^/metadata/labels(/fluxcd\.controlplane\.io~1|/kustomize\.toolkit\.fluxcd\.io~1|/app\.kubernetes\.io~1managed-by$|$)", p):
            continue
        if re.match(r"^/metadata/labels/app\.kubernetes\.io~1(instance|version|part-of)$", p) and before is None:
            continue
        if re.match(r"^/metadata/annotations(/fluxcd\.controlplane\.io~1prune)?$", p) and before is None:
            continue
        if p.endswith("/image") and isinstance(after, str) and "@sha256:" in after and after.startswith(before):
            continue
        if re.match(r"^/spec/template/spec/containers/0/args/\d+$", p) and str(before).startswith("--events-addr=") \
                and before.replace("$(RUNTIME_NAMESPACE)", "flux-system") == after:
            continue
        if o["object"].startswith("GitRepository/") and p.startswith("/spec/ref"):
            continue
        unexpected.append("%s %s: %s -> %s" % (o["object"], p, json.dumps(before), json.dumps(after)))
if unexpected:
    print("unexpected differences:")
    print("\n".join(unexpected[:20]))
    sys.exit(1)
EOF
}
check "diff of the adopted instance: only the operator's own differences" expected_only

taken_over() {
  apply apply "$work/instance.yaml"
  exit_is 0 || return 1
  uids >"$work/uids.after"
  diff "$work/uids.before" "$work/uids.after" >/dev/null ||
    { echo "objects were recreated (< before, > after):"; diff "$work/uids.before" "$work/uids.after" | grep '^[<>]' | head; return 1; }
  user_versions >"$work/user.after"
  diff "$work/user.before" "$work/user.after" >/dev/null || { echo "the user's objects changed"; return 1; }
}
check "apply takes the installation over: the same uids, the user's objects untouched" taken_over

nothing_left() {
  local flags
  mapfile -t flags < <(common_flags)
  fx diff-again diff "$work/instance.yaml" "${flags[@]}"
  exit_is 0
}
check "diff again: exit 0" nothing_left

summary
