#!/usr/bin/env bash
# End-to-end tests of `fluxopctl report` on a local control plane
# (scripts/cluster) of their own; every outcome is checked against what
# kubectl shows. In order:
#   1 no Flux on the cluster: the distribution "Not Installed", the reason on
#     stderr, exit 0
#   2 Flux 2.9 with a Git sync installed by `fluxopctl apply`, Flux custom
#     resources created beside it, some made failing (their status patched
#     as a controller would), some suspended: `report -o json` is what
#     kubectl shows (the components and their images from the Deployments,
#     the counts of every kind of the Flux CRDs, the sync from the
#     instance's Kustomization and its failing source); the table shows the
#     same; -o yaml is the same object
#   3 --write: our FluxReport CRD installed, the FluxReport flux created with
#     that spec and a Ready condition, read back with kubectl; a second
#     --write changes nothing of the spec (unchanged, same generation); a
#     suspended Kustomization is configured
#   3b the daemon (apply --watch --from-cluster) writes the report after its
#     reconcile and exports flux_resource_info for every Flux object, with
#     upstream's labels
#   4 usage: a bad --output value, an unknown flag, a namespace that is no
#     DNS label: exit 2, nothing on stdout, one error line naming the flag
#   5 the upstream Flux Operator (v0.58.1, built by
#     scripts/lib/upstream-operator.sh), run against the same cluster with
#     its CRDs, writes its FluxReport: its spec is ours (but for the
#     operator's own `operator` field)
#
#   tests/e2e/report_test.sh BIN ROOT
#
# The distribution is $FLUXOPCTL_DISTRIBUTION_ARTIFACT, else ROOT/../shared/
# flux-distribution. E2E_KEEP=1 keeps the work directory (every
# run's stdout and stderr, NAME.out and NAME.err). Closes with `N passed, M failed`; a skip (exit 77, a
# failure when CI=true) only when kubectl, python3, the distribution or the
# cluster binaries are missing, or (case 5 only) Go to build the operator.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=$(realpath "${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}")
work=$(mktemp -d)
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
# shellcheck source=scripts/lib/upstream-operator.sh
source "$root/scripts/lib/upstream-operator.sh"

daemon=
on_exit e2e_cleanup

if [ ! -x "$bin" ]; then
  echo "FAIL no fluxopctl at $bin"
  echo "0 passed, 1 failed"
  exit 1
fi
command -v kubectl >/dev/null || skip_test "kubectl is not installed"
command -v python3 >/dev/null || skip_test "python3 is not installed"
[ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"

report() { fx "$@" --kubeconfig "$KUBECONFIG"; }
said() { grep -qF -- "$2" "$work/$1.err" || { echo "stderr does not say '$2':"; cat "$work/$1.err"; return 1; }; }

# --- 1 no Flux -----------------------------------------------------------------
e2e_cluster_up "$work/cluster"
k create namespace "$ns" >/dev/null

not_installed() {
  exit_is 0 bare || return 1
  said bare "warning: failed to list CRDs: no Flux CRDs found" || return 1
  python3 - "$work/bare.out" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))["spec"]
want = {"entitlement": "Unknown", "status": "Not Installed"}
if spec["distribution"] != want:
    sys.exit(f"distribution {spec['distribution']}, not {want}")
if set(spec) != {"distribution", "cluster"}:
    sys.exit(f"fields {sorted(spec)}: only the distribution and the cluster are known")
PY
}
report bare report -o json
check "no Flux: Not Installed, and why nothing else is reported" not_installed

# --- 2 the report is what kubectl shows ---------------------------------------------
fx install apply "$root/tests/e2e/instances/flux-2.9-four-git-sync.yaml" $(common_flags) --timeout 5m
check "fluxopctl apply installs Flux with a sync" exit_is 0 install || { summary; exit; }

# Flux custom resources in a namespace of their own, as a fleet has them.
k create namespace apps >/dev/null
k apply -f - >"$work/resources.out" 2>&1 <<'EOF'
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ok, namespace: apps}
spec: {interval: 1m, url: "https://example.com/ok.git", ref: {branch: main}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: broken, namespace: apps}
spec: {interval: 1m, url: "https://example.com/broken.git"}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: paused, namespace: apps}
spec: {interval: 1m, url: "https://example.com/paused.git", suspend: true}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: apps}
spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: ok}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: waiting, namespace: apps}
spec: {interval: 10m, path: ./later, prune: true, sourceRef: {kind: GitRepository, name: ok}, dependsOn: [{name: apps}]}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: apps}
spec: {interval: 1h, type: oci, url: "oci://ghcr.io/example/charts"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: apps}
spec: {interval: 10m, suspend: true, chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: charts}}}}
EOF
status_patch() { # status_patch NAMESPACE RESOURCE/NAME STATUS REASON MESSAGE [EXTRA_STATUS_JSON]
  local patch
  patch=$(printf '{"status":{%s"conditions":[{"type":"Ready","status":"%s","reason":"%s","message":"%s","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}]}}' \
    "${6:+$6,}" "$3" "$4" "$5")
  k -n "$1" patch "$2" --subresource=status --type=merge -p "$patch" >>"$work/resources.out" 2>&1
}
artifact='"artifact":{"digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","lastUpdateTime":"2026-01-01T00:00:00Z","path":"gitrepository/apps/ok/abc.tar.gz","revision":"main@sha1:abc","size":3879731,"url":"http://source-controller/x.tar.gz"}'
resources_made() {
  status_patch apps gitrepository/ok True Succeeded "stored artifact for revision main@sha1:abc" "$artifact" &&
    status_patch apps gitrepository/broken False GitOperationFailed "failed to checkout: authentication required" &&
    status_patch apps gitrepository/paused False GitOperationFailed "failed before the suspension" &&
    status_patch apps kustomization/apps True ReconciliationSucceeded "Applied revision: main@sha1:abc" &&
    status_patch apps kustomization/waiting False DependencyNotReady "dependency apps/apps is not ready" &&
    # The sync's objects with their generation observed: apply and the
    # daemon wait, as the operator does, while it is not (kstatus).
    status_patch "$ns" kustomization/flux-system True ReconciliationSucceeded "Applied revision: refs/heads/main@sha1:abc" \
      '"observedGeneration":1' &&
    status_patch "$ns" gitrepository/flux-system False GitOperationFailed "failed to checkout: repository not found" \
      '"observedGeneration":1' ||
    { cat "$work/resources.out"; return 1; }
}
check "Flux custom resources created, statuses patched as their controllers would" resources_made || { summary; exit; }

# kubectl's view, beside each report: the Deployments, the Flux CRDs and
# every object of their kinds, the instance's sync.
kubectl_view() {
  local out=$1 crd plural
  k -n "$ns" get deployments -l app.kubernetes.io/part-of=flux -o json >"$out.deployments" &&
    k get crd -l app.kubernetes.io/part-of=flux -o json >"$out.crds" || return 1
  mkdir -p "$out.kinds"
  for crd in $(jq -r '.items[].metadata.name' "$out.crds"); do
    k get "$crd" -A -o json >"$out.kinds/$crd.json" || return 1
  done
  k get fluxinstances.fluxcd.controlplane.io -A -o json >"$out.kinds/fluxinstances" &&
    k -n "$ns" get kustomization flux-system -o json >"$out.sync" &&
    k -n "$ns" get gitrepository flux-system -o json >"$out.source"
}

# matches_kubectl REPORT VIEW: the report's spec against kubectl's view.
matches_kubectl() {
  python3 - "$1" "$2" <<'PY'
import glob, json, sys
report, view = sys.argv[1], sys.argv[2]
spec = json.load(open(report))["spec"]
problems = []
def expect(what, got, want):
    if got != want:
        problems.append(f"{what}: report {got!r}, kubectl {want!r}")

deployments = sorted(json.load(open(view + ".deployments"))["items"], key=lambda d: d["metadata"]["name"])
want = []
for d in deployments:
    s = d["status"]
    ready = s.get("readyReplicas", 0) == d["spec"]["replicas"] == s.get("availableReplicas", 0) == s.get("updatedReplicas", 0)
    want.append({"name": d["metadata"]["name"], "image": d["spec"]["template"]["spec"]["containers"][0]["image"],
                 "ready": ready, "status": f"Current Deployment is available. Replicas: {s.get('replicas', 0)}"})
expect("components", spec.get("components"), want)
if len(want) != 4:
    problems.append(f"{len(want)} Deployments, not the instance's 4")

want = []
for crd in json.load(open(view + ".crds"))["items"]:
    items = json.load(open(f"{view}.kinds/{crd['metadata']['name']}.json"))["items"]
    suspended = sum(1 for i in items if i["spec"].get("suspend") is True)
    failing = sum(1 for i in items if i["spec"].get("suspend") is not True and any(
        c["type"] == "Ready" and c["status"] == "False" and c["reason"] != "DependencyNotReady"
        for c in i.get("status", {}).get("conditions", [])))
    size = sum(i.get("status", {}).get("artifact", {}).get("size", 0) for i in items)
    stats = {"running": len(items) - suspended, "failing": failing, "suspended": suspended}
    if size:
        stats["totalSize"] = f"{size / 1024 ** 2:.1f} MiB"
    want.append({"apiVersion": f"{crd['spec']['group']}/{crd['status']['storedVersions'][-1]}",
                 "kind": crd["spec"]["names"]["kind"], "stats": stats})
instances = json.load(open(view + ".kinds/fluxinstances"))["items"]
paused = sum(1 for i in instances
             if i["metadata"].get("annotations", {}).get("fluxcd.controlplane.io/reconcile") == "disabled")
failing = sum(1 for i in instances if any(c["type"] == "Ready" and c["status"] == "False"
                                          for c in i.get("status", {}).get("conditions", [])))
want.append({"apiVersion": "fluxcd.controlplane.io/v1", "kind": "FluxInstance",
             "stats": {"running": len(instances) - paused, "failing": failing, "suspended": paused}})
want.sort(key=lambda r: r["apiVersion"] + r["kind"])
expect("reconcilers", spec.get("reconcilers"), want)

sync, source = json.load(open(view + ".sync")), json.load(open(view + ".source"))
ready = {c["type"]: c for c in sync["status"]["conditions"]}["Ready"]
source_ready = {c["type"]: c for c in source["status"]["conditions"]}["Ready"]
status = ready["message"] + ("\n" + source_ready["message"] if source_ready["status"] == "False" else "")
if sync["spec"].get("suspend"):
    status = "Suspended " + status
expect("sync", spec.get("sync"), {"id": "kustomization/flux-system", "path": sync["spec"]["path"],
                                  "ready": ready["status"] != "False" and source_ready["status"] != "False",
                                  "status": status, "source": source["spec"]["url"]})
labels = json.load(open(view + ".crds"))["items"][0]["metadata"]["labels"]
expect("distribution", spec.get("distribution"),
       {"entitlement": "Unknown", "status": "Installed", "version": labels["app.kubernetes.io/version"],
        "managedBy": labels["app.kubernetes.io/managed-by"]})
if problems:
    print(problems[0])
    print("\n".join(problems[1:]))
    sys.exit(1)
PY
}

# stats REPORT KIND: "running failing suspended totalSize" of KIND.
stats() {
  jq -r --arg kind "$2" '.spec.reconcilers[] | select(.kind == $kind) | .stats |
    "\(.running) \(.failing) \(.suspended) \(.totalSize // "-")"' "$1"
}
# What this test made, counted by hand: the report cannot pass on a view
# that both got wrong.
counted() {
  local got
  for want in "GitRepository 3 2 1 3.7 MiB" "Kustomization 3 0 0 -" "HelmRelease 0 0 1 -" "HelmRepository 1 0 0 -"; do
    got="${want%% *} $(stats "$work/json.out" "${want%% *}")"
    [ "$got" = "$want" ] || { echo "$got, not $want"; return 1; }
  done
  [ "$(jq -r .spec.sync.ready "$work/json.out")" = false ] || { echo "the sync is ready, its source is not"; return 1; }
}
report json report -o json
check "report -o json exits 0, no warning" eval 'exit_is 0 json && [ ! -s "$work/json.err" ]'
kubectl_view "$work/view" || fail "kubectl's view" "kubectl failed"
check "report -o json is what kubectl shows" matches_kubectl "$work/json.out" "$work/view"
check "report -o json counts what was made" counted

yaml_is_json() {
  python3 -c 'import json, sys, yaml; sys.exit(yaml.safe_load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
    "$work/yaml.out" "$work/json.out" || { echo "-o yaml and -o json differ"; return 1; }
}
report yaml report -o yaml
check "report -o yaml is the same FluxReport" yaml_is_json

table_shows() {
  exit_is 0 table || return 1
  local name image row
  for name in $(jq -r '.spec.components[].name' "$work/json.out"); do
    image=$(jq -r --arg n "$name" '.spec.components[] | select(.name == $n) | .image' "$work/json.out")
    grep -qE "^$name +True +Current Deployment is available. Replicas: 1 +$image\$" "$work/table.out" ||
      { echo "no row of $name with its image"; cat "$work/table.out"; return 1; }
  done
  row=$(awk '$2 == "GitRepository" {print $3, $4, $5, $6, $7}' "$work/table.out")
  [ "$row" = "$(stats "$work/json.out" GitRepository)" ] || { echo "GitRepository row '$row'"; return 1; }
  grep -qE "^kustomization/flux-system +False +clusters/test +https://example.com/fleet.git +Applied revision: refs/heads/main@sha1:abc; failed to checkout: repository not found\$" "$work/table.out" ||
    { echo "no sync row"; cat "$work/table.out"; return 1; }
}
report table report
check "the table shows the components, the counts and the sync" table_shows

# --- 3 --write ---------------------------------------------------------------------
written_is() { # written_is RUN: kubectl's FluxReport has RUN's spec and a Ready condition
  k -n "$ns" get fluxreport flux -o json >"$work/$1.written" || { echo "kubectl get fluxreport failed"; return 1; }
  [ "$(jq -S .spec "$work/$1.written")" = "$(jq -S .spec "$work/$1.out")" ] ||
    { echo "the FluxReport's spec is not the report's"; diff <(jq -S .spec "$work/$1.written") <(jq -S .spec "$work/$1.out") | head; return 1; }
  jq -e '.status.conditions[0] | .type == "Ready" and .status == "True" and .reason == "ReconciliationSucceeded" and (.message | startswith("Reporting finished in "))' \
    "$work/$1.written" >/dev/null || { echo "no Ready condition: $(jq -c .status "$work/$1.written")"; return 1; }
}
report write1 report --write -o json
check "--write installs our FluxReport CRD and creates the report" eval \
  'exit_is 0 write1 && said write1 "CustomResourceDefinition/fluxreports.fluxcd.controlplane.io created" && said write1 "FluxReport/$ns/flux created"'
check "kubectl reads the FluxReport written" written_is write1
generation=$(jq .metadata.generation "$work/write1.written")
report write2 report --write -o json
check "a second --write changes nothing of the spec" eval \
  'exit_is 0 write2 && said write2 "FluxReport/$ns/flux unchanged" && written_is write2 &&
   [ "$(jq .metadata.generation "$work/write2.written")" = "$generation" ] && ! grep -q CustomResourceDefinition "$work/write2.err"'
k -n apps patch kustomization waiting --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
report write3 report --write -o json
check "a suspended Kustomization: the report is configured" eval \
  'exit_is 0 write3 && said write3 "FluxReport/$ns/flux configured" && written_is write3 &&
   [ "$(stats "$work/write3.out" Kustomization)" = "2 0 1 -" ]'

# --- 3b the daemon ---------------------------------------------------------------------
# metrics_resources: flux_resource_info's samples, one line each.
metrics_resources() { curl -sf --max-time 10 "http://127.0.0.1:$metrics_port/metrics" | grep '^flux_resource_info{'; }
# One sample per object of the Flux CRDs' kinds, the labels of one as kubectl shows it.
daemon_exports() {
  local want=0 crd got uid
  for crd in $(k get crd -l app.kubernetes.io/part-of=flux -o jsonpath='{.items[*].metadata.name}'); do
    want=$((want + $(k get "$crd" -A -o name | wc -l)))
  done
  got=$(metrics_resources | wc -l)
  [ "$got" = "$want" ] || { echo "$got samples of flux_resource_info, $want Flux objects"; return 1; }
  uid=$(k -n apps get gitrepository ok -o jsonpath='{.metadata.uid}')
  metrics_resources | grep -qF "flux_resource_info{exported_namespace=\"apps\",kind=\"GitRepository\",name=\"ok\",path=\"\",ready=\"True\",reason=\"Succeeded\",ref=\"main\",revision=\"main@sha1:abc\",source_name=\"\",suspended=\"False\",uid=\"$uid\",url=\"https://example.com/ok.git\"} 1" ||
    { echo "no sample of apps/ok with its labels:"; metrics_resources | grep 'name="ok"'; return 1; }
}
daemon_reported() { k -n "$ns" get fluxreport flux >/dev/null 2>&1; }
if command -v curl >/dev/null; then
  k -n "$ns" delete fluxreport flux >/dev/null
  metrics_port=$(registry_free_port)
  XDG_CACHE_HOME=$work/cache "$bin" apply --watch --from-cluster -n "$ns" --kubeconfig "$KUBECONFIG" \
    --distribution-artifact "$dist" --metrics-addr "127.0.0.1:$metrics_port" >"$work/daemon.out" 2>"$work/daemon.log" &
  daemon=$!
  show "$work/daemon.log"
  if wait_until 300 daemon_reported; then
    report after_daemon report -o json
    check "the daemon writes the report after its reconcile" written_is after_daemon
    check "the daemon exports flux_resource_info for every Flux object" daemon_exports
  else
    fail "the daemon writes the report after its reconcile" "no FluxReport within 5 minutes"
  fi
  stop_process "$daemon"
  daemon=
else
  skip "the daemon writes the report after its reconcile" "curl is not installed"
fi

# --- 4 usage -----------------------------------------------------------------------
report bad_output report -o xml
check "report -o xml: exit 2, --output named" usage_error bad_output --output
report bad_flag report --no-such-flag
check "report --no-such-flag: exit 2, named" usage_error bad_flag --no-such-flag
report bad_namespace report -n ../x
check "report -n ../x: exit 2, --namespace named" usage_error bad_namespace --namespace

# --- 5 the upstream operator's FluxReport --------------------------------------------
status=0
upstream_operator_ensure_built 2>"$work/operator-build.err" || status=$?
if [ "$status" = 77 ]; then
  skip "the upstream operator's FluxReport is ours" "$(tail -n 1 "$work/operator-build.err")"
elif [ "$status" != 0 ]; then
  show "$work/operator-build.err"
  fail "the upstream operator's FluxReport is ours" "building the upstream operator failed"
else
  # Its CRDs (its FluxReport's replaces ours), the instance paused so that
  # the operator only reports; our report removed: the operator creates its own.
  operator_setup() {
    k apply --server-side --force-conflicts -f "$upstream_operator_crds" >"$work/crds.out" 2>&1 &&
      kwait 120 wait --for=condition=Established customresourcedefinition --all >/dev/null &&
      k -n "$ns" annotate fluxinstance flux fluxcd.controlplane.io/reconcile=disabled >/dev/null &&
      k -n "$ns" delete fluxreport flux >/dev/null || { cat "$work/crds.out"; return 1; }
  }
  operator_reported() {
    k -n "$ns" get fluxreport flux -o json >"$work/operator.json" 2>/dev/null &&
      jq -e '.spec.operator.version and .spec.components' "$work/operator.json" >/dev/null
  }
  # Read again each time: the operator reports again once its entitlement
  # controller has written its secret.
  same_report() {
    operator_reported || { echo "the operator's FluxReport cannot be read"; return 1; }
    report ours report -o json
    exit_is 0 ours || return 1
    local theirs
    theirs=$(jq -S '.spec | del(.operator)' "$work/operator.json")
    [ "$theirs" = "$(jq -S .spec "$work/ours.out")" ] ||
      { echo "the reports differ (< the operator's, > ours):"; diff <(echo "$theirs") <(jq -S .spec "$work/ours.out"); return 1; }
  }
  if check "the upstream operator's CRDs installed" operator_setup; then
    e2e_operator_start "$work/operator.log"
    show "$work/operator.log"
    if wait_until 300 operator_reported; then
      wait_until 120 eval 'same_report >/dev/null'
      e2e_operator_stop
      check "the upstream operator's FluxReport is ours" same_report
    else
      fail "the upstream operator's FluxReport is ours" "the operator wrote no report within 5 minutes"
      e2e_operator_stop
    fi
  fi
fi

summary
