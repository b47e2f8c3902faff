# A Go command of the test infrastructure (an oracle: the upstream CLI,
# cosign), built once from the Go module proxy into the test cache.
# Sourced.

# build_lock FILE: takes an exclusive lock on FILE (on fd 9) for the rest of
# the (sub)shell, waiting up to an hour for another build that holds it (CI
# builds the infrastructure in the background while ctest's peer_* fixtures
# wait for it, CMakeLists.txt): two builds of one binary never run at once,
# nor write one scratch directory.
build_lock() {
  exec 9>"$1" && flock -w 3600 9 ||
    { echo "another build holding $1 did not end within an hour" >&2; return 1; }
}

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
  mkdir -p "${dest%/*}" || return 1
  (
    build_lock "$dest.lock" || exit 1
    [ -x "$dest" ] && exit 0
    echo "building $package from the Go module proxy (once, into ${dest%/*})" >&2
    command=${package%@*}
    command=${command##*/}
    gobin=$(mktemp -d "${dest%/*}/.build-XXXXXX") || exit 1
    trap 'rm -rf "$gobin"' EXIT
    GOBIN=$gobin GOFLAGS=-buildvcs=false go install "$package" && mv "$gobin/$command" "$dest"
  ) || { echo "building $package failed" >&2; return 1; }
}

# go_build_program DEST NAME MODULE VERSION < MAIN_GO: builds the Go program
# MAIN_GO (a main package on stdin, which imports from MODULE) in a wrapper
# module requiring MODULE at VERSION, into DEST, when DEST is missing; NAME
# says what it is in messages. Two tests starting at once build it once (a
# lock beside DEST). Returns 77 when Go is not installed, 1 when the build
# fails; says which on stderr.
go_build_program() {
  local dest=$1 name=$2 module=$3 version=$4 go
  [ -x "$dest" ] && return 0
  go=$(command -v go || echo /usr/local/go/bin/go)
  if [ ! -x "$go" ]; then
    echo "Go is not installed; it is needed once to build $name" >&2
    return 77
  fi
  mkdir -p "${dest%/*}" || return 1
  local main_go
  main_go=$(cat) || return 1
  (
    build_lock "$dest.lock" || exit 1
    [ -x "$dest" ] && exit 0
    echo "building $name from the Go module proxy (once, into ${dest%/*})" >&2
    work=$(mktemp -d "${dest%/*}/.build-XXXXXX") || exit 1
    trap 'rm -rf "$work"' EXIT
    printf 'module fluxopctl.test/program\n\ngo 1.24.0\n\nrequire %s %s\n' "$module" "$version" >"$work/go.mod"
    printf '%s\n' "$main_go" >"$work/main.go"
    cd "$work" &&
      GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0 timeout 1800 nice -n 10 "$go" mod tidy &&
      GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0 timeout 1800 nice -n 10 \
        "$go" build -trimpath -ldflags='-s -w' -o "$work/program" . &&
      mv "$work/program" "$dest"
  ) || { echo "building $name failed" >&2; return 1; }
}
