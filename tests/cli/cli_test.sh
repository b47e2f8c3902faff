#!/usr/bin/env bash
# The CLI contract scripts rely on: help on every command, output on stdout
# only, one error line on stderr, exit codes 0 (ok), 1 (error), 2 (usage).
set -uo pipefail
bin=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

check() {  # check NAME EXPECTED_EXIT [STDOUT_MUST_BE_EMPTY] -- command...
  local name=$1 want=$2 quiet=$3
  shift 4
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  local ok=1
  [ "$got" -eq "$want" ] || ok=0
  if [ "$quiet" = quiet ]; then
    [ ! -s "$work/out" ] || ok=0
    [ "$(wc -l <"$work/err")" -eq 1 ] || ok=0
  fi
  if [ $ok -eq 1 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $got (want $want)"
    sed 's/^/  stdout: /' "$work/out" | head -5
    sed 's/^/  stderr: /' "$work/err" | head -5
  fi
}

check "--help" 0 - -- "$bin" --help
check "kustomize --help" 0 - -- "$bin" kustomize --help
check "version --help" 0 - -- "$bin" version --help
check "version" 0 - -- "$bin" version
grep -q "^fluxopctl [0-9]" "$work/out" || { failed=$((failed + 1)); echo "FAIL version output"; }
check "--version" 0 - -- "$bin" --version
check "no subcommand" 2 - -- "$bin"
check "unknown flag" 2 - -- "$bin" kustomize --bogus
check "bad -o" 2 - -- "$bin" kustomize -o xml "$fixtures/01-resources-files"
check "missing dir" 1 quiet -- "$bin" kustomize "$work/nope"
grep -q "^error: $work/nope: not a directory$" "$work/err" || { failed=$((failed + 1)); echo "FAIL missing dir message"; }

mkdir -p "$work/k"
printf 'resources:\n- cm.yaml\nconfigMapGenerator: []\n' >"$work/k/kustomization.yaml"
check "refused field" 1 quiet -- "$bin" kustomize "$work/k"
grep -q "kustomization.yaml: configMapGenerator: generators are not supported" "$work/err" ||
  { failed=$((failed + 1)); echo "FAIL refused field message"; }

printf 'resources:\n- cm.yaml\n' >"$work/k/kustomization.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: [\n' >"$work/k/cm.yaml"
check "malformed yaml" 1 quiet -- "$bin" kustomize "$work/k"
grep -q "cm.yaml:7:1: " "$work/err" || { failed=$((failed + 1)); echo "FAIL yaml error position"; }

check "kustomize yaml" 0 - -- "$bin" kustomize "$fixtures/01-resources-files"
check "kustomize json" 0 - -- "$bin" kustomize -o json "$fixtures/01-resources-files"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kind"]=="List" and d["items"]' \
  "$work/out" || { failed=$((failed + 1)); echo "FAIL json output"; }
(cd "$fixtures/01-resources-files" && "$bin" kustomize >"$work/cwd.yaml") &&
  "$bin" kustomize "$fixtures/01-resources-files" | cmp -s - "$work/cwd.yaml" ||
  { failed=$((failed + 1)); echo "FAIL default dir"; }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
