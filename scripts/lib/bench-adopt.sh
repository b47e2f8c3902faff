# Sourced by scripts/bench: the adopt mode (issue 53 point 12). `fluxopctl
# adopt DIR` of a bootstrap directory the real flux CLI writes (Flux's newest
# version, tests/adopt/lib.sh) with N JSON 6902 patches appended to its
# kustomization (labels on the four controllers), N doubling to 6,000 (a
# 1 MB kustomization), beside `fluxopctl kustomize DIR` of the same
# directory, in one hyperfine run per N. Median wall time and peak RSS;
# checks the goal (6,000 patches within 3 s). Uses $fluxopctl,
# $distribution, $root, $work and $runs from scripts/bench.

bench_adopt() {
  local version n dir size
  version=$(latest_flux_version)
  runs=${runs:-10}
  export FLUXOPCTL_TEST_CACHE=${FLUXOPCTL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluxopctl-test}
  # tests/adopt/lib.sh's bootstrap, with the flux CLI of that version.
  source "$root/tests/adopt/lib.sh"
  FLUX_DISTRIBUTION=$distribution flux_cli_ensure_built "$version" || die "the flux CLI $version could not be built"
  export XDG_CACHE_HOME=$work/cache
  echo "adopt of a flux $version bootstrap directory with N patches, beside kustomize of it; $runs runs each"
  echo
  echo "| patches | kustomization | adopt (median) | kustomize (median) | adopt / kustomize | adopt peak RSS |"
  echo "|---|---|---|---|---|---|"
  local goal=0
  for n in 100 400 1600 6000; do
    dir=$work/bootstrap-$n
    bootstrap "$dir" "$version" git >/dev/null || die "the bootstrap directory"
    append_label_patches "$dir" "$n"
    size=$(du -k "$dir/kustomization.yaml" | cut -f1)
    "$fluxopctl" adopt "$dir" --distribution-artifact "$distribution" >"$work/adopt.out" 2>"$work/adopt.err" ||
      die "adopt of $n patches: $(tail -n 1 "$work/adopt.err")"
    hyperfine -N --warmup 1 --runs "$runs" --export-json "$work/adopt-$n.json" \
      "$fluxopctl adopt $dir --distribution-artifact $distribution" \
      "$fluxopctl kustomize $dir" >/dev/null 2>&1 || die "hyperfine failed"
    local rss
    rss=$(peak_rss "$fluxopctl" adopt "$dir" --distribution-artifact "$distribution")
    python3 - "$work/adopt-$n.json" "$n" "$size" "$rss" <<'PY' || goal=1
import json, sys
results = json.load(open(sys.argv[1]))["results"]
n, size, rss = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
adopt, kustomize = results[0]["median"], results[1]["median"]
print(f"| {n:,} | {size:,} KB | {adopt * 1000:.0f} ms | {kustomize * 1000:.0f} ms | {adopt / kustomize:.1f}x | {int(rss) / 1024:.1f} MiB |")
sys.exit(0 if n < 6000 or adopt <= 3 else 1)
PY
  done
  echo
  [ "$goal" = 0 ] && echo "goal met: 6,000 patches adopted within 3 s" ||
    echo "GOAL MISSED: 6,000 patches took more than 3 s"
  return "$goal"
}
