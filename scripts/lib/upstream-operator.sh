# The upstream Flux Operator (the in-cluster controller), the behavioural
# oracle of the hand-off tests: built once from the Go module proxy into the
# test cache, next to the upstream CLI, with the same Go build cache so that
# the packages both use compile once, and its CRDs copied beside it. Sourced;
# sets upstream_operator (the binary's path) and upstream_operator_crds (the
# directory of its CRDs).
#
# The module as published does not build as is: web/embed.go embeds web/dist,
# which the module does not ship (a placeholder page stands in), and go.mod
# pins a pseudo-version of go-containerregistry's authn/kubernetes that the
# proxy no longer serves (replaced with one it serves).

source "$(dirname "${BASH_SOURCE[0]}")/upstream-cli.sh"

upstream_operator=${upstream%/*}/flux-operator-controller-$upstream_version
upstream_operator_crds=$upstream_operator.crds

# Returns 77 when Go is not installed, 1 when the build fails; says which on
# stderr.
upstream_operator_ensure_built() {
  [ -x "$upstream_operator" ] && [ -d "$upstream_operator_crds" ] && return 0
  if ! command -v go >/dev/null; then
    echo "Go is not installed; it is needed once to build the flux-operator $upstream_version controller" >&2
    return 77
  fi
  mkdir -p "${upstream_operator%/*}" || return 1
  (
    build_lock "$upstream_operator.lock" || exit 1
    [ -x "$upstream_operator" ] && [ -d "$upstream_operator_crds" ] && exit 0
    module=github.com/controlplaneio-fluxcd/flux-operator
    source=$(GOFLAGS=-mod=mod go mod download -json "$module@$upstream_version" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
    if [ ! -d "$source" ]; then
      echo "downloading $module@$upstream_version from the Go module proxy failed" >&2
      exit 1
    fi
    echo "building the flux-operator $upstream_version controller from the Go module proxy (once, into ${upstream_operator%/*})" >&2
    work=$(mktemp -d "${upstream_operator%/*}/.build-XXXXXX") || exit 1
    trap 'rm -rf "$work"' EXIT
    (
      set -e
      cp -r "$source/." "$work/src"
      chmod -R u+w "$work/src"
      cd "$work/src"
      mkdir -p web/dist
      echo '<!doctype html><title>flux-operator</title>' >web/dist/index.html
      go mod edit -replace \
        github.com/google/go-containerregistry/pkg/authn/kubernetes=github.com/google/go-containerregistry/pkg/authn/kubernetes@v0.0.0-20250225234217-098045d5e61f
      GOFLAGS='-buildvcs=false -mod=mod' go build -o "$work/operator" ./cmd/operator
    ) || { echo "building the flux-operator $upstream_version controller failed" >&2; exit 1; }
    rm -rf "$upstream_operator_crds" && cp -r "$work/src/config/crd/bases" "$upstream_operator_crds" &&
      mv "$work/operator" "$upstream_operator"
  )
}
