# cosign, the Sigstore signer and verifier: the oracle of tests/signatures
# (it signs what fluxopctl verifies, and verifies the same cases). Built once
# from the Go module proxy into the test cache, its cmd/cosign package only.
# Sourced; sets cosign_version and cosign (the binary's path).

# shellcheck source=scripts/lib/go-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-install.sh"

cosign_version=v3.1.3
# FLUXOPCTL_TEST_CACHE: as in scripts/cluster.
cosign=${FLUXOPCTL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluxopctl-test}/bin/cosign-$cosign_version

# Builds the binary when missing (go_install_once's exit statuses).
cosign_ensure_built() {
  go_install_once "$cosign" "github.com/sigstore/cosign/v3/cmd/cosign@$cosign_version"
}
