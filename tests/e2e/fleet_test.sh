#!/usr/bin/env bash
# End-to-end tests of a fleet (issue 32): get, check, diff, apply, wait,
# suspend, resume and report across three kubeconfig contexts merged from
# $KUBECONFIG's files: the local control plane (scripts/cluster), a second,
# light cluster beside it (another API server on the same etcd under its own
# prefix: no controllers, so what is applied there never rolls out) and one
# that is unreachable (a closed port). A cluster that fails does not stop the
# others; the exit codes say it; a canary rollout in batches of one stops at
# the batch that does not become Ready. The cases, each from whatever the
# clusters hold (given_applied applies the instance where it needs it):
#   contexts, check, diff, apply, get, suspend_resume, report, report_html, canary
#
#   tests/e2e/fleet_test.sh BIN ROOT [CASE...]
#
# Closes with `N passed, M failed`; exit 77 (1 in CI) when there is no
# cluster or no distribution to test with.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
instance=$root/tests/e2e/instances/flux-2.9-four.yaml
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

command -v python3 >/dev/null || skip_test "python3 is not installed"
all_cases=(contexts check diff apply get suspend_resume report report_html canary)
e2e_select_cases "$@"
e2e_cluster_up "$work/cluster"
main_config=$KUBECONFIG
e2e_cluster_add east
east_config=$e2e_added
# Port 1: nothing listens there, a connection is refused at once.
sed -e 's/east/gone/g' -e 's#https://127.0.0.1:[0-9]*#https://127.0.0.1:1#' "$east_config" >"$work/gone.kubeconfig"
export KUBECONFIG=$main_config:$east_config:$work/gone.kubeconfig
main=fluxopctl-e2e
three=(--context "$main" --context east --context gone)

# fleet NAME ARGS...: fluxopctl with the distribution (see fx).
fleet() {
  local name=$1
  shift
  fx "$name" "$@" --distribution-artifact "$dist"
}
# row NAME CLUSTER PATTERN: $work/NAME.out has CLUSTER's row, matching the
# extended regular expression PATTERN after the context.
row() {
  local line
  line=$(awk -v c="$2" '$1 == c' "$work/$1.out" | tail -n 1)
  [ -n "$line" ] || { echo "no row for $2 in:"; cat "$work/$1.out"; return 1; }
  [[ $line =~ ^$2\ +$3 ]] || { echo "row: $line"; return 1; }
}
# json_keys NAME KEYS...: $work/NAME.out is one JSON object with these keys.
json_keys() {
  local name=$1
  shift
  python3 - "$work/$name.out" "$@" <<'PY' || { cat "$work/$name.out" | head -n 20; return 1; }
import json, sys
document = json.load(open(sys.argv[1]))
want = sorted(sys.argv[2:])
if sorted(document) != want:
    sys.exit(f"keys {sorted(document)}, not {want}")
PY
}
exit_and() {  # CODE FUNCTION ARGS...
  local code=$1
  shift
  exit_is "$code" && "$@"
}
annotation() {
  k --context "$1" -n "$ns" get fluxinstance flux -o jsonpath='{.metadata.annotations.fluxcd\.controlplane\.io/reconcile}'
}
# given_applied: the instance applied to the two reachable clusters (no
# wait: the second never rolls out), and Ready on the local one.
given_applied() {
  fleet given-apply apply "$instance" --context "$main" --context east --no-wait --timeout 3m
  exit_is 0 given-apply || return 1
  kwait 240 --context "$main" -n "$ns" wait fluxinstance flux --for=condition=Ready >/dev/null 2>&1 ||
    fx main-ready apply "$instance" --context "$main" --distribution-artifact "$dist" --timeout 4m
}

# changed_instance NAME: $work/NAME.yaml, the instance with a label of this
# run's on every object: a change on every reachable cluster, whatever they
# hold.
changed_instance() {
  sed "s/^spec:$/&\n  commonMetadata:\n    labels:\n      fleet-change: run-$(date +%s%N)/" "$instance" >"$work/$1.yaml"
}

# --- contexts -------------------------------------------------------------
case_contexts() {
  fx contexts-none get --all-contexts --context-selector 'qa-*'
  check "contexts: --context-selector matching nothing is an error naming the flag" exit_and 1 \
    err_has contexts-none '^error: --context-selector: no context matches "qa-\*"$'
  fx contexts-unknown get --context "$main" --context nowhere
  check "contexts: an unknown --context is an error naming it" exit_and 1 \
    err_has contexts-unknown '^error: --context: no context named "nowhere" in the kubeconfig$'
  fx contexts-delete delete "$instance" --context "$main" --context east
  check "contexts: delete refuses several --context" exit_and 1 err_has contexts-delete '^error: --context: given 2 times'
}

# --- check: one table with a CLUSTER column, the unreachable one failed ---
case_check() {
  fleet check check "$instance" --all-contexts
  check "check: check --all-contexts: the unreachable cluster fails, exit 1" exit_and 1 \
    row check gone 'failed +'
  check "check: the local cluster's checks pass" row check "$main" 'ok +'
  check "check: the second cluster's checks in the table" \
    out_has check '^east +ok +permissions '
  check "check: the distribution rendered once for the fleet" \
    test "$(grep -c '^using distribution ' "$work/check.err")" = 1
}

# --- diff: blocks by context, the summary, -o json keyed by context -------
# Of changed_instance: a change on every reachable cluster.
case_diff() {
  changed_instance changed
  fleet diff diff "$work/changed.yaml" "${three[@]}"
  check "diff: 2 when a cluster failed" exit_is 2
  check "diff: the block of each reachable cluster" out_has diff "^# east$"
  check "diff: the summary's changed clusters" row diff east 'changed +[0-9]+ objects would change'
  check "diff: the unreachable cluster failed, naming why" row diff gone 'failed +.*127\.0\.0\.1:1'
  check "diff: the progress prefixed by context" err_has diff '^gone: error: '
  fleet diff-json diff "$work/changed.yaml" "${three[@]}" -o json
  check "diff: diff -o json: one object keyed by context" exit_and 2 json_keys diff-json "$main" east gone
}

# --- apply to all three, without waiting ---------------------------------
case_apply() {
  local file=$instance progress='^east: Namespace/flux-system created'
  # On a second cluster an earlier case applied to, the progress of what
  # changes there: the objects, given a label of this run's.
  if k --context east get namespace "$ns" >/dev/null 2>&1; then
    changed_instance changed-apply
    file=$work/changed-apply.yaml progress='^east: Deployment/flux-system/source-controller configured'
  fi
  fleet apply apply "$file" "${three[@]}" --no-wait --timeout 3m
  check "apply: exit 1 as one cluster failed" exit_is 1
  check "apply: the others applied" row apply east 'ok +'
  check "apply: the local cluster applied" row apply "$main" 'ok +'
  check "apply: the unreachable one failed" row apply gone 'failed +'
  check "apply: progress lines prefixed by context" err_has apply "$progress"
  check "apply: the instance on the second cluster" \
    test -n "$(k --context east -n "$ns" get fluxinstance flux -o name 2>/dev/null)"

  # --- diff of what is applied: nothing would change -----------------------
  fleet diff-same diff "$file" --all-contexts --context-selector '[fe]*'
  check "apply: diff --context-selector: nothing changes on the applied clusters, exit 0" \
    exit_and 0 row diff-same east 'ok +0 objects would change'
}

# --- get: one table with a CLUSTER column ---------------------------------
case_get() {
  check "get: the instance applied" given_applied || return
  fx get get --all-contexts
  check "get: exit 1 as one cluster is unreachable" exit_is 1
  check "get: the header" out_has get '^CLUSTER +READY +FLUX +REVISION +LAST RECONCILED +MESSAGE$'
  check "get: the local cluster's instance, Ready with its Flux version" row get "$main" 'True +v2\.9\.[0-9]+ +v2\.9'
  check "get: the unreachable cluster's row says why" row get gone '- +- +- +- +.*127\.0\.0\.1:1'
  fx get-json get "${three[@]}" -o json
  check "get: get -o json: one object keyed by context" exit_and 1 json_keys get-json "$main" east gone
}

# --- suspend, resume, wait ------------------------------------------------
case_suspend_resume() {
  check "suspend_resume: the instance applied" given_applied || return
  fx suspend suspend --context "$main" --context east
  check "suspend_resume: suspend: both clusters, exit 0" exit_and 0 row suspend east 'ok +.*reconciliation suspended'
  check "suspend_resume: suspend: the annotation on the second cluster" test "$(annotation east)" = disabled
  fx resume resume --context "$main" --context east --no-wait
  check "suspend_resume: resume --no-wait: both, exit 0" exit_and 0 row resume "$main" 'ok +.*reconciliation resumed at'
  check "suspend_resume: resume: the annotation on the second cluster" test "$(annotation east)" = enabled
  fx wait wait --context "$main" --timeout 4m
  check "suspend_resume: wait on one context: as before" exit_and 0 err_has wait '^waiting for .*flux to be ready$'
}

# --- report -----------------------------------------------------------------
case_report() {
  check "report: the instance applied" given_applied || return
  fx report report "${three[@]}" -o json
  check "report: report -o json: one object keyed by context, exit 1" exit_and 1 json_keys report "$main" east gone
}

# --- the fleet file: report -o html ---------------------------------------
# page NAME [FILE]: FILE ($work/NAME.out) read as a browser's parser reads it
# (html_page.py), into $work/NAME.page.json.
page() { python3 "$root/tests/e2e/html_page.py" "${2:-$work/$1.out}" >"$work/$1.page.json"; }
# page_has NAME JQ: the page's reading satisfies the jq expression.
page_has() {
  jq -e "$2" "$work/$1.page.json" >/dev/null || { jq -c '{tags, active, rows}' "$work/$1.page.json"; return 1; }
}
# no_console NAME: the page logged nothing in the browser (e2e_browse).
no_console() { [ ! -s "$work/$1.console" ] || { cat "$work/$1.console"; return 1; }; }
# in_browser NAME: $work/NAME.out loaded in chromium, its DOM read (page
# NAME-dom); a skip where chromium is not installed.
in_browser() {
  if ! command -v chromium >/dev/null; then
    skip "$1: in a real browser" "chromium is not installed"
    return 1
  fi
  cp "$work/$1.out" "$work/$1.html"
  check "$1: chromium loads the page" e2e_browse "$1" "file://$work/$1.html" || return 1
  page "$1-dom" "$work/$1.dom"
}
# The failing reconcilers of CONTEXT as report -o json counts them ($work/report-json.out).
json_failing() {
  jq -r --arg c "$1" '[.[$c].spec.reconcilers[].stats.failing] | add' "$work/report-json.out"
}
# row_is NAME CONTEXT COLUMN VALUE: the page's row of CONTEXT has VALUE in
# COLUMN (0: the context, 1: health, 4: newer in range, 5: Ready, 6: failing).
row_is() {
  jq -e --arg c "$2" --argjson i "$3" --arg v "$4" \
    '[.rows[1:][] | select(.[0] == $c)] | length == 1 and .[0][$i] == $v' "$work/$1.page.json" >/dev/null ||
    { echo "row of $2: $(jq -c --arg c "$2" '.rows[1:][] | select(.[0] == $c)' "$work/$1.page.json"), not $4 at $3"; return 1; }
}
ready_of() {
  k --context "$1" -n "$ns" get fluxinstance flux -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
}
case_report_html() {
  check "report_html: the instance applied" given_applied || return
  # The hostile instance below is gone, whatever an earlier run left.
  k --context "$main" -n html-hostile delete fluxinstance flux --ignore-not-found >/dev/null 2>&1
  fx report-html report "${three[@]}" -o html
  check "report_html: the fleet's exit code, 1 (one cluster unreachable)" exit_is 1 report-html
  page report-html
  check "report_html: a row per cluster, the unreachable one first, saying why" \
    page_has report-html "(.rows | length == 4) and .rows[1][0] == \"gone\" and .rows[1][1] == \"unreachable\" and (.rows[1][9] | length > 0)"
  check "report_html: worst first" page_has report-html \
    '[.rows[1:][] | {"unreachable": 0, "not ready": 1, "failing": 2, "suspended": 3, "healthy": 4}[.[1]]] | . == sort and all(. != null)'
  fx report-json report --context "$main" --context east -o json
  check "report_html: report -o json for the counts" exit_is 0 report-json
  local context
  for context in "$main" east; do
    check "report_html: $context's failing count is report -o json's" \
      row_is report-html "$context" 6 "$(json_failing "$context")"
    check "report_html: $context's Ready is its FluxInstance's" row_is report-html "$context" 5 "$(ready_of "$context")"
  done
  check "report_html: without a distribution, whether a newer version is in range is unknown, said once" \
    eval 'row_is report-html "$main" 4 unknown && [ "$(grep -c "a newer Flux version in range" "$work/report-html.err")" = 1 ]'
  fx report-current report --context "$main" --context east -o html --distribution-artifact "$dist"
  page report-current
  check "report_html: with the distribution, none newer than what runs (its newest 2.9)" \
    eval 'row_is report-current "$main" 4 none && row_is report-current east 4 none'
  # The distribution with a v2.9.5 beside v2.9.4 (links, in the test's own directory).
  local newer=$work/newer-distribution
  rm -rf "$newer" && mkdir -p "$newer/flux" && cp -rs "$dist/." "$newer/" 2>/dev/null
  ln -sfn "$dist/flux/v2.9.4" "$newer/flux/v2.9.5"
  fx report-newer report --context "$main" --context east -o html --distribution-artifact "$newer"
  page report-newer
  check "report_html: a newer version in the range 2.9.x, named on each row" \
    eval 'row_is report-newer "$main" 4 v2.9.5 && row_is report-newer east 4 v2.9.5'
  if in_browser report-newer; then
    check "report_html: chromium: the page with a newer version logged nothing" no_console report-newer
  fi
  check "report_html: no script, nothing that loads or runs" \
    page_has report-html '(.tags | any(. == "script") | not) and (.active == [])'
  if in_browser report-html; then
    check "report_html: chromium: nothing logged (no error, no policy violation)" no_console report-html
    check "report_html: chromium: the DOM after load has the four rows, and no script" \
      page_has report-html-dom "(.rows | length == 4) and (.rows[1][0] == \"gone\") and (.tags | any(. == \"script\") | not)"
  fi

  # A FluxInstance of its own namespace, whose Ready message is hostile:
  # markup, a URL with credentials, an ANSI escape. It shows as text.
  k --context "$main" create namespace html-hostile --dry-run=client -o yaml | k --context "$main" apply -f - >/dev/null
  sed 's/namespace: flux-system/namespace: html-hostile/' "$instance" | k --context "$main" apply -f - >/dev/null
  local status
  status=$(python3 -c 'import json; print(json.dumps({"status": {"conditions": [{"type": "Ready", "status": "False",
    "reason": "BuildFailed", "lastTransitionTime": "2026-12-07T00:00:00Z",
    "message": "<script>alert(1)</script> \"x\" pull https://bot:s3cret@git.example/repo \u001b[31mred"}]}}))')
  check "report_html: the hostile status written" \
    k --context "$main" -n html-hostile patch fluxinstance flux --subresource=status --type=merge -p "$status"
  fx report-hostile report --context "$main" -n html-hostile -o html
  check "report_html: one cluster's page, exit 0" exit_is 0 report-hostile
  page report-hostile
  check "report_html: the markup is text, no element made of it" \
    page_has report-hostile '(.tags | any(. == "script") | not) and (.text | contains("<script>alert(1)</script> \"x\""))'
  check "report_html: the credentials redacted" \
    page_has report-hostile '(.text | contains("https://***@git.example/repo")) and (.text | contains("s3cret") | not)'
  check "report_html: the ANSI escape shown, not sent" \
    page_has report-hostile '(.text | contains("\\x1b[31mred")) and (.text | contains("\u001b") | not)'
  if in_browser report-hostile; then
    check "report_html: chromium: nothing logged from the hostile page" no_console report-hostile
    check "report_html: chromium: the hostile message is text in the DOM, no script element" \
      page_has report-hostile-dom '(.tags | any(. == "script") | not) and (.text | contains("<script>alert(1)</script>"))'
  fi
  # A failing FluxInstance left on the cluster would count in other cases' reports.
  k --context "$main" -n html-hostile delete fluxinstance flux --ignore-not-found >/dev/null 2>&1
}

# --- a canary rollout in batches of one -----------------------------------
# The local cluster becomes Ready; the second never does (no controllers):
# the rollout stops there, the unreachable one is never tried.
case_canary() {
  check "canary: the instance applied" given_applied || return
  fleet canary apply "$instance" "${three[@]}" --batch-size 1 --stop-on-failure --timeout 20s
  check "canary: exit 1" exit_is 1
  check "canary: the first batch Ready" row canary "$main" 'ok +'
  check "canary: the second batch failed its wait" row canary east 'failed +'
  check "canary: no batch after the failed one" row canary gone 'skipped +'
  check "canary: the third cluster was not reached" bash -c "! grep -q '^gone: ' '$work/canary.err'"
}

e2e_run_cases
summary
