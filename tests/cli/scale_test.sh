#!/usr/bin/env bash
# The render's cost grows with the work and no faster (issue 30): inputs on
# which a quadratic stage took minutes (10,000 objects through kustomize,
# 3 min; 2,000 shards, 3 min; a diamond of bases 13 levels deep, whose
# 8,192 RoleBindings each chose their ServiceAccount among 8,192 copies by
# their prefixes, minutes) must render within a generous deadline,
# a few times what the linear render takes on a loaded 2-core machine. A
# deadline, not a timing: the test fails only when the cost returns to the
# square. Inputs from scripts/lib/scale-inputs.py; shards render from the
# small distribution under tests/cli/distribution.
set -uo pipefail
bin=$1
root=$2
dist=$root/tests/cli/distribution
inputs=$root/scripts/lib/scale-inputs.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
show "$work/err"
export HOME=$work/home XDG_CACHE_HOME=$work/cache
unset FLUXOPCTL_DISTRIBUTION

deadline=60

# within NAME -- command...: the command succeeds before the deadline; its
# output is in $work/out.
within() {
  local name=$1
  shift 2
  timeout "$deadline" "$@" >"$work/out" 2>"$work/err"
  case $? in
    0) pass "$name: within ${deadline}s" ;;
    124) fail "$name: no answer in ${deadline}s" ;;
    *) fail "$name: failed" ;;
  esac
}

# counts NAME PATTERN COUNT: the last output has COUNT lines matching PATTERN.
counts() {
  local got
  got=$(grep -c -- "$2" "$work/out")
  if [ "$got" = "$3" ]; then pass "$1"; else fail "$1" "$got lines match /$2/, want $3"; fi
}

python3 "$inputs" objects 10000 "$work/objects"
within "kustomize of 10,000 objects" -- "$bin" kustomize "$work/objects"
counts "kustomize of 10,000 objects: every object" '^kind: ' 9996
# Each Deployment's reference follows its ConfigMap's new name.
counts "kustomize of 10,000 objects: references fixed" 'name: big-app[0-9]*-config-x$' $((1428 * 3))

python3 "$inputs" shards 2000 "$work/shards.yaml"
within "build with 2,000 shards" -- "$bin" build "$work/shards.yaml" --distribution-artifact "$dist"
counts "build with 2,000 shards: a source-controller per shard" '^  name: source-controller-shard' 2000

python3 "$inputs" diamond 13 "$work/diamond"
within "kustomize of a diamond 13 levels deep" -- "$bin" kustomize "$work/diamond"
counts "kustomize of a diamond 13 levels deep: every copy" '^kind: RoleBinding' 8192
# Each copy's binding names the ServiceAccount of its own path, prefixes
# and all (the names of the ServiceAccounts, the bindings and their
# subjects): none is left at the bottom's name.
counts "kustomize of a diamond 13 levels deep: subjects fixed" '^  name: [lr]-.*reader$' $((8192 * 3))
counts "kustomize of a diamond 13 levels deep: no subject left unfixed" '^  name: reader$' 0

# .spec.commonMetadata is copied onto every object: the build's budget
# counts the copies (3,000 labels on 200 shards' objects peaked at 1.6 GB
# before), and refuses them before making any.
python3 "$inputs" labeled-shards 200 "$work/labeled-shards.yaml"
timeout "$deadline" /usr/bin/time -f %M -o "$work/rss" "$bin" build "$work/labeled-shards.yaml" \
  --distribution-artifact "$dist" >"$work/out" 2>"$work/err"
status=$?
if [ $status -eq 1 ] && [ ! -s "$work/out" ] &&
  grep -q '^error: .*labeled-shards.yaml: .spec.commonMetadata: the build makes more than' "$work/err"; then
  pass "build with 3,000 labels on 200 shards: refused within the build's budget"
else
  fail "build with 3,000 labels on 200 shards: refused within the build's budget" \
    "exit $status: $(head -c 300 "$work/err")"
fi
rss=$(tail -n 1 "$work/rss")
[ "${rss:-0}" -lt $((512 * 1024)) ] && pass "build with 3,000 labels on 200 shards: within 512 MiB" ||
  fail "build with 3,000 labels on 200 shards: within 512 MiB" "peak ${rss} KiB"

# -o json of objects with many labels each: as linear as the YAML (a map's
# keys were searched on every insertion, 76 s for what YAML printed in 2).
python3 "$inputs" labels 50000 "$work/labels.yaml"
within "build -o json with 50,000 labels on every object" -- \
  "$bin" build "$work/labels.yaml" --distribution-artifact "$dist" -o json
counts "build -o json with 50,000 labels on every object: each object has them" '"label-49999": "value-49999"' \
  "$("$bin" build "$work/labels.yaml" --distribution-artifact "$dist" | grep -c '^kind: ')"

summary
