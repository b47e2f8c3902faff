# shellcheck shell=bash
# Sourced by scripts/bench: where a fluxopctl run's CPU time goes, by
# component, from perf's samples (perf record over several runs of one
# command, grouped by shared object and, within fluxopctl, by namespace).
#
#   profile_runs LABEL RUNS PREPARE COMMAND...
#       runs PREPARE (a shell command, e.g. emptying the cache) then COMMAND,
#       RUNS times under `perf record`, and prints one line per component:
#       milliseconds of CPU per run and its share. The time a run spends
#       waiting (for the registry, the disk) is wall time minus this CPU time.

profile_runs() {
  local label=$1 runs=$2 prepare=$3 data
  shift 3
  data=$(mktemp "${TMPDIR:-/tmp}/bench-profile.XXXXXX")
  local script=""
  local _
  for _ in $(seq "$runs"); do script+="$prepare; $(printf '%q ' "$@") >/dev/null 2>&1; "; done
  # 10 kHz: a sample per 0.1 ms of CPU; the prepare commands are other
  # processes, filtered out below.
  perf record -q -F 10000 -o "$data" -- bash -c "$script" >/dev/null 2>&1 ||
    { echo "  (perf record failed; no profile)"; rm -f "$data"; return 0; }
  perf script -i "$data" -F comm,ip,sym,dso 2>/dev/null |
    python3 "$(dirname "${BASH_SOURCE[0]}")/bench-profile.py" "$label" "$runs" 10000
  rm -f "$data"
}
