# Sourced by scripts/bench: the apply mode. `fluxopctl apply` of the default
# instance (Flux 2.9.x, the four default controllers) against `kubectl apply
# --server-side` of the same objects rendered by `fluxopctl build`, each on a
# new local control plane (scripts/cluster) per run, then again on the
# installed cluster once its Deployments have rolled out (nothing to change:
# a pipeline run again on a running installation). Wall time without rollout waits
# (--no-wait; kubectl does not wait) and the number of API requests (fluxopctl
# counts its own; kubectl's from its -v=6 request log). Uses $fluxopctl,
# $distribution, $root, $work, $keep and $runs from scripts/bench.

bench_apply_instance=tests/e2e/instances/flux-2.9-four.yaml

# Seconds, to the microsecond, that "$@" takes; its output goes to $work/last.
bench_apply_time() {
  local start end
  start=$(date +%s.%N)
  "$@" >"$work/last" 2>&1 || { tail -n 5 "$work/last" >&2; die "failed: $*"; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.3f}')"
}

bench_apply_fluxopctl() {
  "$fluxopctl" apply "$root/$bench_apply_instance" --distribution-artifact "$distribution" --no-wait
}

bench_apply_kubectl() {
  kubectl apply --server-side --force-conflicts --field-manager flux-operator -v=6 -f "$work/rendered.yaml"
}

# fluxopctl: "(N API requests)"; kubectl -v=6: one "Response" line per request.
bench_apply_requests() {
  case $1 in
    fluxopctl) sed -n 's/.*(\([0-9]*\) API requests).*/\1/p' "$work/last" | tail -n 1 ;;
    kubectl) grep -cE '"Response" verb=|(GET|PATCH|POST|PUT|DELETE) https://' "$work/last" ;;
  esac
}

bench_apply_median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# Issue 55: a no-change apply in at most 20 API requests, 8x kubectl's time.
bench_apply_goal_requests=20
bench_apply_goal_speedup=8

bench_apply() {
  local tool run cluster_dir install requests again
  local -A again_median again_requests_median
  # $work comes from scripts/bench; the cluster goes with it.
  trap 'set +e; FLUXOPCTL_CLUSTER_DIR=$work/cluster "$root/scripts/cluster" down >/dev/null 2>&1; $keep || rm -rf "$work"' EXIT
  "$fluxopctl" build "$root/$bench_apply_instance" --distribution-artifact "$distribution" \
    >"$work/rendered.yaml" 2>/dev/null || die "fluxopctl build failed"
  runs=${runs:-5}
  echo "apply of $bench_apply_instance ($(grep -c '^---$' "$work/rendered.yaml") objects), $runs runs per tool, a new cluster per run"
  for tool in fluxopctl kubectl; do
    local installs=() agains=() install_requests=() again_requests=()
    for run in $(seq "$runs"); do
      export FLUXOPCTL_CLUSTER_DIR=$work/cluster
      eval "$("$root/scripts/cluster" up 2>"$work/up.err")" || { cat "$work/up.err" >&2; die "cluster up failed"; }
      installs+=("$(bench_apply_time "bench_apply_$tool")")
      install_requests+=("$(bench_apply_requests "$tool")")
      kubectl -n flux-system rollout status deployment -l app.kubernetes.io/part-of=flux \
        --timeout=180s --request-timeout=30s >/dev/null || die "the installation did not roll out"
      agains+=("$(bench_apply_time "bench_apply_$tool")")
      again_requests+=("$(bench_apply_requests "$tool")")
      "$root/scripts/cluster" down >/dev/null 2>&1
    done
    printf '%-10s install: median %ss (runs: %s), %s requests | again: median %ss, %s requests\n' \
      "$tool" "$(bench_apply_median "${installs[@]}")" "${installs[*]}" "$(bench_apply_median "${install_requests[@]}")" \
      "$(bench_apply_median "${agains[@]}")" "$(bench_apply_median "${again_requests[@]}")"
    again_median[$tool]=$(bench_apply_median "${agains[@]}")
    again_requests_median[$tool]=$(bench_apply_median "${again_requests[@]}")
  done
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "${again_median[fluxopctl]}" "${again_median[kubectl]}" "${again_requests_median[fluxopctl]}" \
    "$bench_apply_goal_requests" "$bench_apply_goal_speedup" <<'PY'
import sys
fluxopctl, kubectl = float(sys.argv[1]), float(sys.argv[2])
requests, goal_requests, goal_speedup = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
speedup = kubectl / fluxopctl
misses = []
if requests > goal_requests:
    misses.append(f"{requests} requests > {goal_requests}")
if speedup < goal_speedup:
    misses.append(f"{speedup:.1f}x < {goal_speedup:g}x")
verdict = "PASS" if not misses else "MISS: " + "; ".join(misses)
print(f"goal (issue 55, a no-change apply: at most {goal_requests} API requests, >= {goal_speedup:g}x "
      f"kubectl apply --server-side): {verdict} ({requests} requests, {speedup:.1f}x)")
sys.exit(1 if misses else 0)
PY
}
