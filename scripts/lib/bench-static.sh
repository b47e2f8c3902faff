# shellcheck shell=bash
# scripts/bench static (issue 39): the static fluxopctl that ships
# (scripts/setup's build/fluxopctl, or $FLUXOPCTL_STATIC_BINARY) against the
# same commit linked dynamically (scripts/bench's Release build,
# FLUXOPCTL_BENCH_BUILD) and the upstream CLI, in one hyperfine run on one
# distribution: `version --client`; `build` of examples/flux.yaml from
# oci:// with the artifact cache filled (warm-oci) and emptied at every run
# (cold-oci), upstream's `build instance` pulling the same artifact. Prints
# the sizes, the median wall time, mean CPU time and peak RSS of each, and
# checks: the static start-up is not slower than the dynamic one's (within
# the runs' spread), cold-oci >= 20x and warm-oci >= 60x upstream, <= 20 MiB.
# Sourced by scripts/bench, whose helpers (peak_rss, build_upstream,
# print_machine) it uses.

bench_static() {
  local static=${FLUXOPCTL_STATIC_BINARY:-$root/build/fluxopctl} dynamic=$fluxopctl
  [ -x "$static" ] || die "no static fluxopctl at $static (scripts/setup builds it)"
  file -b "$static" | grep -q 'statically linked' || die "$static is not statically linked"
  file -b "$dynamic" | grep -q 'dynamically linked' || die "$dynamic is not dynamically linked"
  local commit_static commit_dynamic
  commit_static=$("$static" version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["gitCommit"])')
  commit_dynamic=$("$dynamic" version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["gitCommit"])')
  # The same sources (commits that differ only in scripts or documents are the same program).
  [ "$commit_static" = "$commit_dynamic" ] ||
    git -C "$root" diff --quiet "$commit_static" "$commit_dynamic" -- src share cmake CMakeLists.txt ||
    die "static ($commit_static) and dynamic ($commit_dynamic) are built from different sources"
  need_package /usr/bin/time time
  build_upstream
  registry_ensure_installed || die "the Debian package docker-registry is not installed and could not be"
  [ -d "$distribution/flux" ] || die "no Flux distribution at $distribution"

  export DOCKER_CONFIG=$work/docker XDG_CACHE_HOME=$work/xdg TMPDIR=$work/tmp
  mkdir -p "$DOCKER_CONFIG" "$XDG_CACHE_HOME" "$TMPDIR"
  registry_start "$work/registry" || die "docker-registry did not start"
  local repo=flux-operator-manifests tag=latest
  registry_push_artifact "$repo:$tag" "$distribution" flux flux-images >/dev/null ||
    die "pushing the distribution artifact failed"
  local artifact=oci://$REGISTRY_ADDR/$repo:$tag case=$root/examples/flux.yaml
  local empty_cache="rm -rf $XDG_CACHE_HOME/fluxopctl"
  local upstream_build="$upstream build instance -f $case --distribution-artifact $artifact"
  local static_build="$static build $case --distribution-artifact $artifact"
  local dynamic_build="$dynamic build $case --distribution-artifact $artifact"

  $upstream_build >"$work/upstream.yaml" 2>"$work/upstream.err" || die "upstream failed: $(tail -n 1 "$work/upstream.err")"
  $static_build >"$work/static.yaml" 2>/dev/null || die "static build failed"
  $dynamic_build >"$work/dynamic.yaml" 2>/dev/null || die "dynamic build failed"
  { cmp -s "$work/upstream.yaml" "$work/static.yaml" && cmp -s "$work/upstream.yaml" "$work/dynamic.yaml"; } ||
    die "outputs differ; not timing"

  print_machine
  strip -o "$work/static.stripped" "$static" && strip -o "$work/dynamic.stripped" "$dynamic"
  echo "static:  $static ($(stat -c %s "$static") bytes; stripped $(stat -c %s "$work/static.stripped"))"
  echo "dynamic: $dynamic ($(stat -c %s "$dynamic") bytes; stripped $(stat -c %s "$work/dynamic.stripped");" \
    "$(ldd "$dynamic" | grep -c '=>') shared libraries)"
  echo "upstream: $upstream (flux-operator $upstream_version)"
  echo "hyperfine: $(hyperfine --version | cut -d' ' -f2), -N, 3 warm-up runs, ${runs:-30} runs, all commands in one run;" \
    "peak RSS: /usr/bin/time -f %M, median of $rss_runs runs"
  echo "artifact: $artifact (a local docker-registry serving $distribution); outputs identical ($(wc -c <"$work/upstream.yaml") bytes)"
  echo

  hyperfine -N --warmup 3 --runs "${runs:-30}" --style basic --export-json "$work/static.json" \
    --prepare true --prepare true --prepare true --prepare true \
    --prepare "$empty_cache" --prepare "$empty_cache" --prepare "$empty_cache" \
    "$static version --client" "$dynamic version --client" "$static_build" "$dynamic_build" \
    "$static_build" "$dynamic_build" "$upstream_build" >/dev/null

  local rss=()
  rss+=("$(peak_rss "$static" version --client)" "$(peak_rss "$dynamic" version --client)")
  $static_build >/dev/null 2>&1
  rss+=("$(peak_rss $static_build)" "$(peak_rss $dynamic_build)")
  rss+=("$(peak_rss --cold $static_build)" "$(peak_rss --cold $dynamic_build)" "$(peak_rss $upstream_build)")
  echo "load after the timings: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo

  python3 - "$work/static.json" "${rss[@]}" <<'PY'
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
rss = [int(x) for x in sys.argv[2:]]
def ms(s):
    return f"{s * 1000:.1f} ms"
rows = []
for r, kb in zip(results, rss):
    times = r["times"]
    cpu = r["user"] + r["system"]  # hyperfine's means
    rows.append((statistics.median(times), cpu, kb, statistics.stdev(times) if len(times) > 1 else 0))
names = ["version --client", "build, warm-oci (artifact cache filled)", "build, cold-oci (cache emptied every run)"]
print("| command | static: median, CPU, peak RSS | dynamic: median, CPU, peak RSS | upstream | dynamic / static | upstream / static |")
print("| --- | --- | --- | --- | --- | --- |")
up = rows[6]
for i, name in enumerate(names):
    s, d = rows[2 * i], rows[2 * i + 1]
    upstream = f"{ms(up[0])}, {ms(up[1])}, {up[2] / 1024:.1f} MiB" if i == 2 else ""
    ratio = f"{up[0] / s[0]:.0f}x" if i == 2 else (f"{up[0] / s[0]:.0f}x" if i == 1 else "")
    print(f"| {name} | {ms(s[0])}, {ms(s[1])}, {s[2] / 1024:.1f} MiB | {ms(d[0])}, {ms(d[1])}, {d[2] / 1024:.1f} MiB "
          f"| {upstream} | {d[0] / s[0]:.2f} | {ratio} |")
print()
print(f"upstream build instance (cold, pulls every run): {ms(up[0])} median")
sv, dv = rows[0], rows[1]
ok = sv[0] <= dv[0] + max(sv[3], dv[3])
print(f"goal: static start-up not slower than dynamic: {ms(sv[0])} vs {ms(dv[0])}: {'met' if ok else 'NOT met'}")
cold, warm = up[0] / rows[4][0], up[0] / rows[2][0]
print(f"goal (issue 15): cold-oci >= 20x: {cold:.0f}x {'met' if cold >= 20 else 'NOT met'}; "
      f"warm-oci >= 60x: {warm:.0f}x {'met' if warm >= 60 else 'NOT met'}; "
      f"peak RSS <= 20 MiB: {max(rows[2][2], rows[4][2]) / 1024:.1f} MiB {'met' if max(rows[2][2], rows[4][2]) <= 20 * 1024 else 'NOT met'}")
PY
}
