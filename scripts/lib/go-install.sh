# A Go command of the test infrastructure (an oracle: the upstream CLI,
# cosign), built once from the Go module proxy into the test cache.
# Sourced.

# go_install_once DEST PACKAGE@VERSION: builds the command PACKAGE into DEST
# (through a scratch GOBIN beside it, so that DEST appears whole) when DEST is
# missing. Returns 77 when Go is not installed, 1 when the build fails; says
# which on stderr.
go_install_once() {
  local dest=$1 package=$2
  [ -x "$dest" ] && return 0
  if ! command -v go >/dev/null; then
    echo "Go is not installed; it is needed once to build $package" >&2
    return 77
  fi
  echo "building $package from the Go module proxy (once, into ${dest%/*})" >&2
  local gobin command=${package%@*}
  command=${command##*/}
  mkdir -p "${dest%/*}" && gobin=$(mktemp -d "${dest%/*}/.build-XXXXXX") || return 1
  if ! GOBIN=$gobin GOFLAGS=-buildvcs=false go install "$package"; then
    rm -rf "$gobin"
    echo "building $package failed" >&2
    return 1
  fi
  mv "$gobin/$command" "$dest" && rm -rf "$gobin"
}
