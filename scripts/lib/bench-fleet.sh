# Sourced by scripts/bench: the fleet mode (issue 32). `fluxopctl diff` of
# the default instance over 1, 3 and 10 clusters in one command, against the
# sequential shell loop of one `fluxopctl diff --context C` per cluster, in
# one run. The clusters: a local control plane (scripts/cluster) and 9 more
# API servers on its etcd (scripts/cluster add-apiserver), each with the
# instance applied (--no-wait), so that each diff plans every object against
# a live one. Median wall time (hyperfine) and the peak RSS of the 10-cluster
# diff; checks the goals (10 clusters within 2x one; at most 40 MiB). Uses
# $fluxopctl, $distribution, $root, $work, $keep and $runs from scripts/bench.

bench_fleet_instance=tests/e2e/instances/flux-2.9-four.yaml
bench_fleet_size=10

# diff over the first N contexts of $bench_fleet_contexts, in one command.
bench_fleet_command() {
  local n=$1 args=() context
  for context in "${bench_fleet_contexts[@]:0:n}"; do args+=(--context "$context"); done
  echo "$fluxopctl diff $root/$bench_fleet_instance --distribution-artifact $distribution ${args[*]}"
}

# The same as a sequential loop, one fluxopctl per cluster.
bench_fleet_loop() {
  local n=$1
  echo "for c in ${bench_fleet_contexts[*]:0:n}; do $fluxopctl diff $root/$bench_fleet_instance --distribution-artifact $distribution --context \$c; done"
}

# Median seconds of hyperfine's JSON export FILE.
bench_fleet_median() { python3 -c "import json,sys; print(f\"{json.load(open(sys.argv[1]))['results'][0]['median']:.3f}\")" "$1"; }

# Peak RSS in MiB of the diff over the first N contexts.
bench_fleet_rss() {
  # shellcheck disable=SC2046 # the command's words
  /usr/bin/time -f %M -o "$work/rss" $(bench_fleet_command "$1") >/dev/null 2>&1 || true
  echo $(($(cat "$work/rss") / 1024))
}

# Mean CPU seconds (user + system) of hyperfine's JSON export FILE.
bench_fleet_cpu() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(f\"{r['user'] + r['system']:.3f}\")" "$1"; }

bench_fleet() {
  local i n up
  bench_fleet_cluster=$work/cluster
  trap 'set +e; FLUXOPCTL_CLUSTER_DIR=$bench_fleet_cluster "$root/scripts/cluster" down >/dev/null 2>&1; $keep || rm -rf "$work"' EXIT
  runs=${runs:-5}
  up=$(FLUXOPCTL_CLUSTER_DIR=$bench_fleet_cluster "$root/scripts/cluster" up 2>"$work/up.err") ||
    { tail -n 5 "$work/up.err" >&2; die "scripts/cluster up failed"; }
  eval "$up"
  local configs=$KUBECONFIG
  bench_fleet_contexts=(fluxopctl-e2e)
  for i in $(seq 2 "$bench_fleet_size"); do
    configs+=:$(FLUXOPCTL_CLUSTER_DIR=$bench_fleet_cluster "$root/scripts/cluster" add-apiserver "c$i" 2>>"$work/up.err") ||
      { tail -n 5 "$work/up.err" >&2; die "scripts/cluster add-apiserver c$i failed"; }
    bench_fleet_contexts+=("c$i")
  done
  export KUBECONFIG=$configs
  echo "diff of $bench_fleet_instance over 1, 3 and $bench_fleet_size clusters (one control plane and API servers on its etcd), $runs runs each"
  "$fluxopctl" apply "$root/$bench_fleet_instance" --distribution-artifact "$distribution" --all-contexts \
    --no-wait >"$work/apply.out" 2>"$work/apply.err" || { tail -n 20 "$work/apply.out" >&2; die "the fleet apply failed"; }
  # Once untimed (the parse cache warm): a diff exits 0 or 1 on every
  # cluster; 2 is a cluster that failed, and no time of it would mean anything.
  local status=0
  # shellcheck disable=SC2046 # the command's words
  $(bench_fleet_command "$bench_fleet_size") >"$work/diff.out" 2>"$work/diff.err" || status=$?
  [ "$status" -le 1 ] || { tail -n 20 "$work/diff.out" >&2; die "the diff over $bench_fleet_size clusters failed"; }

  local rows=() one=
  for n in 1 3 "$bench_fleet_size"; do
    hyperfine -N --runs "$runs" -i --export-json "$work/fleet-$n.json" "$(bench_fleet_command "$n")" >/dev/null 2>&1 ||
      die "hyperfine failed on $n clusters"
    local fleet_s loop_s=-
    fleet_s=$(bench_fleet_median "$work/fleet-$n.json")
    [ -n "$one" ] || one=$fleet_s
    if [ "$n" != 1 ]; then
      hyperfine --runs "$runs" -i --export-json "$work/loop-$n.json" "$(bench_fleet_loop "$n")" >/dev/null 2>&1 ||
        die "hyperfine failed on the loop of $n"
      loop_s=$(bench_fleet_median "$work/loop-$n.json")
    fi
    rows+=("| $n | $fleet_s s | $(python3 -c "print(f'{$fleet_s / $one:.2f}x')") | $(bench_fleet_cpu "$work/fleet-$n.json") s | $loop_s$([ "$loop_s" = - ] || echo " s") | $(bench_fleet_rss "$n") MiB |")
  done
  echo
  echo "| clusters | fluxopctl diff (median) | vs 1 cluster | its CPU (user + sys) | sequential loop (median) | peak RSS |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  local rss
  rss=$(bench_fleet_rss "$bench_fleet_size")
  local ten
  ten=$(bench_fleet_median "$work/fleet-$bench_fleet_size.json")
  python3 -c "import sys; sys.exit(0 if $ten <= 2 * $one else 1)" &&
    echo "goal met: $bench_fleet_size clusters within 2x one" ||
    echo "GOAL MISSED: $bench_fleet_size clusters take $ten s, one $one s (goal: at most 2x)"
  [ "$rss" -le 40 ] && echo "goal met: at most 40 MiB" || echo "GOAL MISSED: $rss MiB (goal: at most 40)"
}
