# The upstream flux-operator CLI, the behavioural oracle of scripts/parity and
# scripts/bench: built once from the Go module proxy into the test cache.
# Sourced; sets upstream_version and upstream (the binary's path).

upstream_version=v0.58.1
# FLUXOPCTL_TEST_CACHE: as in scripts/cluster.
upstream=${FLUXOPCTL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluxopctl-test}/bin/flux-operator-$upstream_version

# Builds the binary when missing. Returns 77 when Go is not installed, 1 when
# the build fails; says which on stderr.
upstream_ensure_built() {
  [ -x "$upstream" ] && return 0
  if ! command -v go >/dev/null; then
    echo "Go is not installed; it is needed once to build flux-operator $upstream_version" >&2
    return 77
  fi
  echo "building flux-operator $upstream_version from the Go module proxy (once, into ${upstream%/*})" >&2
  local gobin
  mkdir -p "${upstream%/*}" && gobin=$(mktemp -d "${upstream%/*}/.build-XXXXXX") || return 1
  if ! GOBIN=$gobin GOFLAGS=-buildvcs=false \
    go install "github.com/controlplaneio-fluxcd/flux-operator/cmd/cli@$upstream_version"; then
    rm -rf "$gobin"
    echo "building flux-operator $upstream_version failed" >&2
    return 1
  fi
  mv "$gobin/cli" "$upstream" && rm -rf "$gobin"
}
