#!/usr/bin/env bash
# End-to-end test of `fluxopctl adopt --from-cluster` and of the apply that
# takes a flux bootstrap installation over (docs/adopt.md), on a fresh local
# control plane (scripts/cluster) of its own.
#
#   tests/e2e/adopt_test.sh BIN ROOT
#
# The installation: a bootstrap directory written by the real flux CLI
# (scripts/lib/flux-cli.sh, as tests/adopt/bootstrap_test.sh writes them)
# with patches of the kinds users write: an argument for two controllers,
# and notification-controller run already as the operator runs it (pinned
# by the digest of the operator's catalog, marked safe to evict, its
# feature gate written out), so that its pod template stays. Built and applied
# server-side as kustomize-controller applies it (its field manager, its
# labels), the flux-system Secret bootstrap creates, and a user's Flux
# objects in another namespace (a GitRepository, Kustomization,
# HelmRepository and HelmRelease). Then, in order:
#   adopt   adopt --from-cluster exits 0, its instance carries the sync and
#           the patched argument, and its only generated patches are the
#           argument's (nothing the server merely defaulted or normalised)
#   diff    diff of that instance: the installation's objects are updated,
#           none created or deleted, each field one the operator always
#           writes differently (its labels and annotations, images pinned by
#           digest, --events-addr with the namespace, its feature gate, its
#           kinds in notification-controller's enums, crd-controller's
#           rules, the Git reference in full)
#   apply   apply: no Flux object, CRD or the namespace recreated (the same
#           uids), the user's objects untouched (same resourceVersion), a
#           Deployment rolled out exactly where the diff showed its pod
#           template changing (notification-controller not), the sync
#           objects in the instance's inventory
#   again   diff again exits 0
# Closes with `N passed, M failed`; exit 77 (1 in CI) when it cannot run.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
version=v2.9.4
apply_timeout=5m
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
# shellcheck source=tests/adopt/lib.sh
source "$root/tests/adopt/lib.sh"

adopt_prerequisites "$version"
command -v ssh-keygen >/dev/null || skip_test "ssh-keygen is not installed (the bootstrap's deploy key)"
mapfile -t flags < <(common_flags)

# The bootstrap directory, as flux bootstrap writes it, with the patches.
dir=$work/flux-system
bootstrap "$dir" "$version" git || abort "the flux CLI did not write the bootstrap directory"
read -r notification_tag notification_digest < <(python3 -c '
import sys, yaml
images = yaml.safe_load(open(sys.argv[1]))["images"]
image = next(i for i in images if i["name"] == "ghcr.io/fluxcd/notification-controller")
print(image["newTag"], image["digest"])
' "$dist/flux-images/$version/upstream-alpine.yaml") || abort "no notification-controller in the image catalog"
cat >>"$dir/kustomization.yaml" <<EOF
images:
- name: ghcr.io/fluxcd/notification-controller
  newTag: $notification_tag
  digest: $notification_digest
patches:
- patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --requeue-dependency=5s
  target:
    kind: Deployment
    name: (kustomize-controller|helm-controller)
- patch: |
    - op: add
      path: /spec/template/metadata/annotations/cluster-autoscaler.kubernetes.io~1safe-to-evict
      value: "true"
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --feature-gates=ObjectLevelWorkloadIdentity=false
  target:
    kind: Deployment
    name: notification-controller
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
grep -q "notification-controller:$notification_tag@$notification_digest" "$work/rest.yaml" ||
  abort "kubectl kustomize did not pin notification-controller by its digest"

# The user's Flux objects, in a namespace of their own.
cat >"$work/user.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: apps
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: podinfo
  namespace: apps
spec:
  interval: 5m
  url: https://example.com/podinfo.git
  ref:
    branch: master
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: podinfo
  namespace: apps
spec:
  interval: 10m
  path: ./kustomize
  prune: true
  sourceRef:
    kind: GitRepository
    name: podinfo
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: podinfo
  namespace: apps
spec:
  interval: 1h
  url: https://example.com/charts
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: apps
spec:
  interval: 10m
  chart:
    spec:
      chart: podinfo
      sourceRef:
        kind: HelmRepository
        name: podinfo
EOF

e2e_cluster_up "$work/cluster"

ssa() { k apply --server-side --field-manager=kustomize-controller -f "$1" >/dev/null; }
bootstrapped() {
  ssa "$work/crds.yaml" || { echo "applying the CRDs failed"; return 1; }
  kwait 120 wait --for=condition=Established -f "$work/crds.yaml" >/dev/null ||
    { echo "the CRDs are not established"; return 1; }
  ssa "$work/rest.yaml" || { echo "applying the installation failed"; return 1; }
  # The deploy key flux bootstrap creates for the sync.
  ssh-keygen -q -t ed25519 -N '' -C flux -f "$work/identity" || { echo "ssh-keygen failed"; return 1; }
  k -n flux-system create secret generic flux-system --from-file=identity="$work/identity" \
    --from-file=identity.pub="$work/identity.pub" \
    --from-literal=known_hosts="example.com $(cut -d' ' -f1,2 "$work/identity.pub")" >/dev/null ||
    { echo "creating the flux-system Secret failed"; return 1; }
  k apply --server-side --field-manager=kubectl -f "$work/user.yaml" >/dev/null || { echo "the user's objects"; return 1; }
  kwait 300 -n flux-system rollout status deployment >/dev/null || { echo "the controllers did not roll out"; return 1; }
}
check "the bootstrap installation, applied as kustomize-controller applies it" bootstrapped ||
  abort "no installation to adopt"

# Every object of the installation (the CRDs, the namespace, the
# flux-system GitRepository and Kustomization...) by uid; the user's by uid
# and resourceVersion; the Deployments' revisions.
uids() {
  k get -f "$work/crds.yaml" -f "$work/rest.yaml" \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.uid}{"\n"}{end}' | sort
}
user_versions() {
  k get -f "$work/user.yaml" \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.uid} {.metadata.resourceVersion}{"\n"}{end}' | sort
}
# A Deployment's revision moves with a rollout (a new ReplicaSet); not its
# generation, which an annotation of the Deployment also moves.
revisions() {
  k -n flux-system get deployments \
    -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.deployment\.kubernetes\.io/revision}{"\n"}{end}' | sort
}
uids >"$work/uids.before" && user_versions >"$work/user.before" && revisions >"$work/revisions.before" ||
  abort "reading the installation's objects"
echo "# $(wc -l <"$work/uids.before") objects of the installation, $(wc -l <"$work/user.before") of the user's"

adopted() {
  fx adopt adopt --from-cluster --kubeconfig "$KUBECONFIG" --distribution-artifact "$dist"
  exit_is 0 || { cat "$work/adopt.err"; return 1; }
  python3 - "$work/adopt.out" <<'EOF'
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))["spec"]
want = {"kind": "GitRepository", "name": "flux-system", "url": "ssh://git@example.com/org/fleet.git",
        "ref": "refs/heads/main", "path": "./clusters/one", "pullSecret": "flux-system"}
got = {k: spec["sync"].get(k) for k in want}
if got != want:
    sys.exit("the sync is %s, not %s" % (got, want))
patches = spec.get("kustomize", {}).get("patches", [])
targets = sorted(p.get("target", {}).get("name", "") for p in patches)
if targets != ["helm-controller", "kustomize-controller"]:
    sys.exit("patches target %s, not helm-controller and kustomize-controller: %s" % (targets, patches))
for p in patches:
    ops = yaml.safe_load(p["patch"])
    paths = [op["path"] for op in ops]
    if paths != ["/spec/template/spec/containers/0/args"] or "--requeue-dependency=5s" not in ops[0]["value"]:
        sys.exit("the patch of %s is not the arguments with --requeue-dependency=5s: %s" % (p["target"]["name"], paths))
EOF
}
check "adopt --from-cluster: exit 0, the sync, only the patched argument generated" adopted ||
  abort "no instance to apply"
grep '^adopt: ' "$work/adopt.err" | sed 's/^/# /'
cp "$work/adopt.out" "$work/instance.yaml"

# diff: only what the operator always does differently.
expected_only() {
  fx diff diff "$work/instance.yaml" "${flags[@]}" -o json
  exit_is 1 || return 1
  python3 - "$work/diff.out" "$work/uids.before" "$work/templates" >"$work/diff.note" <<'EOF' ||
import json, re, sys
doc = json.load(open(sys.argv[1]))
installation = {line.split()[0] for line in open(sys.argv[2])}
operator_labels = re.compile(r"fluxcd\.controlplane\.io/|app\.kubernetes\.io/(managed-by|instance|version|part-of)$")
operator_annotations = re.compile(r"fluxcd\.controlplane\.io/prune$|kustomize\.toolkit\.fluxcd\.io/(prune|ssa)$")
operator_kinds = {"FluxInstance", "ResourceSet", "ResourceSetInputProvider"}

def key(path, prefix):
    return path[len(prefix) + 1:].replace("~1", "/").replace("~0", "~")

def added_keys(path, before, after, prefix, allowed):
    if before is not None:
        return False
    if path == prefix:
        return isinstance(after, dict) and all(allowed.match(k) for k in after)
    return path.startswith(prefix + "/") and bool(allowed.match(key(path, prefix)))

def operators_arguments(before, after):
    if not isinstance(before, list) or not isinstance(after, list):
        return False
    # --events-addr with the namespace or $(RUNTIME_NAMESPACE): the same address.
    def written(args):
        return [a.replace("$(RUNTIME_NAMESPACE)", "flux-system") if a.startswith("--events-addr=") else a for a in args]
    before, after = written(before), written(after)
    extra = [a for a in after if a not in before]
    return [a for a in after if a in before] == before and \
        all(a.startswith("--feature-gates=ObjectLevelWorkloadIdentity=") for a in extra)

def expected(obj, p, before, after):
    kind, name = obj.split("/")[0], obj.split("/")[-1]
    if added_keys(p, before, after, "/metadata/labels", operator_labels):
        return True
    if added_keys(p, before, after, "/metadata/annotations", operator_annotations):
        return True
    if p == "/spec/template/metadata/annotations/cluster-autoscaler.kubernetes.io~1safe-to-evict" and before is None:
        return True
    if p.endswith("/image") and isinstance(after, str) and re.fullmatch(re.escape(before) + r"@sha256:[0-9a-f]{64}", after):
        return True
    if kind == "Deployment" and p.endswith("/args") and operators_arguments(before, after):
        return True
    if kind == "CustomResourceDefinition" and name.endswith(".notification.toolkit.fluxcd.io") and p.endswith("/enum") \
            and after[:len(before)] == before and set(after[len(before):]) <= operator_kinds:
        return True
    if kind == "ClusterRole" and name == "crd-controller-flux-system" and p.startswith("/rules/"):
        return True
    if obj == "GitRepository/flux-system/flux-system" and p == "/spec/ref/name" and before is None \
            and after == "refs/heads/main":
        return True
    return False

unexpected, templates, counted = [], [], 0
for o in doc["objects"]:
    obj = o["object"]
    if obj.startswith("FluxInstance/"):
        continue
    short = obj.split("/")[0] + "/" + obj.split("/")[-1]
    if o["action"] not in ("update", "unchanged") or short not in installation:
        unexpected.append("%s: %s" % (obj, o["action"]))
        continue
    counted += 1
    for f in o.get("fields", []):
        p, before, after = f["path"], f.get("before"), f.get("after")
        if obj.startswith("Deployment/") and p.startswith("/spec/template/"):
            templates.append(obj.split("/")[-1])
        if not expected(obj, p, before, after):
            unexpected.append("%s %s: %s -> %s" % (obj, p, json.dumps(before), json.dumps(after)))
if counted != len(installation):
    unexpected.append("the diff has %d of the installation's %d objects" % (counted, len(installation)))
if unexpected:
    print("unexpected differences:")
    print("\n".join(unexpected))
    sys.exit(1)
open(sys.argv[3], "w").write("".join(d + "\n" for d in sorted(set(templates))))
print("# %d objects, %d fields, all the operator's own; pod templates change in: %s" % (
    counted, sum(len(o.get("fields", [])) for o in doc["objects"] if not o["object"].startswith("FluxInstance/")),
    " ".join(sorted(set(templates)))))
EOF
    { cat "$work/diff.note"; return 1; }
}
check "diff of the adopted instance: only the operator's own differences" expected_only
[ ! -s "$work/diff.note" ] || cat "$work/diff.note"

taken_over() {
  apply apply "$work/instance.yaml"
  exit_is 0 || return 1
  uids >"$work/uids.after"
  diff "$work/uids.before" "$work/uids.after" >/dev/null ||
    { echo "objects were recreated or deleted (< before, > after):"; diff "$work/uids.before" "$work/uids.after" | grep '^[<>]' | head; return 1; }
  user_versions >"$work/user.after"
  diff "$work/user.before" "$work/user.after" >/dev/null ||
    { echo "the user's objects changed (< before, > after):"; diff "$work/user.before" "$work/user.after" | grep '^[<>]'; return 1; }
  # A Deployment rolls out where its pod template changes, and only there.
  [ -f "$work/templates" ] || { echo "no diff to say which pod templates change"; return 1; }
  revisions >"$work/revisions.after"
  local name before after why=
  while read -r name before; do
    after=$(awk -v n="$name" '$1 == n { print $2 }' "$work/revisions.after")
    if grep -qx "$name" "$work/templates"; then
      [ "$after" -gt "$before" ] || why+="$name not rolled out (revision $before, $after); "
    else
      [ "$after" = "$before" ] || why+="$name rolled out (revision $before, $after) though its template is the same; "
    fi
  done <"$work/revisions.before"
  [ -z "$why" ] || { echo "$why"; return 1; }
  grep -q . "$work/templates" && ! grep -qx notification-controller "$work/templates" ||
    { echo "the pod templates that change are '$(tr '\n' ' ' <"$work/templates")': expected some, not notification-controller's"; return 1; }
  inventory | grep -qx 'flux-system_flux-system_source.toolkit.fluxcd.io_GitRepository' &&
    inventory | grep -qx 'flux-system_flux-system_kustomize.toolkit.fluxcd.io_Kustomization' ||
    { echo "the sync objects are not in the instance's inventory"; return 1; }
}
check "apply takes the installation over: same uids, the user's untouched, rollouts where templates change" taken_over

nothing_left() {
  fx diff-again diff "$work/instance.yaml" "${flags[@]}"
  exit_is 0
}
check "diff again: exit 0" nothing_left

summary
