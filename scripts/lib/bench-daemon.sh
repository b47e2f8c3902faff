# Sourced by scripts/bench: the daemon mode. On one local control plane
# (scripts/cluster), in this order:
#   soak: `fluxopctl apply --watch` of the default instance with
#     reconcileEvery 1s, until it has reconciled $runs times (default 300):
#     its resident memory (VmRSS) after 10, 100 and every 100 reconciles
#     after, and the API requests of a no-change periodic reconcile (the
#     daemon logs them);
#   idle: the daemon again with the default interval (1h): once it has
#     reconciled, its CPU time over 60 s of idling and its resident memory;
#   the upstream Flux Operator (v0.58.1, built by scripts/lib/upstream-
#     operator.sh, run out of cluster as tests/handoff runs it) on the same
#     installation, the same way: once it has reconciled, its CPU time over
#     60 s and its resident memory.
# Uses $fluxopctl, $distribution, $root, $work, $keep and $runs from
# scripts/bench.

bench_daemon_instance=tests/e2e/instances/flux-2.9-four.yaml

# VmRSS of PID in MiB, one decimal.
bench_daemon_rss() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# utime + stime of PID, in seconds.
bench_daemon_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat"
}
# The daemon's reconciles so far (its /metrics).
bench_daemon_reconciles() {
  curl -sf --max-time 10 "http://127.0.0.1:$1/metrics" |
    awk '/^controller_runtime_reconcile_total\{controller="fluxinstance"/ { n += $2 } END { print n + 0 }'
}
bench_daemon_at_least() { [ "$(bench_daemon_reconciles "$1")" -ge "$2" ]; }

# Starts fluxopctl apply --watch FILE in the background: its pid in
# bench_daemon_pid, its metrics port in bench_daemon_port, its log in $work/$1.log.
bench_daemon_start() {
  local name=$1 file=$2
  bench_daemon_port=$(registry_free_port)
  "$fluxopctl" apply --watch "$file" --distribution-artifact "$distribution" --no-wait \
    --metrics-addr "127.0.0.1:$bench_daemon_port" >/dev/null 2>"$work/$name.log" &
  bench_daemon_pid=$!
}

bench_daemon() {
  trap 'set +e; [ -z "${bench_daemon_pid:-}" ] || kill -9 "$bench_daemon_pid" 2>/dev/null;
    [ -z "${bench_operator_pid:-}" ] || kill -9 "$bench_operator_pid" 2>/dev/null;
    FLUXOPCTL_CLUSTER_DIR=$work/cluster "$root/scripts/cluster" down >/dev/null 2>&1; $keep || rm -rf "$work"' EXIT
  runs=${runs:-300}
  export FLUXOPCTL_CLUSTER_DIR=$work/cluster
  eval "$("$root/scripts/cluster" up 2>"$work/up.err")" || { cat "$work/up.err" >&2; die "cluster up failed"; }
  kubectl create namespace flux-system >/dev/null

  # soak
  sed 's/^  name: flux$/  name: flux\n  annotations:\n    fluxcd.controlplane.io\/reconcileEvery: "1s"/' \
    "$root/$bench_daemon_instance" >"$work/soak.yaml"
  bench_daemon_start soak "$work/soak.yaml"
  local soak_pid=$bench_daemon_pid port=$bench_daemon_port at rss=()
  for at in 10 $(seq 100 100 "$runs"); do
    [ "$at" -le "$runs" ] || continue
    wait_until 1800 bench_daemon_at_least "$port" "$at" || die "the daemon did not reconcile $at times"
    rss+=("$at: $(bench_daemon_rss "$soak_pid") MiB")
  done
  local requests
  requests=$(sed -n 's/.*Reconciliation finished.*requests=\([0-9]*\).*/\1/p' "$work/soak.log" | tail -n 20 | sort -n | uniq -c | sort -rn | head -n 1 | awk '{ print $2 }')
  stop_process "$soak_pid"
  bench_daemon_pid=
  echo "soak: $runs reconciles every 1s of $bench_daemon_instance; resident memory after $(IFS=,; echo "${rss[*]}" | sed 's/,/, /g')"
  echo "soak: a no-change periodic reconcile takes $requests API requests (the most frequent of the last 20)"

  # idle: fluxopctl
  bench_daemon_start idle "$root/$bench_daemon_instance"
  wait_until 300 bench_daemon_at_least "$bench_daemon_port" 1 || die "the idle daemon did not reconcile"
  local cpu0 cpu1
  cpu0=$(bench_daemon_cpu "$bench_daemon_pid")
  sleep 60 # the measured idle minute itself
  cpu1=$(bench_daemon_cpu "$bench_daemon_pid")
  printf 'idle: fluxopctl apply --watch   %.2f CPU-s per idle minute, %s MiB resident\n' \
    "$(echo "$cpu1 - $cpu0" | bc)" "$(bench_daemon_rss "$bench_daemon_pid")"
  stop_process "$bench_daemon_pid"
  bench_daemon_pid=

  # idle: the upstream operator, on the same installation
  source "$root/scripts/lib/upstream-operator.sh"
  upstream_operator_ensure_built || die "the upstream operator could not be built"
  kubectl apply --server-side --force-conflicts -f "$upstream_operator_crds" >/dev/null || die "the upstream CRDs"
  local before
  before=$(kubectl -n flux-system get fluxinstance flux -o jsonpath='{.status.history[0].totalReconciliations}')
  GODEBUG=fips140=on RUNTIME_NAMESPACE=flux-system "$upstream_operator" --storage-path="$distribution" \
    --enable-leader-election=false --metrics-addr=0 --health-addr=0 --web-server-port=0 \
    --log-encoding=console >"$work/operator.log" 2>&1 &
  bench_operator_pid=$!
  bench_operator_reconciled() {
    [ "$(kubectl -n flux-system get fluxinstance flux -o jsonpath='{.status.history[0].totalReconciliations}')" -gt "$before" ]
  }
  wait_until 300 bench_operator_reconciled || die "the upstream operator did not reconcile"
  sleep 5 # its reconcile's tail (events, the report) settles
  cpu0=$(bench_daemon_cpu "$bench_operator_pid")
  sleep 60 # the measured idle minute itself
  cpu1=$(bench_daemon_cpu "$bench_operator_pid")
  printf 'idle: flux-operator v0.58.1     %.2f CPU-s per idle minute, %s MiB resident\n' \
    "$(echo "$cpu1 - $cpu0" | bc)" "$(bench_daemon_rss "$bench_operator_pid")"
  stop_process "$bench_operator_pid"
  bench_operator_pid=
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
}
