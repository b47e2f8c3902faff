# Sourced by scripts/bench: the status pages (`scripts/bench status`, issue 54
# point 10), by hand, not in CI. On one local control plane (scripts/cluster)
# with the default instance applied and N Flux custom resources (the scale
# fixture, scripts/lib/scale-fixture.py; N = $FLUXOPCTL_STATUS_SIZE, default
# 10,000, a fifth of them failing):
#   pages: the daemon (`apply --watch --status-addr`) once its report shows
#     the N objects: each page and API answer asked 20 times, its server time
#     (curl's time to the first byte less its time to the request sent,
#     loopback), median and slowest, and its size;
#   memory: the daemon's resident memory after those requests, and its peak;
#   fleet: `report -o html` over 50 contexts (the same cluster under 50
#     names), its wall time and size, and how long chromium (headless) takes
#     to load it, less the time it takes to load an empty page (the
#     browser's own start), median of 5.
# The goals: every answer's median server time within 50 ms, resident memory
# within 40 MiB, the fleet file loaded within a second; a goal missed is
# said, and the mode exits 1.
# Uses $fluxopctl, $distribution, $root, $work and $keep from scripts/bench.

bench_status_instance=tests/e2e/instances/flux-2.9-four.yaml
bench_status_size=${FLUXOPCTL_STATUS_SIZE:-10000}
bench_status_targets=(/ /resources "/resources?page=50" "/resources?state=Failed"
  "/resources?namespace=scale-042&q=ks" "/api/v1/overview" "/api/v1/resources?page=100")

bench_status_rss() { awk "/^$2:/ { printf \"%.1f\", \$2 / 1024 }" "/proc/$1/status"; }
bench_status_url() { printf 'http://127.0.0.1:%s%s' "$bench_status_port" "$1"; }
bench_status_shown() {
  [ "$(curl -sf --max-time 10 "$(bench_status_url /api/v1/resources)" | jq '.matching')" -ge "$1" ] 2>/dev/null
}
# median and maximum of the numbers on stdin, one a line.
bench_status_median_max() { sort -n | awk '{ v[NR] = $1 } END { printf "%.1f %.1f", v[int((NR + 1) / 2)], v[NR] }'; }

# The wall time of chromium loading URL headless, in ms.
bench_status_browser_ms() {
  local start end
  start=$(date +%s%N)
  timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$work/chromium" --dump-dom "$1" >/dev/null 2>&1 || die "chromium could not load $1"
  end=$(date +%s%N)
  echo $(((end - start) / 1000000))
}

bench_status() {
  command -v chromium >/dev/null || die "chromium is not installed (apt-get install chromium)"
  trap 'set +e; [ -z "${bench_daemon_pid:-}" ] || kill -9 "$bench_daemon_pid" 2>/dev/null;
    FLUXOPCTL_CLUSTER_DIR=$work/cluster "$root/scripts/cluster" down >/dev/null 2>&1; $keep || rm -rf "$work"' EXIT
  export FLUXOPCTL_CLUSTER_DIR=$work/cluster
  eval "$("$root/scripts/cluster" up 2>"$work/up.err")" || { cat "$work/up.err" >&2; die "cluster up failed"; }
  "$fluxopctl" apply "$root/$bench_status_instance" --distribution-artifact "$distribution" \
    >/dev/null 2>"$work/install.log" || { tail -n 5 "$work/install.log" >&2; die "install failed"; }
  python3 "$root/scripts/lib/scale-fixture.py" "$KUBECONFIG" "$bench_status_size" 2>"$work/fixture.log" ||
    { cat "$work/fixture.log" >&2; die "the scale fixture failed"; }
  echo "cluster: $(cat "$work/fixture.log")"
  local missed=0

  # pages
  bench_status_port=$(registry_free_port)
  "$fluxopctl" apply --watch "$root/$bench_status_instance" --distribution-artifact "$distribution" \
    --no-wait --status-addr "127.0.0.1:$bench_status_port" >/dev/null 2>"$work/daemon.log" &
  bench_daemon_pid=$!
  wait_until 900 bench_status_shown "$bench_status_size" || die "the daemon's pages never showed $bench_status_size objects"
  echo "pages: the daemon's status pages with $bench_status_size Flux objects; server time in ms over 20 requests"
  printf '  %-40s %8s %8s %10s\n' answer median slowest bytes
  local target times median slowest bytes
  for target in "${bench_status_targets[@]}"; do
    times=$(for _ in $(seq 20); do
      curl -s -o /dev/null --max-time 10 -w '%{time_pretransfer} %{time_starttransfer}\n' "$(bench_status_url "$target")"
    done | awk '{ printf "%.3f\n", ($2 - $1) * 1000 }')
    read -r median slowest <<<"$(bench_status_median_max <<<"$times")"
    bytes=$(curl -s --max-time 10 "$(bench_status_url "$target")" | wc -c)
    printf '  %-40s %8s %8s %10s\n' "$target" "$median" "$slowest" "$bytes"
    awk -v m="$median" 'BEGIN { exit !(m > 50) }' && { echo "  goal missed: $target's median $median ms > 50 ms"; missed=1; }
  done

  # memory
  local rss hwm
  rss=$(bench_status_rss "$bench_daemon_pid" VmRSS)
  hwm=$(bench_status_rss "$bench_daemon_pid" VmHWM)
  echo "memory: the daemon's RSS $rss MiB after serving them (peak $hwm MiB, its report's)"
  awk -v r="$rss" 'BEGIN { exit !(r > 40) }' && { echo "  goal missed: RSS $rss MiB > 40 MiB"; missed=1; }
  stop_process "$bench_daemon_pid"
  bench_daemon_pid=

  # fleet: one cluster under 50 context names
  local contexts=() i
  cp "$KUBECONFIG" "$work/fleet.kubeconfig"
  local context cluster user
  context=$(kubectl config current-context)
  cluster=$(kubectl config view -o jsonpath="{.contexts[?(@.name==\"$context\")].context.cluster}")
  user=$(kubectl config view -o jsonpath="{.contexts[?(@.name==\"$context\")].context.user}")
  for i in $(seq -w 1 50); do
    kubectl --kubeconfig "$work/fleet.kubeconfig" config set-context "cluster-$i" --cluster="$cluster" \
      --user="$user" >/dev/null
    contexts+=(--context "cluster-$i")
  done
  local start end
  start=$(date +%s%N)
  "$fluxopctl" report --kubeconfig "$work/fleet.kubeconfig" "${contexts[@]}" -o html >"$work/fleet.html" \
    2>"$work/fleet.err" || { tail -n 3 "$work/fleet.err" >&2; die "report -o html failed"; }
  end=$(date +%s%N)
  printf '<!DOCTYPE html><title>blank</title>\n' >"$work/blank.html"
  local page blank
  page=$(for _ in 1 2 3 4 5; do bench_status_browser_ms "file://$work/fleet.html"; done | bench_status_median_max)
  blank=$(for _ in 1 2 3 4 5; do bench_status_browser_ms "file://$work/blank.html"; done | bench_status_median_max)
  local loaded
  loaded=$(awk -v p="${page% *}" -v b="${blank% *}" 'BEGIN { printf "%.0f", p - b }')
  echo "fleet: report -o html of 50 contexts in $(((end - start) / 1000000)) ms, $(wc -c <"$work/fleet.html") bytes;" \
    "chromium loads it in ${page% *} ms (median of 5), an empty page in ${blank% *} ms: the page's own $loaded ms"
  [ "$loaded" -le 1000 ] || { echo "  goal missed: the fleet file's $loaded ms > 1 s"; missed=1; }
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  return "$missed"
}
