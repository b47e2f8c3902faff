#!/usr/bin/env bash
# fluxopctl run in a pod: deploy/ (the kustomize base that installs the
# daemon in flux-system) and scripts/image (its OCI image), on a local
# control plane of this test's own (scripts/cluster; kwok nodes, no kubelet:
# no container ever runs) and a local registry.
#
#   tests/deploy/deploy_test.sh BIN ROOT
#
# 1. deploy/ renders with `fluxopctl kustomize`, with the securityContext,
#    probes, args, /tmp emptyDir and metrics port the daemon needs; an
#    overlay's `images:` entry replaces the image; deploy/examples/registry-ca
#    adds a Secret's CA (--ca-file) and nothing else; every Flux minor of the
#    distribution (its newest patch) names only the ClusterRoles
#    deploy/rbac.yaml may escalate and bind, and renders only kinds the
#    applies below cover.
# 2. A server-side dry run of it passes, it applies, and its pod is admitted
#    in a namespace that enforces the restricted Pod Security level.
# 3. The RBAC is sufficient: with the service account's token alone,
#    `fluxopctl apply` installs an instance with every component, sharding on
#    persistent storage and a Git sync; a second apply changes nothing; a
#    smaller instance (four components, an OCI sync) prunes the rest. And it
#    is least privilege: `kubectl auth can-i` lists what the account may not
#    do (and what the daemon needs beyond those applies, that it may).
# 4. scripts/image builds the image (under 30 MiB) and pushes it to the
#    local registry; it is pulled back (same digest), unpacked, and its own
#    fluxopctl run from the unpacked root as the pod would run it (in_pod:
#    chroot, read-only root, uid 65532, a writable /tmp, in-cluster
#    credentials): `version`, an apply of an instance whose distribution
#    is an OCI artifact in the local registry (pulled into /tmp), and the
#    daemon as deploy/ runs it (apply --watch --from-cluster
#    --enable-leader-election): a reconcile request handled, the leader
#    Lease held, then released on SIGTERM with exit 0.
#
# Closes with `N passed, M failed`; exit 77 (1 in CI) when it cannot run (not
# root, no kubectl, no cluster binaries, no distribution, no umoci, skopeo or
# docker-registry).
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=$(realpath "${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}")
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
work=$(mktemp -d)
image_pid=
cleanup() {
  if [ -n "$image_pid" ]; then
    kill -TERM -- "-$image_pid" 2>/dev/null
    wait "$image_pid" 2>/dev/null
  fi
  registry_stop_all
  e2e_cluster_down
  rm -rf "$work"
}
on_exit cleanup

command -v kubectl >/dev/null || skip_test "kubectl is not installed"
[ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"
[ "$(id -u)" = 0 ] || skip_test "not root: running the image's root filesystem needs chroot and mounts"
for tool in unshare chroot mount setsid; do
  command -v "$tool" >/dev/null || skip_test "$tool is not installed (util-linux, coreutils)"
done
python3 -c 'import yaml' 2>/dev/null || skip_test "python3 with yaml (python3-yaml) is missing"
for tool in umoci skopeo; do
  command -v "$tool" >/dev/null || registry_apt_install "$tool" ||
    skip_test "the Debian package $tool is not installed and could not be"
done
registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"

sa=system:serviceaccount:flux-system:fluxopctl
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$work/policy.json"

# The registry, first: the image build (in the background, it takes a while
# on a busy machine) pushes to it, the in-pod apply pulls the distribution
# from it.
{
  registry_start "$work/registry" >/dev/null 2>&1 &&
    registry_push_artifact flux-operator-manifests:latest "$dist" flux flux-images >/dev/null 2>&1
} || {
  fail "setup" "serving the distribution from a local registry failed"
  summary
  exit
}
artifact=oci://$REGISTRY_ADDR/flux-operator-manifests:latest
image_ref=$REGISTRY_ADDR/fluxopctl:test
# Its own process group, so that the cleanup stops umoci or skopeo too.
setsid "$root/scripts/image" --binary "$bin" --output "$work/image" --push "oci://$image_ref" \
  >"$work/image.out" 2>"$work/image.err" &
image_pid=$!

# ---------------------------------------------------------------------------
# 1. The rendering

fx kustomize kustomize "$root/deploy"
cp "$work/kustomize.out" "$work/deploy.yaml"
check "deploy/ renders (fluxopctl kustomize deploy)" exit_is 0

# deploy_is FILE IMAGE: the objects of deploy/ and what the daemon's pod needs.
deploy_is() {
  python3 - "$1" "$2" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
want_image = sys.argv[2]
problems = []
def need(ok, what):
    if not ok:
        problems.append(what)
kinds = sorted(d["kind"] + "/" + d["metadata"]["name"] for d in docs)
need(kinds == ["ClusterRole/fluxopctl", "ClusterRoleBinding/fluxopctl", "Deployment/fluxopctl",
               "Namespace/flux-system", "Role/fluxopctl", "RoleBinding/fluxopctl",
               "Service/fluxopctl", "ServiceAccount/fluxopctl"], "objects are " + " ".join(kinds))
cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
for d in docs:
    if d["kind"] not in cluster_scoped:
        need(d["metadata"].get("namespace") == "flux-system", f"{d['kind']} not in flux-system")
dep = next((d for d in docs if d["kind"] == "Deployment"), None)
if dep is None:
    print("no Deployment"); sys.exit(1)
pod = dep["spec"]["template"]["spec"]
need(pod.get("serviceAccountName") == "fluxopctl", "serviceAccountName is not fluxopctl")
need(pod.get("automountServiceAccountToken") is True, "automountServiceAccountToken is not true")
psc = pod.get("securityContext", {})
need(psc.get("runAsNonRoot") is True, "pod runAsNonRoot is not true")
need(psc.get("runAsUser") == 65532 and psc.get("runAsGroup") == 65532, "pod runAsUser/Group not 65532")
need(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "pod seccompProfile not RuntimeDefault")
containers = {c["name"]: c for c in pod["containers"]}
c = containers.get("fluxopctl")
if c is None:
    print("no container fluxopctl"); sys.exit(1)
need(c.get("image") == want_image, f"image is {c.get('image')}, not {want_image}")
need(c.get("args") == ["apply", "--watch", "--from-cluster", "--namespace=flux-system",
                       "--metrics-addr=:8080", "--health-addr=:8081", "--status-addr=:9090",
                       "--status-auth=kubernetes", "--log-format=json",
                       "--enable-leader-election"], f"args are {c.get('args')}")
sc = c.get("securityContext", {})
need(sc.get("runAsNonRoot") is True, "container runAsNonRoot is not true")
need(sc.get("runAsUser") == 65532 and sc.get("runAsGroup") == 65532, "container runAsUser/Group not 65532")
need(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem is not true")
need(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation is not false")
need(sc.get("capabilities", {}).get("drop") == ["ALL"], "capabilities do not drop ALL")
need(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "container seccompProfile not RuntimeDefault")
ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
need(ports.get("http-metrics") == 8080, "no container port http-metrics 8080")
need(ports.get("http-status") == 9090, "no container port http-status 9090")
def probe(kind, path):
    get = c.get(kind, {}).get("httpGet", {})
    port = get.get("port")
    port = ports.get(port, port)
    need(get.get("path") == path and port == 8081, f"{kind} is not GET {path} on 8081: {get}")
probe("livenessProbe", "/healthz")
probe("readinessProbe", "/readyz")
res = c.get("resources", {})
for part in ("requests", "limits"):
    need(all(k in res.get(part, {}) for k in ("cpu", "memory")), f"no cpu and memory {part}")
mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
volumes = {v["name"]: v for v in pod.get("volumes", [])}
need("/tmp" in mounts and "emptyDir" in volumes.get(mounts.get("/tmp"), {}), "no emptyDir at /tmp")
env = {e["name"]: e.get("value") for e in c.get("env", [])}
need(str(env.get("XDG_CACHE_HOME", "")).startswith("/tmp/"), "XDG_CACHE_HOME is not under /tmp")
svc = next((d for d in docs if d["kind"] == "Service"), {})
sports = svc.get("spec", {}).get("ports", [])
need(any(p.get("name") == "http-metrics" and p.get("port") == 8080 for p in sports),
     "the Service has no port http-metrics 8080")
need(any(p.get("name") == "http-status" and p.get("port") == 9090 for p in sports),
     "the Service has no port http-status 9090")
need(svc.get("spec", {}).get("type", "ClusterIP") == "ClusterIP", "the Service is not a ClusterIP one")
need(svc.get("spec", {}).get("selector", {}).items() <= dep["spec"]["template"]["metadata"]["labels"].items(),
     "the Service does not select the Deployment's pods")
if problems:
    print(problems[0])
    print("\n".join(problems[1:]))
    sys.exit(1)
PY
}
check "deploy/: objects, securityContext, probes, args, /tmp emptyDir, metrics and status ports" \
  deploy_is "$work/deploy.yaml" ghcr.io/fluxopctl/fluxopctl:latest

mkdir -p "$work/overlay"
cat >"$work/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$work/overlay" "$root/deploy")
images:
  - name: ghcr.io/fluxopctl/fluxopctl
    newName: $REGISTRY_ADDR/fluxopctl
    newTag: test
EOF
fx overlay kustomize "$work/overlay"
overlay_image() {
  exit_is 0 || return 1
  deploy_is "$work/overlay.out" "$image_ref"
}
check "an overlay's images: entry replaces the image" overlay_image

# deploy/examples/registry-ca: the base plus a CA from a Secret, mounted
# read-only and given with --ca-file; nothing else changes, RBAC included.
fx registry-ca kustomize "$root/deploy/examples/registry-ca"
registry_ca_overlay() {
  exit_is 0 || return 1
  python3 - "$work/deploy.yaml" "$work/registry-ca.out" <<'PY'
import sys, yaml
def objects(path):
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(open(path)) if d}
base, overlay = objects(sys.argv[1]), objects(sys.argv[2])
if base.keys() != overlay.keys():
    print(f"objects are {sorted(overlay)}, not the base's"); sys.exit(1)
pod = overlay[("Deployment", "fluxopctl")]["spec"]["template"]["spec"]
container = pod["containers"][0]
added = [(container["args"], "--ca-file=/etc/fluxopctl/registry-ca/ca.crt"),
         (container["volumeMounts"],
          {"name": "registry-ca", "mountPath": "/etc/fluxopctl/registry-ca", "readOnly": True}),
         (pod["volumes"], {"name": "registry-ca", "secret": {"secretName": "fluxopctl-registry-ca",
                                                             "items": [{"key": "ca.crt", "path": "ca.crt"}]}})]
for items, item in added:
    if not items or items[-1] != item:
        print(f"the last of {items} is not {item}"); sys.exit(1)
    items.pop()
for key in base:
    if base[key] != overlay[key]:
        print(f"{key[0]}/{key[1]} differs from the base beyond the CA"); sys.exit(1)
PY
}
check "deploy/examples/registry-ca: the base, a Secret's CA mounted read-only, --ca-file" registry_ca_overlay

# The RBAC names Flux's ClusterRoles; every Flux minor of the
# distribution must name only those, and render only kinds the applies
# below are proven with (with storage, persistent shards and a sync).
instance() {
  local file=$1 version=$2
  shift 2
  {
    printf 'apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n'
    printf '  name: flux\n  namespace: flux-system\nspec:\n'
    printf '  distribution:\n    version: "%s"\n    registry: ghcr.io/fluxcd\n' "$version"
    printf '%s\n' "$@"
  } >"$file"
}
every_minor_covered() {
  local v renders=()
  # The newest patch of each minor: patches change neither.
  for v in $(find "$dist/flux" -mindepth 1 -maxdepth 1 -name 'v*' -printf '%f\n' | sort -V |
    awk -F. '{ minor = $1 "." $2; last[minor] = $0 } END { for (m in last) print last[m] }' | sort -V); do
    v=${v#v}
    instance "$work/v$v.yaml" "$v" "  storage: {class: standard, size: 1Gi}" \
      "  sharding: {shards: [shard1], storage: persistent}" \
      "  sync: {kind: GitRepository, url: 'https://example.com/fleet.git', ref: refs/heads/main, path: x}"
    XDG_CACHE_HOME=$work/cache timeout -k 5 120 "$bin" build --operator "$work/v$v.yaml" \
      --distribution-artifact "$dist" >"$work/v$v.out" 2>"$work/v$v.err" ||
      { echo "fluxopctl build --operator of Flux $v failed: $(tail -n 1 "$work/v$v.err")"; return 1; }
    renders+=("$work/v$v.out")
  done
  python3 - "$root/deploy/rbac.yaml" "${renders[@]}" <<'PY'
import sys, yaml
rbac = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
role = next(d for d in rbac if d["kind"] == "ClusterRole")
def names(verb):
    return {n for r in role["rules"] if verb in r.get("verbs", []) for n in r.get("resourceNames", [])}
escalate, bind = names("escalate"), names("bind")
covered = {"CustomResourceDefinition", "Namespace", "ClusterRole", "ClusterRoleBinding", "ResourceQuota",
           "ServiceAccount", "Service", "Deployment", "PersistentVolumeClaim", "NetworkPolicy",
           "GitRepository", "OCIRepository", "Bucket", "Kustomization"}
problems = []
for path in sys.argv[2:]:
    version = path.rsplit("/", 1)[1][:-4]
    for d in yaml.safe_load_all(open(path)):
        if not d:
            continue
        kind, name = d["kind"], d["metadata"]["name"]
        if kind not in covered:
            problems.append(f"Flux {version} renders a {kind}, which no apply of this test covers")
        if kind == "ClusterRole" and name not in escalate:
            problems.append(f"Flux {version}: ClusterRole {name} is not in the escalate rule's resourceNames")
        if kind == "ClusterRoleBinding" and d["roleRef"]["name"] not in bind:
            problems.append(f"Flux {version}: {name} binds {d['roleRef']['name']}, not in the bind rule's resourceNames")
if problems:
    print(problems[0])
    print("\n".join(sorted(set(problems[1:]))))
    sys.exit(1)
print(f"{len(sys.argv) - 2} versions")
PY
}
check "every Flux minor names only the ClusterRoles the RBAC may escalate and bind, renders only covered kinds" \
  every_minor_covered

# ---------------------------------------------------------------------------
# 2. On a cluster

e2e_cluster_up "$work/cluster"
# The instances below name this class: apply refuses a class the cluster
# lacks, when it may read StorageClasses (the service account may).
storage_class standard || fail "create the StorageClass standard" "kubectl apply failed"

# A dry run cannot create the namespace the rest goes in: the Namespace is
# applied first, enforcing the restricted Pod Security level.
dry_run() {
  python3 - "$work/deploy.yaml" >"$work/namespace.yaml" <<'PY' || return 1
import sys, yaml
print(yaml.safe_dump(next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Namespace")))
PY
  {
    k apply --server-side -f "$work/namespace.yaml" >"$work/dry-run.out" 2>&1 &&
      k label namespace flux-system pod-security.kubernetes.io/enforce=restricted \
        pod-security.kubernetes.io/enforce-version=latest >>"$work/dry-run.out" 2>&1
  } || { echo "creating the namespace failed: $(tail -n 1 "$work/dry-run.out")"; return 1; }
  k apply --server-side --dry-run=server -f "$work/deploy.yaml" >"$work/dry-run.out" 2>&1 ||
    { echo "kubectl apply --server-side --dry-run=server failed: $(grep -m1 -i error "$work/dry-run.out")"; return 1; }
}
check "server-side dry run of deploy/" dry_run

apply_deploy() {
  k apply --server-side -f "$work/deploy.yaml" >"$work/deploy-apply.out" 2>&1 ||
    { echo "kubectl apply --server-side failed: $(grep -m1 -i error "$work/deploy-apply.out")"; return 1; }
  kwait 120 -n flux-system rollout status deployment/fluxopctl >"$work/rollout.out" 2>&1 || {
    echo "deployment/fluxopctl did not roll out: its pod was not admitted?"
    k -n flux-system get events --field-selector type=Warning -o custom-columns=M:.message --no-headers | tail -n 3
    return 1
  }
}
check "deploy/ applies; its pod is admitted under Pod Security restricted" apply_deploy

# A kubeconfig with nothing but the service account's token.
sa_kubeconfig=$work/sa.kubeconfig
api_server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
  base64 -d >"$work/ca.crt"
[ -s "$work/ca.crt" ] || cp "$(k config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')" \
  "$work/ca.crt" 2>/dev/null
token() { k create token fluxopctl -n flux-system --duration=1h; }
make_sa_kubeconfig() {
  local t
  t=$(token) || t=
  [ -n "$t" ] || { echo "kubectl create token failed"; return 1; }
  {
    kubectl config --kubeconfig="$sa_kubeconfig" set-cluster test --server="$api_server" \
      --certificate-authority="$work/ca.crt" --embed-certs &&
      kubectl config --kubeconfig="$sa_kubeconfig" set-credentials fluxopctl --token="$t" &&
      kubectl config --kubeconfig="$sa_kubeconfig" set-context test --cluster=test --user=fluxopctl \
        --namespace=flux-system &&
      kubectl config --kubeconfig="$sa_kubeconfig" use-context test
  } >/dev/null || { echo "writing the kubeconfig failed"; return 1; }
  local who
  who=$(kubectl --kubeconfig="$sa_kubeconfig" --request-timeout=30s auth whoami -o jsonpath='{.status.userInfo.username}' 2>&1)
  [ "$who" = "$sa" ] || { echo "the token authenticates as '$who', not $sa"; return 1; }
}
check "a kubeconfig with the service account's token" make_sa_kubeconfig

# ---------------------------------------------------------------------------
# 3. The RBAC: sufficient, and no more

# built NAME FILE: `fluxopctl build --operator` of FILE into $work/NAME.yaml.
built() {
  XDG_CACHE_HOME=$work/cache timeout -k 5 120 "$bin" build --operator "$2" \
    --distribution-artifact "$dist" >"$work/$1.yaml" 2>"$work/$1.build.err" ||
    { echo "fluxopctl build --operator $2 failed: $(tail -n 1 "$work/$1.build.err")"; return 1; }
}
# sa_apply NAME FILE: `fluxopctl apply` with the service account's kubeconfig.
sa_apply() {
  fx "$1" apply "$2" --kubeconfig "$sa_kubeconfig" --distribution-artifact "$dist" --no-wait --timeout 3m
}
# installed NAME FILE: the cluster holds what $work/NAME.yaml renders, the
# inventory lists exactly that, and the FluxInstance is Ready.
installed() {
  local ids inv
  ids=$(live "$work/$1.yaml" 2>"$work/state.err") || {
    echo "rendered objects missing:"
    sed 's/.*(NotFound): \(.*\) not found$/\1/' "$work/state.err"
    return 1
  }
  inv=$(inventory) || { echo "no FluxInstance flux in $ns"; return 1; }
  [ "$(cut -d' ' -f1 <<<"$ids")" = "$inv" ] || {
    echo "the inventory is not the rendered objects (< rendered, > inventory):"
    diff <(cut -d' ' -f1 <<<"$ids") <(echo "$inv") | grep '^[<>]' | head -n 10
    return 1
  }
  instance_ready "$2"
}
applied_as_sa() {
  exit_is 0 || return 1
  installed "$@"
}
# gone_but NAME KEPT: the objects $work/NAME.yaml renders and $work/KEPT.yaml
# does not are deleted: gone, or going (a claim waits for the pods of its
# deleted Deployment, a CRD for its objects).
pruned_objects() {
  python3 - "$work/$1.yaml" "$work/$2.yaml" <<'PY'
import sys, yaml
def key(d):
    return (d["apiVersion"].split("/")[0] if "/" in d["apiVersion"] else "", d["kind"],
            d["metadata"].get("namespace", ""), d["metadata"]["name"])
kept = {key(d) for d in yaml.safe_load_all(open(sys.argv[2])) if d}
print(yaml.safe_dump_all([d for d in yaml.safe_load_all(open(sys.argv[1])) if d and key(d) not in kept]))
PY
}
# Prints the objects of $work/pruned.yaml that exist and are not being deleted.
not_deleted() {
  k get -f "$work/pruned.yaml" --ignore-not-found -o json 2>"$work/pruned.err" | python3 -c '
import json, sys
text = sys.stdin.read().strip()
if text:
    doc = json.loads(text)
    for item in doc.get("items", [doc]) if doc.get("kind", "").endswith("List") else [doc]:
        if not item["metadata"].get("deletionTimestamp"):
            print(item["kind"] + "/" + item["metadata"]["name"])
'
}
none_left() {
  local out
  out=$(not_deleted) && [ -z "$out" ]
}
gone_but() {
  pruned_objects "$1" "$2" >"$work/pruned.yaml" || { echo "comparing the renderings failed"; return 1; }
  [ "$(grep -c '^kind:' "$work/pruned.yaml")" -gt 0 ] || { echo "nothing to prune: the test is wrong"; return 1; }
  wait_until 60 none_left || { echo "not pruned: $(not_deleted 2>&1 | tr '\n' ' ')"; return 1; }
}

instance "$work/big.instance.yaml" 2.9.x \
  "  components: [source-controller, kustomize-controller, helm-controller, notification-controller," \
  "    image-reflector-controller, image-automation-controller, source-watcher]" \
  "  cluster: {type: kubernetes, networkPolicy: true, domain: cluster.local}" \
  "  storage: {class: standard, size: 1Gi}" \
  "  sharding: {key: sharding.fluxcd.io/key, shards: [shard1, shard2], storage: persistent}" \
  "  sync:" "    kind: GitRepository" "    url: https://github.com/example-org/fleet-infra.git" \
  "    ref: refs/heads/main" "    path: clusters/test"
instance "$work/small.instance.yaml" 2.9.x \
  "  components: [source-controller, kustomize-controller, helm-controller, notification-controller]" \
  "  cluster: {type: kubernetes, networkPolicy: true, domain: cluster.local}" \
  "  sync:" "    kind: OCIRepository" "    url: oci://ghcr.io/example-org/fleet-manifests" \
  "    ref: latest" "    path: clusters/test"
if ! built big "$work/big.instance.yaml" >"$work/built.why" || ! built small "$work/small.instance.yaml" >>"$work/built.why"; then
  fail "render the instances" "$(head -n 1 "$work/built.why")"
else
  sa_apply sa-install "$work/big.instance.yaml"
  check "as the service account: installs every component, sharding on persistent storage, a Git sync" \
    applied_as_sa big "$work/big.instance.yaml"
  # Had it been refused a read its checks need, apply would have said
  # "could not tell" and gone on.
  checks_told() {
    ! grep -q 'could not tell' "$work/sa-install.err" ||
      { grep -m 1 'could not tell' "$work/sa-install.err"; return 1; }
  }
  check "as the service account: apply's checks can read what they need (the StorageClass)" checks_told

  # What the apply wrote to each object: its field manager's entries (with
  # their times) and the generation. (Not the resourceVersions: the
  # controllers keep updating the Deployments' status.)
  writes() {
    k get -f "$work/big.yaml" -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.generation}{range .metadata.managedFields[?(@.manager=="flux-operator")]} {.operation}/{.subresource}@{.time}{end}{"\n"}{end}'
  }
  writes >"$work/before.writes" 2>&1
  sa_apply sa-again "$work/big.instance.yaml"
  unchanged() {
    exit_is 0 || return 1
    [ ! -s "$work/sa-again.out" ] || { echo "the second apply reports changes:"; head -n 5 "$work/sa-again.out"; return 1; }
    grep -q ' Apply/@' "$work/before.writes" ||
      { echo "no flux-operator Apply entries read: $(head -n 1 "$work/before.writes")"; return 1; }
    local now
    now=$(writes 2>&1)
    [ "$now" = "$(cat "$work/before.writes")" ] || {
      echo "objects were written (< before, > after):"
      diff "$work/before.writes" <(echo "$now") | grep '^[<>]' | head -n 6
      return 1
    }
  }
  check "as the service account: a second apply changes nothing" unchanged

  # The class `standard` has no provisioner: source-controller's claim stays
  # unbound and its pod Pending. An apply that waits says why, from the
  # pods, events and StorageClass it may read.
  fx sa-wait apply "$work/big.instance.yaml" --kubeconfig "$sa_kubeconfig" \
    --distribution-artifact "$dist" --timeout 60s
  diagnosed() {
    [ "$rc" != 0 ] || { echo "the apply succeeded"; return 1; }
    grep -q 'unbound immediate PersistentVolumeClaims' "$work/sa-wait.err" ||
      { echo "no diagnosis: $(tail -n 1 "$work/sa-wait.err")"; return 1; }
  }
  check "as the service account: a controller that does not roll out is diagnosed" diagnosed

  sa_apply sa-prune "$work/small.instance.yaml"
  check "as the service account: a smaller instance (OCI sync) applies" applied_as_sa small "$work/small.instance.yaml"
  check "as the service account: what it no longer renders is pruned (CRDs, shards, claims, the Git sync)" \
    gone_but big small
fi

# can VERB RESOURCE [FLAGS...]: `kubectl auth can-i` says yes for the account.
can() { kubectl --kubeconfig="$sa_kubeconfig" --request-timeout=30s auth can-i "$@" >/dev/null 2>&1; }
# allowed yes|no: each line of stdin (a verb, a resource, flags) is, or is
# not, allowed; prints the lines that are not as they should be.
allowed() {
  local line words
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    read -ra words <<<"$line"
    if can "${words[@]}"; then
      [ "$1" = yes ] || echo "may: $line"
    else
      [ "$1" = no ] || echo "may not: $line"
    fi
  done
}
least_privilege() {
  local wrong
  wrong=$(
    allowed no <<'CASES'
get secrets -n kube-system
get secrets -n default
list secrets -n flux-system
watch secrets -n flux-system
list namespaces
watch deployments.apps -n flux-system
delete namespaces
delete namespaces/flux-system
list pods -n default
get pods -n flux-system
list replicasets.apps -n default
list events -n default
list storageclasses.storage.k8s.io
create pods -n flux-system
create deployments -n default
delete deployments -n kube-system
patch services -n default
create rolebindings -n kube-system
create roles -n flux-system
bind clusterroles/admin
escalate clusterroles/admin
escalate clusterroles/cluster-admin
create fluxinstances.fluxcd.controlplane.io -n default
create gitrepositories.source.toolkit.fluxcd.io -n default
delete kustomizations.kustomize.toolkit.fluxcd.io -n apps
delete leases.coordination.k8s.io -n flux-system
delete leases.coordination.k8s.io/flux-operator -n flux-system
create leases.coordination.k8s.io -n kube-system
get configmaps -n kube-system
get nodes/node-1
create validatingwebhookconfigurations.admissionregistration.k8s.io
create serviceaccounts --subresource=token -n flux-system
create localsubjectaccessreviews.authorization.k8s.io -n default
* *
CASES
    # What the daemon needs that the applies above may not have exercised.
    allowed yes <<'CASES'
get secrets/pull-secret -n flux-system
bind clusterroles/cluster-admin
escalate clusterroles/crd-controller-flux-system
patch fluxinstances.fluxcd.controlplane.io --subresource=status -n flux-system
update fluxinstances.fluxcd.controlplane.io --subresource=finalizers -n flux-system
update leases.coordination.k8s.io -n flux-system
delete leases.coordination.k8s.io/fluxopctl-flux -n flux-system
list nodes
create events -n flux-system
create events.events.k8s.io -n flux-system
update helmreleases.helm.toolkit.fluxcd.io -n apps
patch kustomizations.kustomize.toolkit.fluxcd.io -n apps
list fluxinstances.fluxcd.controlplane.io -A
patch customresourcedefinitions.apiextensions.k8s.io --subresource=status
get storageclasses.storage.k8s.io/standard
list pods -n flux-system
list replicasets.apps -n flux-system
list events -n flux-system
create tokenreviews.authentication.k8s.io
create subjectaccessreviews.authorization.k8s.io
CASES
  )
  [ -z "$wrong" ] || { echo "the service account $(head -n 1 <<<"$wrong")"; tail -n +2 <<<"$wrong"; return 1; }
}
check "least privilege: kubectl auth can-i for what it must not and must do" least_privilege

# ---------------------------------------------------------------------------
# 4. The image

image_status=0
wait "$image_pid" || image_status=$?
image_pid=
image_built() {
  show "$work/image.err"
  [ "$image_status" = 0 ] || { echo "scripts/image failed (exit $image_status): $(tail -n 1 "$work/image.err")"; return 1; }
  local bytes
  bytes=$(sed -n 's/^size: .*(\([0-9]*\) bytes).*/\1/p' "$work/image.out")
  [ -n "$bytes" ] || { echo "scripts/image printed no size"; return 1; }
  [ "$bytes" -lt $((30 * 1024 * 1024)) ] || { echo "the image is $(grep '^size:' "$work/image.out")"; return 1; }
  grep -q "^pushed: oci://$image_ref@" "$work/image.out" || { echo "scripts/image did not say it pushed"; return 1; }
}
check "scripts/image builds the image (under 30 MiB) and pushes it" image_built
sed -n 's/^/  /p' "$work/image.out"

rootfs=$work/bundle/rootfs
pull_unpack() {
  local digest pulled
  skopeo --policy "$work/policy.json" copy --quiet --src-tls-verify=false \
    "docker://$image_ref" "oci:$work/pulled:test" >"$work/pull.err" 2>&1 ||
    { echo "skopeo copy from the registry failed: $(tail -n 1 "$work/pull.err")"; return 1; }
  digest=$(sed -n 's/^digest: //p' "$work/image.out")
  pulled=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' \
    "$work/pulled/index.json")
  [ "$pulled" = "$digest" ] || { echo "pulled $pulled, built $digest"; return 1; }
  umoci unpack --image "$work/pulled:test" "$work/bundle" >"$work/unpack.err" 2>&1 ||
    { echo "umoci unpack failed: $(tail -n 1 "$work/unpack.err")"; return 1; }
  # The runtime configuration umoci derives from the image's.
  python3 - "$work/bundle/config.json" <<'PY' || return 1
import json, sys
process = json.load(open(sys.argv[1]))["process"]
user = process["user"]
problems = []
if (user.get("uid"), user.get("gid")) != (65532, 65532):
    problems.append(f"runs as {user}, not 65532:65532")
if process["args"][:1] != ["/usr/bin/fluxopctl"]:
    problems.append(f"runs {process['args']}")
if "XDG_CACHE_HOME=/tmp/.cache" not in process.get("env", []):
    problems.append("no XDG_CACHE_HOME=/tmp/.cache in its environment")
if problems:
    print("; ".join(problems))
    sys.exit(1)
PY
  {
    [ -x "$rootfs/usr/bin/fluxopctl" ] && [ -s "$rootfs/etc/ssl/certs/ca-certificates.crt" ] &&
      grep -q '^nonroot:x:65532:65532:' "$rootfs/etc/passwd"
  } || { echo "the root lacks the binary, the CA certificates or the nonroot user"; return 1; }
  [ ! -e "$rootfs/bin/sh" ] || { echo "the root has a shell"; return 1; }
}
check "pulled back from the registry (same digest), unpacked: user 65532, entrypoint, files" pull_unpack

# in_pod NAME ARGS...: runs the image's fluxopctl as deploy/ runs it in a
# pod: in the unpacked root (chroot), read-only, as 65532:65532, with $pod_tmp
# as its writable /tmp (the emptyDir), the service account's token, CA and
# namespace in /var/run/secrets/kubernetes.io/serviceaccount and
# KUBERNETES_SERVICE_HOST/PORT naming the API server (fluxopctl's in-cluster
# configuration), and nothing of this machine's environment. stdin passes
# through; stdout in $work/NAME.out, stderr in $work/NAME.err, the exit code
# in $rc.
pod_tmp=$work/pod-tmp
pod_sa=$work/pod-sa
pod_setup() {
  local hostport=${api_server#https://}
  api_host=${hostport%:*} api_port=${hostport##*:}
  mkdir -p "$pod_tmp" "$pod_sa" "$rootfs/var/run/secrets/kubernetes.io/serviceaccount" "$rootfs/dev" \
    "$rootfs/proc" || return 1
  chown 65532:65532 "$pod_tmp" && chmod 0755 "$pod_tmp" || return 1
  {
    token >"$pod_sa/token" && cp "$work/ca.crt" "$pod_sa/ca.crt" && printf flux-system >"$pod_sa/namespace" &&
      chmod 0644 "$pod_sa"/*
  } || { echo "writing the service account files failed"; return 1; }
}
# shellcheck disable=SC2016 # expanded by the inner bash
pod_script='set -e
rootfs=$1 tmp=$2 sa=$3
shift 3
mount --bind "$rootfs" "$rootfs"
mount -o remount,bind,ro "$rootfs"
mount --rbind /dev "$rootfs/dev"
mount -t proc proc "$rootfs/proc"
mount --bind "$tmp" "$rootfs/tmp"
mount --bind "$sa" "$rootfs/var/run/secrets/kubernetes.io/serviceaccount"
mount -o remount,bind,ro "$rootfs/var/run/secrets/kubernetes.io/serviceaccount"
exec chroot --userspec=65532:65532 "$rootfs" /usr/bin/fluxopctl "$@"'
in_pod() {
  local name=$1
  shift
  rc=0
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOSTNAME=fluxopctl-test HOME=/home/nonroot \
    XDG_CACHE_HOME=/tmp/.cache KUBERNETES_SERVICE_HOST="$api_host" KUBERNETES_SERVICE_PORT="$api_port" \
    timeout -k 5 "$run_limit" unshare --mount --propagation private --kill-child -- \
    bash -c "$pod_script" pod "$rootfs" "$pod_tmp" "$pod_sa" "$@" >"$work/$name.out" 2>"$work/$name.err" ||
    rc=$?
  show "$work/$name.err"
}

if [ -x "$rootfs/usr/bin/fluxopctl" ] && pod_setup >"$work/pod-setup.why" 2>&1; then
  in_pod pod-version version </dev/null
  same_version() {
    exit_is 0 || return 1
    [ "$(cat "$work/pod-version.out")" = "$("$bin" version)" ] ||
      { echo "it says '$(cat "$work/pod-version.out")', the binary '$("$bin" version)'"; return 1; }
  }
  check "in the pod's root: fluxopctl version" same_version

  # Back to every component, a Bucket sync this time (the OCI one pruned),
  # the distribution pulled from the registry into /tmp.
  instance "$work/pod.instance.yaml" 2.9.x "    artifact: $artifact" \
    "  components: [source-controller, kustomize-controller, helm-controller, notification-controller," \
    "    image-reflector-controller, image-automation-controller, source-watcher]" \
    "  cluster: {type: kubernetes, networkPolicy: true, domain: cluster.local}" \
    "  storage: {class: standard, size: 1Gi}" \
    "  sharding: {key: sharding.fluxcd.io/key, shards: [shard1, shard2], storage: persistent}" \
    "  sync: {kind: Bucket, url: minio.example.com, ref: fleet, path: clusters/test}"
  in_pod pod-apply apply -f - --no-wait --timeout 3m <"$work/pod.instance.yaml"
  pod_applied() {
    exit_is 0 || return 1
    built pod "$work/pod.instance.yaml" || return 1
    installed pod "$work/pod.instance.yaml" || return 1
    [ -n "$(ls -A "$pod_tmp/.cache/fluxopctl/oci" 2>/dev/null)" ] ||
      { echo "the distribution artifact is not cached in the pod's /tmp/.cache/fluxopctl"; return 1; }
  }
  check "in the pod's root: an in-cluster apply, read-only root, uid 65532, distribution from the registry" \
    pod_applied
  check "in the pod's root: what it no longer renders is pruned (the OCI sync)" gone_but small pod

  # The daemon as deploy/ runs it, with the service account's RBAC: the
  # instance watched, a reconcile request handled (status, events), the
  # leader Lease held; SIGTERM ends it with exit 0 and releases the Lease.
  # (--no-wait: the shards' volumes are never bound here.)
  (
    in_pod pod-daemon apply --watch --from-cluster --namespace=flux-system --enable-leader-election \
      --log-format=json --no-wait --timeout 3m </dev/null
    exit "$rc"
  ) &
  pod_daemon=$!
  requested=$(date +%s%N)
  k -n flux-system annotate fluxinstance flux --overwrite "reconcile.fluxcd.io/requestedAt=$requested" >/dev/null
  show "$work/pod-daemon.err"
  request_handled() {
    [ "$(k -n flux-system get fluxinstance flux -o jsonpath='{.status.lastHandledReconcileAt}')" = "$requested" ] &&
      grep -q '"Reconciliation finished' "$work/pod-daemon.err"
  }
  check "in the pod's root: the daemon reconciles a request" wait_until 180 request_handled
  lease_holder() { k -n flux-system get lease flux-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
  check "in the pod's root: the daemon holds the leader Lease" eval '[ -n "$(lease_holder)" ]'
  pkill -TERM -f '^/usr/bin/fluxopctl apply --watch --from-cluster' ||
    fail "in the pod's root: the daemon" "no daemon process to stop"
  pod_daemon_status=0
  wait_until 10 eval '! kill -0 "$pod_daemon" 2>/dev/null' || kill -9 "$pod_daemon"
  wait "$pod_daemon" || pod_daemon_status=$?
  check "in the pod's root: SIGTERM stops the daemon (exit 0) and releases the Lease" \
    eval '[ "$pod_daemon_status" = 0 ] && [ -z "$(lease_holder)" ] || { echo "exit $pod_daemon_status, holder $(lease_holder)"; false; }'
else
  show "$work/pod-setup.why"
  fail "in the pod's root" "no unpacked image, or preparing its mounts failed: $(head -n 1 "$work/pod-setup.why")"
fi
summary
