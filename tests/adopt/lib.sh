# Sourced by the adopt tests (tests/adopt/bootstrap_test.sh,
# tests/e2e/adopt_test.sh), after tests/lib/harness.sh: their prerequisites,
# and a bootstrap directory as the real flux CLI writes one.
#
#   adopt_prerequisites VERSION...
#                         kubectl, the distribution ($dist) and the flux CLI
#                         of each Flux VERSION (built when missing): a skip
#                         (skip_test) when one cannot be had
#   bootstrap DIR VERSION SYNC [INSTALL_FLAG...]
#                         DIR/gotk-components.yaml (flux install --export),
#                         gotk-sync.yaml (flux create source and kustomization
#                         --export; SYNC is git or oci) and a kustomization.yaml
#                         listing both, to which a test appends its patches
#   append_label_patches DIR N
#                         N JSON 6902 patches appended to DIR/kustomization.yaml,
#                         each a label on one of the four controllers (the
#                         many-patches case and scripts/bench adopt)

# shellcheck source=scripts/lib/flux-cli.sh
source "$root/scripts/lib/flux-cli.sh"

adopt_prerequisites() {
  command -v kubectl >/dev/null || skip_test "kubectl is not installed"
  [ -d "$dist/flux" ] || skip_test "no Flux distribution at $dist"
  FLUX_DISTRIBUTION=$dist flux_cli_ensure_built "$@"
  case $? in
    0) ;;
    77) skip_test "Go is not installed: it builds the flux CLI" ;;
    *) abort "building the flux CLI" ;;
  esac
}

bootstrap() {
  local dir=$1 version=$2 sync=$3 flux
  shift 3
  flux=$(flux_cli "$version")
  mkdir -p "$dir"
  "$flux" install --export --version "$version" "$@" >"$dir/gotk-components.yaml" 2>"$dir.err" ||
    { echo "flux install --export $* failed: $(tail -n 1 "$dir.err")"; return 1; }
  {
    if [ "$sync" = oci ]; then
      "$flux" create source oci flux-system --url=oci://registry.example.com/fleet \
        --tag=latest --secret-ref=flux-system --interval=1m --export
    else
      "$flux" create source git flux-system --url=ssh://git@example.com/org/fleet.git \
        --branch=main --secret-ref=flux-system --interval=1m --export
    fi
    "$flux" create kustomization flux-system --source="$([ "$sync" = oci ] &&
      echo OCIRepository || echo GitRepository)/flux-system" --path=./clusters/one --prune=true \
      --interval=10m --export
  } >"$dir/gotk-sync.yaml" 2>"$dir.err" || { echo "flux create --export failed: $(tail -n 1 "$dir.err")"; return 1; }
  printf '%s\n' 'apiVersion: kustomize.config.k8s.io/v1beta1' 'kind: Kustomization' 'resources:' \
    '- gotk-components.yaml' '- gotk-sync.yaml' >"$dir/kustomization.yaml"
}

append_label_patches() {
  python3 - "$1/kustomization.yaml" "$2" <<'PY'
import sys
controllers = ["source-controller", "kustomize-controller", "helm-controller", "notification-controller"]
path, count = sys.argv[1], int(sys.argv[2])
with open(path, "a") as f:
    f.write("patches:\n")
    for i in range(count):
        f.write("  - patch: |\n      - op: add\n        path: /metadata/labels/example.com~1note-%d\n"
                "        value: n%d\n    target:\n      kind: Deployment\n      name: %s\n"
                % (i, i, controllers[i % 4]))
PY
}
