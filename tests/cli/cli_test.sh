#!/usr/bin/env bash
# The CLI contract scripts rely on: help on every command, output on stdout
# only, one error line on stderr, exit codes 0 (ok), 1 (error), 2 (usage).
set -uo pipefail
bin=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# No cache of the machine's: the parse cache is the test's own.
export XDG_CACHE_HOME=$work/cache

fail() {
  failed=$((failed + 1))
  echo "FAIL $*"
  sed 's/^/  stdout: /' "$work/out" | head -5
  sed 's/^/  stderr: /' "$work/err" | head -5
}

# stream_holds FILE WANT: WANT is "empty", or an extended regex a line matches.
stream_holds() {
  if [ "$2" = empty ]; then [ ! -s "$1" ]; else grep -qE -- "$2" "$1"; fi
}
shown() { if [ "$1" = empty ]; then echo empty; else echo "/$1/"; fi; }

# check NAME EXIT STDOUT STDERR -- COMMAND...: the exit status and what each
# stream holds (see stream_holds). An error (exit 1) is one stderr line.
check() {
  local name=$1 want=$2 out=$3 err=$4
  shift 5
  timeout 60 "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit $got (want $want)"
  elif ! stream_holds "$work/out" "$out"; then
    fail "$name: stdout is not $(shown "$out")"
  elif ! stream_holds "$work/err" "$err"; then
    fail "$name: stderr is not $(shown "$err")"
  elif [ "$want" -eq 1 ] && [ "$(wc -l <"$work/err")" -ne 1 ]; then
    fail "$name: an error is one line on stderr"
  else
    passed=$((passed + 1))
    echo "ok $name"
  fi
}

check "--help" 0 '^Subcommands:' empty -- "$bin" --help
check "kustomize --help" 0 '^Usage: .*kustomize' empty -- "$bin" kustomize --help
check "version --help" 0 '^Usage: .*version' empty -- "$bin" version --help
check "version" 0 '^fluxopctl [0-9]+\.[0-9]+\.[0-9]+' empty -- "$bin" version
check "--version" 0 '^fluxopctl [0-9]+\.[0-9]+\.[0-9]+' empty -- "$bin" --version
# Usage errors: CLI11's words on stderr, naming what is wrong; nothing on stdout.
check "no subcommand" 2 empty 'subcommand' -- "$bin"
check "unknown flag" 2 empty '--bogus' -- "$bin" kustomize --bogus
check "bad -o" 2 empty '--output: xml not in \{yaml,json\}' -- "$bin" kustomize -o xml "$fixtures/01-resources-files"
check "apply --timeout abc" 2 empty "--timeout: 'abc' is not a duration such as 5m or 90s" -- \
  "$bin" apply --timeout abc "$work/none.yaml"
check "apply --lock-timeout xyz" 2 empty "--lock-timeout: 'xyz' is not a duration" -- \
  "$bin" apply --lock-timeout xyz "$work/none.yaml"
check "missing dir" 1 empty "^error: $work/nope: not a directory\$" -- "$bin" kustomize "$work/nope"

mkdir -p "$work/k"
printf 'resources:\n- cm.yaml\nconfigMapGenerator: []\n' >"$work/k/kustomization.yaml"
check "refused field" 1 empty \
  "^error: $work/k/kustomization.yaml: configMapGenerator: generators are not supported" \
  -- "$bin" kustomize "$work/k"

printf 'resources:\n- cm.yaml\n' >"$work/k/kustomization.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: [\n' >"$work/k/cm.yaml"
check "malformed yaml" 1 empty "^error: $work/k/cm.yaml:7:1: " -- "$bin" kustomize "$work/k"

# The fixture's three objects, in kustomize's order, and nothing on stderr.
check "kustomize yaml" 0 '^kind: ' empty -- "$bin" kustomize "$fixtures/01-resources-files"
kinds=$(grep '^kind: ' "$work/out" | tr '\n' ' ')
[ "$kinds" = "kind: ConfigMap kind: Service kind: Deployment " ] || fail "kustomize yaml: kinds are '$kinds'"
[ "$(grep -c '^---$' "$work/out")" -eq 2 ] || fail "kustomize yaml: not three documents"
check "kustomize json" 0 '"kind": "List"' empty -- "$bin" kustomize -o json "$fixtures/01-resources-files"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kind"]=="List"
assert [i["kind"] for i in d["items"]] == ["ConfigMap", "Service", "Deployment"]' \
  "$work/out" || fail "kustomize json: not a List of the three objects"
(cd "$fixtures/01-resources-files" && timeout 60 "$bin" kustomize >"$work/cwd.yaml") &&
  timeout 60 "$bin" kustomize "$fixtures/01-resources-files" | cmp -s - "$work/cwd.yaml" ||
  fail "default dir: kustomize without DIR differs from kustomize ."

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
