# The upstream flux-operator CLI, the behavioural oracle of scripts/parity and
# scripts/bench: built once from the Go module proxy into the test cache.
# Sourced; sets upstream_version and upstream (the binary's path).

# shellcheck source=scripts/lib/go-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-install.sh"

upstream_version=v0.58.1
# FLUXOPCTL_TEST_CACHE: as in scripts/cluster.
upstream=${FLUXOPCTL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluxopctl-test}/bin/flux-operator-$upstream_version

# Builds the binary when missing (go_install_once's exit statuses).
upstream_ensure_built() {
  go_install_once "$upstream" "github.com/controlplaneio-fluxcd/flux-operator/cmd/cli@$upstream_version"
}
