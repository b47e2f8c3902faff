#!/usr/bin/env bash
# Every local file fluxopctl reads goes through the bounded reader, and every
# file it writes through the exclusive writer, both in src/core/file.cpp
# (docs/architecture.md): a read or a write another way (an ifstream, fopen,
# open(2) of a file, a temporary made by mkstemp, a copy by the standard
# library) anywhere else in src/ fails this test, naming the line.
#
#   tests/cli/local_files_test.sh ROOT
#
# A directory opened for a lock or for openat (O_DIRECTORY) reads no file's
# content and is allowed.
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 ROOT" >&2
  exit 2
fi
root=$(cd "$1" && pwd) || exit 2
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"

# What opens, reads or writes a file's content without core/file.h.
forbidden='std::[io]?fstream|\bfopen\(|\bfreopen\(|\bfdopen\(|\bO_(RDONLY|WRONLY|RDWR|CREAT)\b|\bmk[os]?temp|\bmkdtemp\(|\bcreat\(|copy_file\(|fs::copy\(|std::filesystem::copy\(|\bmmap\(|\bpread\(|\btruncate\('

# found_elsewhere TREE: the lines of TREE/src that do.
found_elsewhere() {
  (cd "$1" && grep -rnE "$forbidden" src --include='*.cpp' --include='*.h') |
    grep -v '^src/core/file\.cpp:' | grep -v 'O_DIRECTORY'
}

only_through_file_h() {
  local lines
  lines=$(found_elsewhere "$root")
  [ -z "$lines" ] || { echo "files read or written outside src/core/file.cpp:"; echo "$lines"; return 1; }
}
check "src/: every file is read through the bounded reader and written through the exclusive writer" \
  only_through_file_h

# The check itself finds what it must: a planted read is reported.
finds_a_planted_read() {
  local tree lines
  tree=$(mktemp -d "${TMPDIR:-/tmp}/fluxopctl-local-files.XXXXXX") || return 1
  mkdir -p "$tree/src/core/oci"
  printf 'std::ifstream in("x");\n' >"$tree/src/core/oci/planted.cpp"
  printf 'int fd = ::open(p, O_RDONLY | O_CLOEXEC);\n' >"$tree/src/core/oci/planted.h"
  printf 'int fd = ::open(p, O_RDONLY);\n' >"$tree/src/core/file.cpp"
  lines=$(found_elsewhere "$tree")
  rm -rf "$tree"
  [ "$(echo "$lines" | grep -c 'src/core/oci/planted\.\(cpp\|h\):1:')" -eq 2 ] ||
    { echo "a planted read was not found: $lines"; return 1; }
  ! echo "$lines" | grep -q 'src/core/file.cpp' || { echo "file.cpp itself was reported"; return 1; }
}
check "the check finds a read planted in src/" finds_a_planted_read

summary
