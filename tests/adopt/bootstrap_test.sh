#!/usr/bin/env bash
# `fluxopctl adopt DIR` on bootstrap directories written by the real flux
# CLI (scripts/lib/flux-cli.sh), offline: `flux install --export` as
# gotk-components.yaml, `flux create source ... --export` and `flux create
# kustomization ... --export` as gotk-sync.yaml, and a kustomization.yaml
# with the patches the Flux docs recommend, across Flux 2.2 to 2.9.
#
#   tests/adopt/bootstrap_test.sh BIN ROOT
#
# Each directory: adopt exits 0, its FluxInstance builds (fluxopctl build
# --operator) the same objects as `kubectl kustomize DIR`; a hand-edited
# one reports exactly its edits, reproduces those a patch can and names the
# object it cannot (exit 1); invalid or partial directories fail with one
# line. Prints, per directory, adopt's exit code and the objects it
# compared. Exit 77 (1 in CI) when it cannot run (no kubectl, no
# distribution, no Go to build flux).
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
dist=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
# shellcheck source=tests/adopt/lib.sh
source "$root/tests/adopt/lib.sh"
work=$(mktemp -d)
on_exit 'rm -rf "$work"'

adopt_prerequisites "${flux_cli_versions[@]}"

# The kinds of patches the Flux docs recommend for a bootstrap repository.
patch_multitenancy() {
  cat >>"$1/kustomization.yaml" <<'EOF'
patches:
- patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/0
      value: --no-cross-namespace-refs=true
  target:
    kind: Deployment
    name: "(kustomize-controller|helm-controller|notification-controller|image-reflector-controller|image-automation-controller)"
- patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --no-remote-bases=true
  target:
    kind: Deployment
    name: kustomize-controller
- patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/0
      value: --default-service-account=default
  target:
    kind: Deployment
    name: "(kustomize-controller|helm-controller)"
- patch: |
    - op: add
      path: /spec/serviceAccountName
      value: kustomize-controller
  target:
    kind: Kustomization
    name: flux-system
EOF
}
patch_scaling() {
  cat >>"$1/kustomization.yaml" <<'EOF'
patches:
- patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --concurrent=20
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --kube-api-qps=500
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --kube-api-burst=1000
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --requeue-dependency=5s
  target:
    kind: Deployment
    name: "(kustomize-controller|helm-controller|source-controller)"
- patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: all
    spec:
      template:
        spec:
          containers:
          - name: manager
            resources:
              limits:
                cpu: 2000m
                memory: 2Gi
  target:
    kind: Deployment
    name: "(kustomize-controller|helm-controller|source-controller)"
EOF
}
patch_tolerations_sops_gates() {
  cat >>"$1/kustomization.yaml" <<'EOF'
patches:
- patch: |
    - op: add
      path: /spec/template/spec/tolerations
      value:
      - key: role
        operator: Equal
        value: flux
        effect: NoSchedule
  target:
    kind: Deployment
- patch: |
    - op: add
      path: /spec/decryption
      value:
        provider: sops
        secretRef:
          name: sops-gpg
  target:
    kind: Kustomization
    name: flux-system
- patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --feature-gates=OOMWatch=true,DetectDrift=true
  target:
    kind: Deployment
    name: helm-controller
EOF
}
# The deprecated fields, with a patch file.
patch_legacy() {
  cat >>"$1/kustomization.yaml" <<'EOF'
patchesStrategicMerge:
- source-controller-memory.yaml
patchesJson6902:
- target:
    group: apps
    version: v1
    kind: Deployment
    name: kustomize-controller
    namespace: flux-system
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --concurrent=8
EOF
  cat >"$1/source-controller-memory.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: source-controller
  namespace: flux-system
spec:
  template:
    spec:
      containers:
      - name: manager
        resources:
          requests:
            memory: 512Mi
EOF
}

# Runs adopt on DIR: $work/NAME.out (the instance), .stderr, .rc, and the
# count of objects it compared in .compared.
adopt() {
  local name=$1
  shift
  timeout 60 "$bin" adopt "$work/$name" --distribution-artifact "$dist" "$@" >"$work/$name.out" 2>"$work/$name.stderr"
  echo $? >"$work/$name.rc"
  sed -n 's/^adopt: Flux [^ ]*, \([0-9]*\) objects\{0,1\} compared.*/\1/p' "$work/$name.stderr" >"$work/$name.compared"
  show "$work/$name.stderr"
}
ids() { "$@" | python3 -c '
import sys, yaml
for doc in yaml.safe_load_all(sys.stdin):
    if doc:
        m = doc["metadata"]
        print("%s/%s/%s/%s" % (doc["apiVersion"].split("/")[0] if "/" in doc["apiVersion"] else "", doc["kind"], m.get("namespace", ""), m["name"]))
' | sort; }
# One line per directory for the closing summary (a case runs in a subshell).
record() { echo "$1: exit $(cat "$work/$1.rc"), $(cat "$work/$1.compared") objects compared" >>"$work/results"; }

# adopt exits 0, says nothing is lost, and its FluxInstance builds the
# objects kubectl kustomize builds of the directory.
adopted_whole() {
  local name=$1
  record "$name"
  [ "$(cat "$work/$name.rc")" = 0 ] || { echo "adopt exited $(cat "$work/$name.rc")"; cat "$work/$name.stderr"; return 1; }
  grep -q '^next steps:' "$work/$name.stderr" || { echo "no next steps"; return 1; }
  "$bin" build --operator "$work/$name.out" --distribution-artifact "$dist" >"$work/$name.build" 2>"$work/$name.build.err" ||
    { echo "its FluxInstance does not build: $(tail -n 1 "$work/$name.build.err")"; return 1; }
  local theirs ours
  theirs=$(ids kubectl kustomize "$work/$name") || { echo "kubectl kustomize failed"; return 1; }
  ours=$(ids cat "$work/$name.build")
  [ "$theirs" = "$ours" ] || { echo "the objects differ (< installed, > rendered):"; diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]'; return 1; }
}
field() { python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1]))
for k in sys.argv[2:]: d = d[int(k)] if isinstance(d, list) else d[k]
print(d)' "$@"; }

# One case per directory: NAME VERSION SYNC PATCHER EXPECT [INSTALL_FLAG...].
case_dir() {
  local name=$1 version=$2 sync=$3 patcher=$4
  shift 4
  bootstrap "$work/$name" "$version" "$sync" "$@" || return 1
  [ "$patcher" = - ] || "$patcher" "$work/$name"
  adopt "$name"
  adopted_whole "$name"
}
check "v2.2.3, the defaults" case_dir v2.2.3-default v2.2.3 git -
check "v2.3.0, no network policies" case_dir v2.3.0-no-netpol v2.3.0 git - --network-policy=false
check "v2.4.0, image automation components" case_dir v2.4.0-extra v2.4.0 git - \
  --components-extra=image-reflector-controller,image-automation-controller
check "v2.5.1, a custom cluster domain" case_dir v2.5.1-domain v2.5.1 git - \
  --cluster-domain=cluster.example
check "v2.6.4, multi-tenancy lockdown patches" case_dir v2.6.4-multitenant v2.6.4 git patch_multitenancy
check "v2.7.5, concurrency and resources patches, an OCI sync" case_dir v2.7.5-scaling v2.7.5 oci patch_scaling
check "v2.8.8, tolerations, SOPS decryption, feature gates" case_dir v2.8.8-sops v2.8.8 git \
  patch_tolerations_sops_gates
check "v2.9.4, every component, options, legacy patch fields" case_dir v2.9.4-all v2.9.4 git patch_legacy \
  --components-extra=image-reflector-controller,image-automation-controller,source-watcher \
  --log-level=debug --watch-all-namespaces=false --network-policy=false --registry=registry.example.com/fluxcd
# patch_many DIR: 6,000 patches (a 1 MB kustomization, within every bound),
# each a label on one of the four controllers. Each render of the instance
# applies them all: adopt renders a few times, not once per patch (which
# took minutes; the command's bound above is 60 s).
patch_many() { append_label_patches "$1" 6000; }
many_patches() {
  case_dir v2.9.4-many-patches v2.9.4 git patch_many || return 1
  [ "$(field "$work/v2.9.4-many-patches.out" spec kustomize patches 5999 target name)" = notification-controller ] ||
    { echo "the instance does not carry the 6,000 patches"; return 1; }
}
check "v2.9.4, 6,000 patches" many_patches

inferred() {
  local failures=""
  expect() { [ "$(field "$work/$1.out" "${@:3}")" = "$2" ] || failures+=" $1:${*:3}=$(field "$work/$1.out" "${@:3}" 2>&1), not $2;"; }
  expect v2.2.3-default 2.2.3 spec distribution version
  expect v2.3.0-no-netpol False spec cluster networkPolicy
  expect v2.4.0-extra image-automation-controller spec components 5
  expect v2.5.1-domain cluster.example spec cluster domain
  expect v2.7.5-scaling OCIRepository spec sync kind
  expect v2.7.5-scaling latest spec sync ref
  expect v2.6.4-multitenant Kustomization spec kustomize patches 3 target kind
  expect v2.9.4-all registry.example.com/fluxcd spec distribution registry
  expect v2.9.4-all source-watcher spec components 6
  expect v2.9.4-all refs/heads/main spec sync ref
  expect v2.9.4-all ./clusters/one spec sync path
  [ -z "$failures" ] || { echo "$failures"; return 1; }
}
check "the instances say what flux bootstrap was given" inferred

# The hand-edited directory: an argument, an env var, a resource limit, an
# extra object, each reported; the three a patch can reproduce are, in the
# instance's render; the extra object is named, exit 1.
hand_edited() {
  bootstrap "$work/hand-edited" v2.9.4 git || return 1
  python3 - "$work/hand-edited/gotk-components.yaml" <<'EOF' || return 1
import sys, yaml
path = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
for d in docs:
    if d["kind"] != "Deployment":
        continue
    c = d["spec"]["template"]["spec"]["containers"][0]
    if d["metadata"]["name"] == "kustomize-controller":
        c["args"].append("--concurrent=12")
    if d["metadata"]["name"] == "helm-controller":
        # A proxy's credentials, long enough that the proof's cut of the
        # value (160 columns) falls inside them: never shown.
        c["env"].insert(0, {"name": "HTTPS_PROXY",
                            "value": "http://flux:" + "T0k" * 70 + "@proxy.example.com:3128"})
    if d["metadata"]["name"] == "source-controller":
        c["resources"]["limits"]["memory"] = "3Gi"
docs.append({"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "extra", "namespace": "flux-system"}, "data": {"a": "b"}})
open(path, "w").write("---\n" + "---\n".join(yaml.safe_dump(d) for d in docs))
EOF
  adopt hand-edited
  record hand-edited
  [ "$(cat "$work/hand-edited.rc")" = 1 ] || { echo "adopt exited $(cat "$work/hand-edited.rc"), not 1"; return 1; }
  local reported
  reported=$(sed -n '/^reproduced by/,/^[a-z]/{/^  /p}' "$work/hand-edited.stderr" | grep -v '^    ' | cut -d: -f1 | sort)
  local want
  want=$(printf '%s\n' \
    "  Deployment/flux-system/helm-controller /spec/template/spec/containers/0/env" \
    "  Deployment/flux-system/kustomize-controller /spec/template/spec/containers/0/args" \
    "  Deployment/flux-system/source-controller /spec/template/spec/containers/0/resources/limits/memory" | sort)
  [ "$reported" = "$want" ] || { echo "reproduced, not the three edits:"; echo "$reported"; return 1; }
  local lost
  lost=$(sed -n '/^not reproduced/,$p' "$work/hand-edited.stderr" | tail -n +2)
  [ "$lost" = "  ConfigMap/flux-system/extra: installed only; keep it in a file of the repository other than gotk-components.yaml" ] ||
    { echo "not reproduced, not only the extra object:"; echo "$lost"; return 1; }
  "$bin" build --operator "$work/hand-edited.out" --distribution-artifact "$dist" >"$work/hand-edited.build" 2>&1 ||
    { echo "its FluxInstance does not build"; return 1; }
  ! grep -q 'T0kT0k' "$work/hand-edited.stderr" || { echo "the proof shows the proxy's credentials"; return 1; }
  grep -q -- '--concurrent=12' "$work/hand-edited.build" && grep -q 'T0k@proxy.example.com:3128' "$work/hand-edited.build" &&
    grep -q 'memory: 3Gi' "$work/hand-edited.build" || { echo "the render lacks an edit"; return 1; }
  # Without the extra object nothing is lost.
  python3 - "$work/hand-edited/gotk-components.yaml" <<'EOF'
import sys, yaml
path = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(path)) if d and d["kind"] != "ConfigMap"]
open(path, "w").write("---\n" + "---\n".join(yaml.safe_dump(d) for d in docs))
EOF
  adopt hand-edited
  [ "$(cat "$work/hand-edited.rc")" = 0 ] || { echo "without the extra object adopt exited $(cat "$work/hand-edited.rc")"; return 1; }
}
check "a hand-edited directory: its edits, reproduced, and the extra object named" hand_edited

# Invalid or partial directories: one line on stderr, nothing on stdout.
one_line_error() {
  local name=$1 code=$2 pattern=$3
  adopt "$name" "${@:4}"
  [ "$(cat "$work/$name.rc")" = "$code" ] || { echo "exit $(cat "$work/$name.rc"), not $code"; return 1; }
  [ ! -s "$work/$name.out" ] || { echo "stdout is not empty"; return 1; }
  [ "$(wc -l <"$work/$name.stderr")" = 1 ] && grep -q -- "$pattern" "$work/$name.stderr" ||
    { echo "not one line with $pattern:"; cat "$work/$name.stderr"; return 1; }
}
partial() {
  mkdir -p "$work/partial" && cp "$work/v2.2.3-default/gotk-sync.yaml" "$work/partial/" &&
    printf 'resources:\n- gotk-sync.yaml\n' >"$work/partial/kustomization.yaml"
  one_line_error partial 1 "^error: .*/partial: no gotk-components.yaml: "
}
outside() {
  mkdir -p "$work/outside" && sed 's/app.kubernetes.io\/version: v2.2.3/app.kubernetes.io\/version: v2.1.0/' \
    "$work/v2.2.3-default/gotk-components.yaml" >"$work/outside/gotk-components.yaml"
  one_line_error outside 1 "^error: .*/outside: Flux v2.1.0 is installed, which the distribution"
}
two_installations() {
  mkdir -p "$work/two" && cp "$work/v2.2.3-default/gotk-components.yaml" "$work/two/" &&
    "$(flux_cli v2.2.3)" install --export --version v2.2.3 --namespace flux-two >>"$work/two/gotk-components.yaml" 2>/dev/null
  one_line_error two 1 "^error: .*/two: two Flux installations, in flux-system and flux-two$"
}
usage() {
  one_line_error usage 2 "^error: " --no-such-flag
}
check "no gotk-components.yaml" partial
check "a version the distribution does not have" outside
check "two installations" two_installations
check "a usage error" usage

[ -f "$work/results" ] && sed 's/^/# /' "$work/results"
summary
