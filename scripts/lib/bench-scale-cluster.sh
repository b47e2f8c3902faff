# Sourced by scripts/bench: the cluster half of the scale mode (`scripts/bench
# scale cluster`), by hand, not in CI. On one local control plane
# (scripts/cluster) with the default instance applied (Flux 2.9.x, four
# controllers), for N = 1,000 then N = 10,000 Flux custom resources (the
# scale fixture, scripts/lib/scale-fixture.py: Kustomizations, HelmReleases,
# GitRepositories, OCIRepositories, a fifth failing, in 100 namespaces):
#   report: `fluxopctl report` (wall time, peak RSS) against the upstream
#     Flux Operator v0.58.1 (run out of cluster, as tests/handoff runs it)
#     computing its FluxReport ("Reporting finished in", the RSS it grew to);
#   migration: a forced migration of every custom resource to its storage
#     version (`fluxopctl apply` with reconcile.fluxcd.io/forceAt, nothing
#     else to change) against the operator's reconcile of the same request:
#     wall time, API requests (fluxopctl's own count; the API server's
#     apiserver_request_total for the operator's window, the control plane's
#     own few included) and peak RSS;
#   daemon: `fluxopctl apply --watch` (the report written after the
#     reconcile): resident memory once the report is written, and after 30 s
#     idle;
# and, at 10,000 only, `fluxopctl delete` removing the finalizers of every
# custom resource (the fixture gives each one) before the uninstall.
# Uses $fluxopctl, $distribution, $root, $work and $keep from scripts/bench.

bench_scale_instance=tests/e2e/instances/flux-2.9-four.yaml
bench_scale_sizes=${FLUXOPCTL_SCALE_SIZES:-1000 10000}

# VmRSS and VmHWM of PID, in MiB.
bench_scale_rss() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
bench_scale_hwm() { awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# The sum of the API server's request counters.
bench_scale_server_requests() {
  kubectl get --raw /metrics | awk '/^apiserver_request_total\{/ { n += $NF } END { printf "%d", n }'
}
# Runs COMMAND under /usr/bin/time: sets bench_scale_wall (s) and
# bench_scale_peak (MiB); its stderr in $work/last.
bench_scale_timed() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/last.out" 2>"$work/last" ||
    { tail -n 5 "$work/last" >&2; die "failed: $*"; }
  read -r bench_scale_wall bench_scale_peak <"$work/time"
  bench_scale_peak=$(awk -v k="$bench_scale_peak" 'BEGIN { printf "%.1f", k / 1024 }')
}
bench_scale_requests() { sed -n 's/.*(\([0-9]*\) API requests).*/\1/p' "$work/last" | tail -n 1; }

bench_scale_operator_start() {
  GODEBUG=fips140=on RUNTIME_NAMESPACE=flux-system "$upstream_operator" --storage-path="$distribution" \
    --enable-leader-election=false --metrics-addr=0 --health-addr=0 --web-server-port=0 \
    --log-encoding=console --log-level=debug >>"$work/operator.log" 2>&1 &
  bench_operator_pid=$!
}
bench_scale_operator_stop() {
  stop_process "$bench_operator_pid"
  bench_operator_pid=
}
# The operator's reports so far: its debug log says "Reporting finished in
# <duration>" at the end of each (the FluxReport's message may be the last
# one's while the next runs).
bench_scale_reports() { grep -c 'Reporting finished in' "$work/operator.log" || true; }
bench_scale_reported() { [ "$(bench_scale_reports)" -gt "$1" ]; }
bench_scale_last_report() { grep -o 'Reporting finished in [0-9.a-zµ]*' "$work/operator.log" | tail -n 1; }
bench_scale_forced() {
  [ "$(kubectl -n flux-system get fluxinstance flux -o jsonpath='{.status.lastHandledForceAt}')" = "$1" ]
}
# The daemon's metrics export a flux_resource_info per resource once its
# report is computed: at least $2 of them on port $1.
bench_scale_daemon_reported() {
  [ "$(curl -sf --max-time 10 "http://127.0.0.1:$1/metrics" | grep -c '^flux_resource_info{')" -ge "$2" ]
}

bench_scale_cluster() {
  trap 'set +e; [ -z "${bench_daemon_pid:-}" ] || kill -9 "$bench_daemon_pid" 2>/dev/null;
    [ -z "${bench_operator_pid:-}" ] || kill -9 "$bench_operator_pid" 2>/dev/null;
    FLUXOPCTL_CLUSTER_DIR=$work/cluster "$root/scripts/cluster" down >/dev/null 2>&1; $keep || rm -rf "$work"' EXIT
  : >"$work/operator.log"
  source "$root/scripts/lib/upstream-operator.sh"
  upstream_operator_ensure_built || die "the upstream operator could not be built"
  export FLUXOPCTL_CLUSTER_DIR=$work/cluster
  eval "$("$root/scripts/cluster" up 2>"$work/up.err")" || { cat "$work/up.err" >&2; die "cluster up failed"; }
  "$fluxopctl" apply "$root/$bench_scale_instance" --distribution-artifact "$distribution" \
    >/dev/null 2>"$work/install.log" || { tail -n 5 "$work/install.log" >&2; die "install failed"; }
  # The operator's FluxReport CRD (fluxopctl's apply installs only the
  # FluxInstance's).
  kubectl apply --server-side --force-conflicts -f "$upstream_operator_crds" >/dev/null || die "the upstream CRDs"
  echo "cluster: $(kubectl version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])'), $bench_scale_instance"

  local n token before after
  for n in $bench_scale_sizes; do
    python3 "$root/scripts/lib/scale-fixture.py" "$KUBECONFIG" "$n" 2>"$work/fixture.log" ||
      { cat "$work/fixture.log" >&2; die "the scale fixture failed"; }
    echo "N=$n: $(cat "$work/fixture.log")"

    # report
    bench_scale_timed "$fluxopctl" report
    printf 'N=%s report:    fluxopctl report          %6.2f s  peak RSS %6.1f MiB\n' \
      "$n" "$bench_scale_wall" "$bench_scale_peak"
    # The operator's first report (at its start), then one asked for.
    local reports first
    reports=$(bench_scale_reports)
    bench_scale_operator_start
    wait_until 900 bench_scale_reported "$reports" || die "the operator did not report"
    first=$(bench_scale_last_report)
    token=report-$n-$(date +%s)
    local rss0
    rss0=$(bench_scale_rss "$bench_operator_pid")
    reports=$(bench_scale_reports)
    kubectl -n flux-system annotate --overwrite fluxreport flux "reconcile.fluxcd.io/requestedAt=$token" >/dev/null
    wait_until 900 bench_scale_reported "$reports" || die "the operator did not report"
    printf 'N=%s report:    flux-operator v0.58.1     first at its start: %s; asked for: %s  RSS %s -> %s MiB, peak %s MiB\n' \
      "$n" "${first#Reporting finished in }" "$(bench_scale_last_report | sed 's/Reporting finished in //')" \
      "$rss0" "$(bench_scale_rss "$bench_operator_pid")" "$(bench_scale_hwm "$bench_operator_pid")"
    local start end

    # migration: the operator's first, while it runs
    token=migrate-op-$n-$(date +%s)
    before=$(bench_scale_server_requests)
    start=$(date +%s.%N)
    kubectl -n flux-system annotate --overwrite fluxinstance flux \
      "reconcile.fluxcd.io/requestedAt=$token" "reconcile.fluxcd.io/forceAt=$token" >/dev/null
    wait_until 1800 bench_scale_forced "$token" || die "the operator did not migrate"
    end=$(date +%s.%N)
    after=$(bench_scale_server_requests)
    printf 'N=%s migration: flux-operator v0.58.1     %6.2f s  %6d requests (API server)  peak RSS %6.1f MiB (the process)\n' \
      "$n" "$(echo "$end - $start" | bc)" "$((after - before))" "$(bench_scale_hwm "$bench_operator_pid")"
    bench_scale_operator_stop
    token=migrate-$n-$(date +%s)
    sed "s/^  name: flux\$/  name: flux\n  annotations:\n    reconcile.fluxcd.io\/forceAt: \"$token\"/" \
      "$root/$bench_scale_instance" >"$work/force.yaml"
    before=$(bench_scale_server_requests)
    bench_scale_timed "$fluxopctl" apply "$work/force.yaml" --distribution-artifact "$distribution" --no-wait
    after=$(bench_scale_server_requests)
    printf 'N=%s migration: fluxopctl apply           %6.2f s  %6d requests (%d API server)  peak RSS %6.1f MiB\n' \
      "$n" "$bench_scale_wall" "$(bench_scale_requests)" "$((after - before))" "$bench_scale_peak"
    grep -c 'migrated' "$work/last" >/dev/null || die "fluxopctl apply migrated nothing"

    # daemon
    local port
    port=$(registry_free_port)
    "$fluxopctl" apply --watch "$root/$bench_scale_instance" --distribution-artifact "$distribution" \
      --no-wait --metrics-addr "127.0.0.1:$port" >/dev/null 2>"$work/daemon.log" &
    bench_daemon_pid=$!
    wait_until 600 bench_scale_daemon_reported "$port" "$n" || die "the daemon wrote no report"
    local reported
    reported=$(bench_scale_rss "$bench_daemon_pid")
    sleep 30 # the idle half-minute measured
    printf 'N=%s daemon:    fluxopctl apply --watch   RSS %s MiB once the report is written, %s MiB after 30 s idle, peak %s MiB\n' \
      "$n" "$reported" "$(bench_scale_rss "$bench_daemon_pid")" "$(bench_scale_hwm "$bench_daemon_pid")"
    stop_process "$bench_daemon_pid"
    bench_daemon_pid=
  done

  # delete: the finalizers of every custom resource, then the uninstall
  bench_scale_timed "$fluxopctl" delete "$root/$bench_scale_instance" --no-wait --yes
  printf 'N=%s delete:    fluxopctl delete          %6.2f s  %6d requests  peak RSS %6.1f MiB  (%s)\n' \
    "$n" "$bench_scale_wall" "$(bench_scale_requests)" "$bench_scale_peak" \
    "$(grep -o 'removed the finalizers of [0-9]* [A-Za-z]*' "$work/last" | paste -sd, | sed 's/,/, /g')"
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
}
