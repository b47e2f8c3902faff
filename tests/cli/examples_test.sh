#!/usr/bin/env bash
# Every example a command's help shows, and every fluxopctl line the README
# shows, runs as written: each command has examples; no line is a usage error
# (exit 2: an unknown command or flag, a bad value); the lines that need no
# cluster nor registry (kustomize, completion, help, version --client, build
# and images from a distribution directory) succeed. The lines that need a
# cluster or a registry meet none (no kubeconfig; registries that do not
# resolve): what they do is the e2e and registry suites' to test.
#
#   examples_test.sh BIN ROOT
set -uo pipefail
bin=$1
root=$2
distribution=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
work=$(mktemp -d)
on_exit cleanup
cleanup() { rm -rf "$work"; }
[ -d "$distribution/flux" ] || skip_test "no Flux distribution at $distribution"

# Where the lines run: fluxopctl on PATH, the files they name.
mkdir -p "$work/bin" "$work/run/overlay" "$work/run/flux-distribution"
ln -s "$(realpath "$bin")" "$work/bin/fluxopctl"
cp "$root/examples/flux.yaml" "$work/run/instance.yaml"
printf 'resources: [config.yaml]\n' >"$work/run/overlay/kustomization.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: example\n' >"$work/run/overlay/config.yaml"
# Contexts the lines name, each an API server that refuses the connection.
{
  printf 'apiVersion: v1\nkind: Config\ncurrent-context: default\nclusters:\n'
  printf -- '- name: refused\n  cluster:\n    server: https://127.0.0.1:1\n'
  printf 'users:\n- name: nobody\n  user:\n    token: example\ncontexts:\n'
  for context in default prod-eu staging-eu staging-us; do
    printf -- '- name: %s\n  context:\n    cluster: refused\n    user: nobody\n' "$context"
  done
} >"$work/kubeconfig"

# The help's examples: "  fluxopctl ..." lines after "Examples:" (comments
# and the global flags' note left out), of every command --help lists.
commands=$("$bin" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
[ -n "$commands" ] || abort "fluxopctl --help lists no command"
help_lines=$work/help.lines
: >"$help_lines"
for command in $commands; do
  [ "$command" = help ] && continue
  examples=$("$bin" "$command" --help | awk '/^Examples:/ {on = 1; next} on && /^$/ {exit} on && !/^  #/')
  if [ -z "$examples" ]; then
    fail "help-examples-$command" "fluxopctl $command --help shows no example"
    continue
  fi
  sed 's/^  //' <<<"$examples" >>"$help_lines"
done
pass "help-examples-of-each-command"

# The README's lines: in its code blocks (indented, or fenced), a command
# that runs fluxopctl, its continuation lines joined, a `$ ` prompt and a
# closing comment dropped.
readme_lines=$work/readme.lines
python3 - "$root/README.md" >"$readme_lines" <<'PY'
import re
import sys

fenced = False
joined = ""
for raw in open(sys.argv[1], encoding="utf-8"):
    line = raw.rstrip("\n")
    if line.startswith("```"):
        fenced = not fenced
        continue
    if not (fenced or line.startswith("    ")):
        continue
    line = line.strip()
    if line.endswith("\\"):
        joined += line[:-1] + " "
        continue
    line, joined = joined + line, ""
    line = re.sub(r"^\$ ", "", line)
    line = re.sub(r"\s{2,}#.*$", "", line)
    if re.search(r"(^|\| |&& |<\()fluxopctl ", line):
        print(line)
PY
[ -s "$readme_lines" ] || abort "no fluxopctl line found in README.md"

# run_line LINE: a usage error fails (exit 2; diff's 2 is any error, its
# usage errors name the flag or say "unknown"); the offline lines must succeed.
run_line() {
  local line=$1 status limit=120
  # A daemon (apply --watch) runs until stopped: still running after 10 s,
  # it has taken its flags.
  [[ "$line" != *--watch* ]] || limit=10
  (cd "$work/run" && PATH=$work/bin:$PATH KUBECONFIG=$work/kubeconfig \
    FLUXOPCTL_DISTRIBUTION=$distribution GITHUB_TOKEN=example-token TOKEN=example-token \
    timeout "$limit" bash -c "$line" </dev/null >"$work/out" 2>"$work/err")
  status=$?
  show "$work/err"
  if [ "$status" -eq 124 ]; then
    [ "$limit" -eq 10 ] && return 0
    echo "ran over $limit s"
    return 1
  fi
  # fluxopctl's subcommand: the first word after "fluxopctl" in the line.
  local command
  command=$(grep -oE 'fluxopctl [a-z]+( --client)?' <<<"$line" | head -n 1 | cut -d' ' -f2-)
  if [ "$status" -eq 2 ] && { [ "$command" != diff ] || grep -qE '^error: (unknown|-)' "$work/err"; }; then
    echo "a usage error (exit 2): $(grep -m 1 '^error:' "$work/err")"
    return 1
  fi
  case $command in
    kustomize | completion | help | "version --client" | build* | images*)
      if [[ "$line" != *oci://* ]] && [ "$status" -ne 0 ]; then
        echo "exit $status, where it needs no cluster nor registry: $(head -n 1 "$work/err")"
        return 1
      fi
      ;;
  esac
}

count=0
while IFS= read -r line; do
  count=$((count + 1))
  check "help: $line" run_line "$line"
done <"$help_lines"
while IFS= read -r line; do
  count=$((count + 1))
  check "README: $line" run_line "$line"
done <"$readme_lines"
echo "$count lines ($(wc -l <"$help_lines") of the helps, $(wc -l <"$readme_lines") of the README)"
summary
