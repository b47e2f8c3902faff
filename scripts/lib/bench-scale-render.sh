# Sourced by scripts/bench: the render half of the scale mode. Doubling
# series on generated inputs (scripts/lib/scale-inputs.py): the time at N, 2N
# and 4N and the ratio per doubling (about 2 for linear work, 4 for
# quadratic), for `fluxopctl kustomize` of a kustomization of N objects,
# `fluxopctl build` of a FluxInstance with N shards, and `fluxopctl
# kustomize` of a diamond of bases D levels deep (each level doubles the
# output); `kubectl kustomize` (the oracle) beside it on the same
# kustomizations, after a check that both print the same bytes. kubectl
# resolves each name reference among all objects and builds each path to a
# base again: it gets a deadline ($bench_scale_kubectl_deadline s; a larger
# input is not tried once it passes it) and shallower diamonds. Then 100,000 shards
# once: that it answers, and in what time. Uses $fluxopctl, $distribution,
# $root, $work and $runs from scripts/bench.

bench_scale_objects=(5000 10000 20000)
bench_scale_shards=(500 1000 2000)
bench_scale_depths=(8 9 10)
bench_scale_kubectl_depths=(6 7 8)
bench_scale_many_shards=100000
bench_scale_kubectl_deadline=60
bench_scale_inputs=$root/scripts/lib/scale-inputs.py

# The median wall time of "$@" in seconds over ${runs:-3} runs (hyperfine);
# "> Ns" when the first run passes $bench_scale_kubectl_deadline.
bench_scale_time() {
  local json=$work/time.json
  timeout "$bench_scale_kubectl_deadline" "$@" >/dev/null 2>&1 || {
    [ $? = 124 ] && { echo "> ${bench_scale_kubectl_deadline}s"; return; }
    die "failed: $*"
  }
  hyperfine -N --runs "${runs:-3}" --style none --export-json "$json" "$*" >/dev/null
  python3 -c 'import json, sys
median = json.load(open(sys.argv[1]))["results"][0]["median"]
print(f"{median:.3f}s")' "$json"
}

# One table row per size: "| label N | time | ratio to the previous |" for
# each command template (NAME is replaced by the input's path).
bench_scale_series() {
  local label=$1 kind=$2 sizes=$3
  shift 3
  local templates=("$@") size input previous=() i
  for size in $sizes; do
    input=$work/$kind-$size
    [ "$kind" = shards ] && input+=.yaml
    python3 "$bench_scale_inputs" "$kind" "$size" "$input"
    local row="| $label $size |"
    for i in "${!templates[@]}"; do
      local seconds
      # Past the deadline once, past it on a larger input too.
      if [[ ${previous[$i]:-} == ">"* ]]; then
        row+=" ${previous[$i]} | |"
        continue
      fi
      seconds=$(bench_scale_time ${templates[$i]//INPUT/$input})
      row+=" $seconds | $(bench_scale_ratio "${previous[$i]:-}" "$seconds") |"
      previous[i]=$seconds
    done
    echo "$row"
  done
}

# "x2.1": the second time over the first, when both were measured.
bench_scale_ratio() {
  python3 -c 'import sys
a, b = (s.rstrip("s") for s in sys.argv[1:])
print(f"x{float(b) / float(a):.2f}" if a and not a.startswith(">") and not b.startswith(">") else "")' "$1" "$2"
}

# Fails unless both tools print the same bytes for the kustomization in DIR.
bench_scale_same() {
  "$fluxopctl" kustomize "$1" >"$work/fluxopctl.yaml" || die "fluxopctl kustomize $1 failed"
  timeout "$bench_scale_kubectl_deadline" kubectl kustomize "$1" >"$work/kubectl.yaml" ||
    die "kubectl kustomize $1 failed"
  cmp -s "$work/fluxopctl.yaml" "$work/kubectl.yaml" || die "outputs differ for $1; not timing"
}

bench_scale_render() {
  need_package /usr/bin/time time
  print_machine
  echo "inputs:   python3 scripts/lib/scale-inputs.py objects|shards|diamond N DIR; hyperfine -N, median of ${runs:-3} runs"
  echo "build:    $fluxopctl build FILE --distribution-artifact $distribution"
  echo

  python3 "$bench_scale_inputs" objects 700 "$work/check-objects"
  bench_scale_same "$work/check-objects"
  python3 "$bench_scale_inputs" diamond 6 "$work/check-diamond"
  bench_scale_same "$work/check-diamond"
  echo "outputs:  fluxopctl kustomize = kubectl kustomize on 700 objects and a diamond 6 levels deep"
  echo

  echo "| input | fluxopctl kustomize | ratio | kubectl kustomize | ratio |"
  echo "| --- | --- | --- | --- | --- |"
  bench_scale_series objects objects "${bench_scale_objects[*]}" \
    "$fluxopctl kustomize INPUT" "kubectl kustomize INPUT"
  bench_scale_series "diamond depth" diamond "${bench_scale_kubectl_depths[*]}" \
    "$fluxopctl kustomize INPUT" "kubectl kustomize INPUT"
  echo
  echo "| input | fluxopctl | ratio |"
  echo "| --- | --- | --- |"
  bench_scale_series "diamond depth" diamond "${bench_scale_depths[*]}" "$fluxopctl kustomize INPUT"
  bench_scale_series shards shards "${bench_scale_shards[*]}" \
    "$fluxopctl build INPUT --distribution-artifact $distribution"

  local many=$work/shards-$bench_scale_many_shards.yaml
  python3 "$bench_scale_inputs" shards "$bench_scale_many_shards" "$many"
  echo
  echo "$bench_scale_many_shards shards ($(wc -c <"$many") bytes), one run:"
  /usr/bin/time -f "  %e s, peak RSS %M KiB" -o "$work/many.time" \
    timeout "$bench_scale_kubectl_deadline" "$fluxopctl" build "$many" \
    --distribution-artifact "$distribution" >/dev/null 2>"$work/many.err" || true
  cat "$work/many.time"
  echo "  answer: $(grep -v '^using distribution' "$work/many.err" | tail -n 1)"
}
