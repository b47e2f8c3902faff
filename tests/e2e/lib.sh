# Sourced by the end-to-end tests (after setting root, the checkout): a
# local control plane (scripts/cluster) of the test's own, the reporting the
# tests share, and the checks of an applied FluxInstance against two
# renderings, fluxopctl's and the upstream CLI's.
#
#   e2e_suite BIN         what a suite starts with, once it has set root and
#                         sourced this file: bin (BIN, absolute), dist
#                         ($FLUXOPCTL_DISTRIBUTION_ARTIFACT, else
#                         ../shared/flux-distribution beside the checkout),
#                         work (a new temporary directory), e2e_cleanup on
#                         exit, and e2e_require's checks
#   e2e_cluster_up DIR    brings it up in DIR and sets KUBECONFIG; a skip
#                         (skip_test) when it cannot be built here, a failure
#                         (with its log) when it fails to start
#   e2e_cluster_down      stops it and removes DIR
#   e2e_cluster_add NAME  one more, light cluster beside it (scripts/cluster
#                         add-apiserver): sets e2e_added to its kubeconfig,
#                         whose context is NAME
#   e2e_upstream_render INSTANCE OUT
#                         the upstream `flux-operator build instance` of
#                         INSTANCE into OUT (see below)
#   e2e_upstream_stop     stops the registry e2e_upstream_render started
#   e2e_operator_start LOG / e2e_operator_stop
#                         the upstream Flux Operator's controller run out of
#                         cluster (after sourcing scripts/lib/upstream-operator.sh)
#   e2e_browse NAME URL   URL loaded in a real browser (Debian's chromium,
#                         headless): $work/NAME.dom, the DOM after load;
#                         $work/NAME.console, what the page logged (errors,
#                         policy violations); a screenshot kept as the test's
#                         artefact, $E2E_ARTIFACTS/NAME.png
#
#   e2e_cleanup           what ends every suite (`on_exit e2e_cleanup`):
#                         e2e_cleanup_hook when the suite defines one (what
#                         else it started), every background job stopped,
#                         the registries stopped, the cluster down, $work
#                         removed (kept, and said, with E2E_KEEP=1)
#
#   e2e_select_cases ARG...
#                         the cases to run, into `cases`: the ARGs, else
#                         $CASES (space separated), else all of $all_cases;
#                         aborts on a name that is not one of them
#   e2e_run_cases         runs each: case_NAME (its name in $name), then
#                         `# NAME took Ns`
#
# A suite's cases are functions case_NAME, listed in all_cases in the order
# of a full run; each sets up the state it needs, from whatever state the
# cluster is in, so that any of them runs alone and in any order:
#   CASES="install upgrade" ctest --test-dir build -R '^e2e_apply$'
#
# A check is `check "CASE: what holds" FUNCTION ARGS...`, FUNCTION one of the
# helpers below (exit_is, out_has, ready_is...) or the suite's, printing why
# it fails. The reporting (pass, fail, check, summary...), wait_until and
# stop_process are tests/lib/harness.sh's. The checks use $work (the test's temporary
# directory), $bin (fluxopctl), $dist (the distribution directory) and $ns.

# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
# shellcheck source=scripts/lib/upstream-cli.sh
source "$root/scripts/lib/upstream-cli.sh"
# shellcheck source=scripts/lib/oci-registry.sh
declare -F registry_start >/dev/null || source "$root/scripts/lib/oci-registry.sh"

ns=flux-system
# The Lease a one-shot apply takes.
lease=fluxopctl-flux
# The hard limit on one fluxopctl run (fx).
run_limit=${run_limit:-300}

e2e_cluster_up() {
  export FLUXOPCTL_CLUSTER_DIR=$1
  local up status=0
  up=$("$root/scripts/cluster" up 2>"$FLUXOPCTL_CLUSTER_DIR.up.err") || status=$?
  if [ "$status" != 0 ]; then
    [ "$status" = 77 ] && skip_test "$(tail -1 "$FLUXOPCTL_CLUSTER_DIR.up.err")"
    sed 's/^/  | /' "$FLUXOPCTL_CLUSTER_DIR.up.err" >&2
    abort "scripts/cluster up (exit $status)"
  fi
  eval "$up"
  e2e_cluster_started=1
}

e2e_cluster_add() {
  e2e_added=$("$root/scripts/cluster" add-apiserver "$1" 2>"$FLUXOPCTL_CLUSTER_DIR.add.err") || {
    sed 's/^/  | /' "$FLUXOPCTL_CLUSTER_DIR.add.err" >&2
    abort "scripts/cluster add-apiserver $1"
  }
}

e2e_cleanup() {
  trap - EXIT INT TERM
  if declare -F e2e_cleanup_hook >/dev/null; then e2e_cleanup_hook; fi
  # A job stopped (SIGSTOP) is continued so that SIGTERM reaches it.
  local pid
  for pid in $(jobs -p); do
    kill -CONT "$pid" 2>/dev/null
    stop_process "$pid"
  done
  registry_stop_all
  e2e_cluster_down
  if [ "${E2E_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}

# Only what e2e_cluster_up started: never a cluster $FLUXOPCTL_CLUSTER_DIR
# named before.
e2e_cluster_down() {
  [ "${e2e_cluster_started:-0}" = 1 ] || return 0
  "$root/scripts/cluster" down >/dev/null 2>&1
  rm -f "$FLUXOPCTL_CLUSTER_DIR.up.err" "$FLUXOPCTL_CLUSTER_DIR.add.err"
  e2e_cluster_started=0
}

# ---------------------------------------------------------------------------
# The independent oracle: what upstream renders for an instance, fed the same
# distribution as scripts/parity feeds it (an OCI artifact in a local
# registry: upstream reads no directory). One registry per test run, started
# by the first call; call it from the script's top level (a missing upstream
# CLI or docker-registry is a skip_test, which exits). Returns non-zero (the
# reason on stderr) when the registry or the rendering fails: a failure.

e2e_upstream_start() {
  [ -x "$upstream" ] ||
    skip_test "no upstream flux-operator CLI at $upstream (scripts/parity builds it)"
  registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"
  e2e_upstream_dir=$work/upstream
  mkdir -p "$e2e_upstream_dir/docker" || return 1
  registry_start "$e2e_upstream_dir/registry" || { echo "the local registry did not start" >&2; return 1; }
  registry_push_artifact flux-operator-manifests:latest "$dist" flux flux-images >/dev/null ||
    { echo "pushing the distribution to the local registry failed" >&2; return 1; }
  e2e_upstream_artifact=oci://$REGISTRY_ADDR/flux-operator-manifests:latest
}

# The CLI renders the manifests' tags; apply installs what the operator
# installs, the images pinned by the digests of the distribution's image
# catalog. So the CLI's rendering is pinned here, image by image, from
# $dist/flux-images/<version>/upstream-alpine.yaml (every e2e instance uses
# ghcr.io/fluxcd); tests/handoff checks the operator itself.
e2e_upstream_render() {
  if [ -z "${e2e_upstream_artifact:-}" ]; then e2e_upstream_start || return 1; fi
  DOCKER_CONFIG=$e2e_upstream_dir/docker XDG_CACHE_HOME=$e2e_upstream_dir/cache timeout -k 5 300 \
    "$upstream" build instance -f "$1" --distribution-artifact "$e2e_upstream_artifact" >"$2.cli" 2>"$2.err" ||
    { echo "upstream build instance $1 failed: $(tail -n 1 "$2.err")" >&2; return 1; }
  python3 - "$2.cli" "$dist/flux-images" >"$2" <<'PY' || { echo "pinning the digests of $1 failed" >&2; return 1; }
import re, sys, yaml
text = open(sys.argv[1]).read()
version = re.search(r"app.kubernetes.io/version: (v\S+)", text).group(1)
with open(f"{sys.argv[2]}/{version}/upstream-alpine.yaml") as f:
    catalog = {(i["name"], i["newTag"]): i["digest"] for i in yaml.safe_load(f)["images"]}
def pin(m):
    name, tag = m.group(2).rsplit(":", 1)
    digest = catalog.get((name, tag))
    return m.group(0) + ("@" + digest if digest else "")
sys.stdout.write(re.sub(r"(image: )(\S+:[^@\s]+)$", pin, text, flags=re.M))
PY
}

e2e_upstream_stop() {
  registry_stop_all
  e2e_upstream_artifact=
}

# The operator against $KUBECONFIG, for $ns, its distribution in $dist: FIPS
# mode (it refuses to start otherwise), no leader election, no listeners; its
# output appended to LOG. Stopped with SIGTERM, SIGKILL after 30 s.
e2e_operator_pid=
e2e_operator_start() {
  GODEBUG=fips140=on RUNTIME_NAMESPACE=$ns KUBECONFIG=$KUBECONFIG \
    "$upstream_operator" --storage-path="$dist" --enable-leader-election=false \
    --metrics-addr=0 --health-addr=0 --web-server-port=0 --log-encoding=console \
    >>"$1" 2>&1 &
  e2e_operator_pid=$!
}
e2e_operator_stop() {
  stop_process "$e2e_operator_pid"
  e2e_operator_pid=
}

# e2e_needs WHAT COMMAND...: a prerequisite built or started by COMMAND (the
# real Flux controllers, the flux CLI): its exit 77 is a skip (skip_test),
# another failure aborts the suite, the end of COMMAND's stderr shown.
e2e_needs() {
  local what=$1 status=0
  shift
  "$@" 2>"$work/needs.err" || status=$?
  [ "$status" != 77 ] || skip_test "$(tail -n 1 "$work/needs.err")"
  [ "$status" = 0 ] || { sed 's/^/  | /' "$work/needs.err" | tail -n 20; abort "$what: exit $status"; }
}

# gone RESOURCE/NAME...: kubectl says NotFound for each (namespaced ones in
# $ns) within 5 minutes. Polled: `kubectl wait --for=delete` gives up at once
# when discovery fails, as it can while CRDs are being deleted.
absent() {
  ! k -n "$ns" get "$1" >/dev/null 2>"$work/absent.err" && grep -q NotFound "$work/absent.err"
}
gone() {
  local object
  for object; do
    wait_until 300 absent "$object" ||
      { echo "$object still exists, or cannot be read: $(head -n 1 "$work/absent.err")"; return 1; }
  done
}

# ---------------------------------------------------------------------------
# fluxopctl and kubectl

# k: one kubectl request. kwait SECONDS ARGS...: a kubectl wait, rollout or
# delete given --timeout=SECONDS, within a hard limit a minute longer.
k() { timeout -k 5 90 kubectl --request-timeout=30s "$@"; }
kwait() {
  local limit=$1
  shift
  timeout -k 5 $((limit + 60)) kubectl --request-timeout=30s "$@" --timeout="${limit}s"
}

# fx NAME ARGS...: runs fluxopctl (with a cache of the test's own), stdout in
# $work/NAME.out, stderr in $work/NAME.err, the exit code in $rc (124 when
# it overran $run_limit).
rc=0
fx() {
  local name=$1
  shift
  rc=0
  XDG_CACHE_HOME=$work/cache timeout -k 5 "$run_limit" "$bin" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  show "$work/$name.err"
}
common_flags() { printf '%s\n' --kubeconfig "$KUBECONFIG" --distribution-artifact "$dist"; }
# apply NAME FILE [FLAGS...]
apply() {
  local name=$1 file=$2
  shift 2
  local flags
  mapfile -t flags < <(common_flags)
  fx "$name" apply "$file" "${flags[@]}" --timeout "${apply_timeout:-3m}" "$@"
}

# render NAME FILE: fluxopctl build of FILE into $work/NAME.yaml, its
# revision into $work/NAME.revision, the upstream rendering into
# $work/NAME.upstream.yaml. A rendering that fails is a failure of the test.
render() {
  XDG_CACHE_HOME=$work/cache timeout -k 5 300 "$bin" build --operator "$2" -v --distribution-artifact "$dist" \
    >"$work/$1.yaml" 2>"$work/$1.build.err" || {
    show "$work/$1.build.err"
    fail "render $1" "fluxopctl build $(basename "$2") failed"
    return 1
  }
  sed -n 's/^revision: //p' "$work/$1.build.err" >"$work/$1.revision"
  e2e_upstream_render "$2" "$work/$1.upstream.yaml" 2>"$work/$1.upstream.why" || {
    fail "render $1" "$(cat "$work/$1.upstream.why")"
    return 1
  }
}

# One line per object: "<namespace>_<name>_<group>_<kind> <resourceVersion>",
# the inventory's id format.
listing='{range .items[*]}{.metadata.namespace}|{.metadata.name}|{.apiVersion}|{.kind}|{.metadata.resourceVersion}{"\n"}{end}'
to_ids() {
  awk -F'|' 'NF >= 5 { g = $3; if (index(g, "/")) sub(/\/.*/, "", g); else g = ""; print $1 "_" $2 "_" g "_" $4 " " $5 }'
}
# live FILE: the live objects a rendered FILE names, "id resourceVersion",
# sorted; fails (naming them) when some do not exist.
live() {
  local out
  out=$(k get -f "$1" -o jsonpath="$listing" 2>"$work/live.err") || {
    grep -i 'not found\|error' "$work/live.err" | head -n 5 >&2
    echo "$out" | to_ids | sort
    return 1
  }
  echo "$out" | to_ids | sort
}
fi_get() { k -n "$ns" get fluxinstance flux -o jsonpath="$1" 2>&1; }
inventory() {
  k -n "$ns" get fluxinstance flux -o jsonpath='{range .status.inventory.entries[*]}{.id}{"\n"}{end}' | sort
}
images() { grep -o 'image: .*' "$1" | sed 's/^image: //' | sort; }
deployments() { awk '/^kind: Deployment$/ { d = 1 } /^---/ { d = 0 } d && /^  name: / { print $2 }' "$1"; }
live_images() {
  k -n "$ns" get deployments -o jsonpath='{range .items[*]}{.spec.template.spec.containers[*].image}{"\n"}{end}' | sort
}
running() { kill -0 "$1" 2>/dev/null; }
nodes() { k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }
# cordon / uncordon every node: new pods cannot be scheduled, an apply that
# changes a pod template waits for its rollout.
cordon() { nodes | xargs timeout -k 5 60 kubectl cordon >/dev/null; }
uncordon() { nodes | xargs timeout -k 5 60 kubectl uncordon >/dev/null; }
# storage_class NAME: a StorageClass no provisioner serves (its
# PersistentVolumeClaims stay Pending), for an instance's .spec.storage.class:
# apply refuses one the cluster lacks.
storage_class() {
  k apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $1
provisioner: example.com/none
EOF
}
# install FILE [FLAGS...]: FILE applied, exit 0, from whatever the cluster
# holds: a newer Flux, which apply refuses to downgrade, is deleted first
# (fluxopctl delete). Prints why it fails.
install() {
  local name
  name=install-$(basename "$1" .yaml)
  apply "$name" "$@"
  if [ "$rc" = 1 ] && grep -q 'downgrading from .* is not supported' "$work/$name.err"; then
    fx "$name-delete" delete -n "$ns" --kubeconfig "$KUBECONFIG" --timeout 3m --yes
    [ "$rc" = 0 ] || { echo "deleting the newer Flux exits $rc: $(tail -n 1 "$work/$name-delete.err")"; return 1; }
    apply "$name" "$@"
  fi
  [ "$rc" = 0 ] || { echo "apply $(basename "$1") exits $rc: $(tail -n 1 "$work/$name.err")"; return 1; }
}

# ---------------------------------------------------------------------------
# The checks a case makes of a run (fx's NAME) and of the cluster; each
# prints why it fails.

# given NAME FUNCTION ARGS...: a case's precondition, reported as check
# reports (the reason from FUNCTION's first line of output); FUNCTION runs
# in this shell, so that what it sets (a variable, a process) stays.
given() {
  local name=$1
  shift
  if "$@" >"$work/given.out" 2>&1; then
    pass "$name"
  else
    fail "$name" "$(head -n 1 "$work/given.out")"
    return 1
  fi
}
# exit_is CODE [NAME]: the last fx (NAME) exited CODE; the reason it did
# not ends with the last line of its stderr.
exit_is() {
  [ "$rc" = "$1" ] || { echo "exit $rc, not $1${2:+: $(tail -n 1 "$work/$2.err")}"; return 1; }
}
# usage_error NAME WORD: the fx NAME was refused as usage: exit 2, nothing
# on stdout, stderr one error line naming WORD.
usage_error() {
  [ "$rc" = 2 ] || { echo "exit $rc, not 2"; return 1; }
  [ ! -s "$work/$1.out" ] || { echo "stdout is not empty"; return 1; }
  grep -qF -- "$2" "$work/$1.err" || { echo "stderr does not name $2: $(head -n 1 "$work/$1.err")"; return 1; }
  [ "$(wc -l <"$work/$1.err")" = 1 ] && grep -q '^error: ' "$work/$1.err" ||
    { echo "stderr is not one error line:"; cat "$work/$1.err"; return 1; }
}
# lines_match FILE REGEX...: each REGEX matches a line of FILE; out_has /
# err_has NAME REGEX...: of $work/NAME.out / .err.
lines_match() {
  local file=$1 re
  shift
  for re; do
    grep -Eq -- "$re" "$file" || { echo "${file##*/} has no line matching '$re':"; head -n 20 "$file"; return 1; }
  done
}
out_has() { lines_match "$work/$1.out" "${@:2}"; }
err_has() { lines_match "$work/$1.err" "${@:2}"; }
stdout_empty() {  # NAME
  [ ! -s "$work/$1.out" ] || { echo "stdout is not empty:"; head -n 5 "$work/$1.out"; return 1; }
}
# exists ARGS...: kubectl get ARGS finds it.
exists() { k get "$@" -o name >/dev/null 2>&1; }
# ready_is STATUS REASON: the FluxInstance's Ready condition.
ready_is() {
  local got
  got=$(fi_get '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}')
  [ "$got" = "$1 $2" ] || { echo "Ready is '$got', not '$1 $2'"; return 1; }
}
ready_message() { fi_get '{.status.conditions[?(@.type=="Ready")].message}'; }
# ready_current [STATUS REASON]: Ready for the instance's current generation,
# with STATUS and REASON (by default: True, whatever the reason).
ready_current() {
  local got observed
  got=$(fi_get '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}')
  if [ $# = 2 ]; then
    [ "$got" = "$1 $2" ] || { echo "Ready is '$got', not '$1 $2'"; return 1; }
  else
    [ "${got%% *}" = True ] || { echo "Ready is '$got', not True"; return 1; }
  fi
  observed=$(fi_get '{.status.conditions[?(@.type=="Ready")].observedGeneration}')
  [ "$observed" = "$(fi_get '{.metadata.generation}')" ] ||
    { echo "Ready for generation $observed, not $(fi_get '{.metadata.generation}')"; return 1; }
}
instance_version() { fi_get '{.metadata.resourceVersion}'; }
# events REASON: "TYPE MESSAGE" of each of the instance's Events with REASON.
events() {
  k -n "$ns" get events --field-selector "involvedObject.kind=FluxInstance,involvedObject.name=flux,reason=$1" \
    -o jsonpath='{range .items[*]}{.type} {.message}{"\n"}{end}'
}
# logged PATTERN: a line of $log (a daemon's log) matches.
logged() { grep -q -- "$1" "$log"; }

# The daemon. start_daemon NAME ARGS...: `fluxopctl apply --watch ARGS` in
# the background ($daemon) against $KUBECONFIG, with --timeout
# $apply_timeout (3m) and free metrics and health ports ($metrics_port,
# $health_port); its stdout in $work/NAME.out, its log in $work/NAME.log
# ($log). stop_daemon [SIGNAL [SECONDS]]: SIGNAL (TERM) sent, its exit
# waited for SECONDS (30), then SIGKILL; its exit in $stop_status,
# $stop_late saying it needed the SIGKILL (stopped_cleanly checks both);
# nothing when no daemon runs. Not within check: only this shell can wait
# for its child.
start_daemon() {
  local name=$1
  shift
  metrics_port=$(registry_free_port)
  health_port=$(registry_free_port)
  log=$work/$name.log
  XDG_CACHE_HOME=$work/cache "$bin" apply --watch "$@" --kubeconfig "$KUBECONFIG" \
    --metrics-addr "127.0.0.1:$metrics_port" --health-addr "127.0.0.1:$health_port" \
    --timeout "${apply_timeout:-3m}" >"$work/$name.out" 2>"$log" &
  daemon=$!
  show "$log"
}
stop_daemon() {
  local signal=${1:-TERM} bound=${2:-30}
  stop_status=0 stop_late=
  [ -n "${daemon:-}" ] || return 0
  kill -"$signal" "$daemon" 2>/dev/null
  wait_until "$bound" eval '! running "$daemon"' ||
    { stop_late="still running $bound s after SIG$signal"; kill -9 "$daemon" 2>/dev/null; }
  wait "$daemon" 2>/dev/null || stop_status=$?
  daemon=
}
stopped_cleanly() {
  [ -z "$stop_late" ] || { echo "$stop_late"; return 1; }
  [ "$stop_status" = 0 ] || { echo "exit $stop_status"; return 1; }
}

# The Lease: micro_time DATE (as `date -d` reads it) in the Lease's format;
# set_lease NAME HOLDER RENEWED DURATION writes the Lease NAME in $ns as
# kubectl would (RENEWED's time in $lease_renewed, kubectl's stderr in
# $work/lease.err); lease_get JSONPATH / lease_holder read $lease.
micro_time() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S.000000Z; }
set_lease() {
  lease_renewed=$(micro_time "$3")
  k apply --server-side --force-conflicts -f - >"$work/lease.err" 2>&1 <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: $1, namespace: $ns}
spec:
  holderIdentity: "$2"
  leaseDurationSeconds: $4
  acquireTime: $lease_renewed
  renewTime: $lease_renewed
YAML
}
lease_get() { k -n "$ns" get lease "$lease" -o jsonpath="$1" 2>/dev/null; }
lease_holder() { lease_get '{.spec.holderIdentity}'; }

# state_is NAME FILE: the cluster holds exactly what $work/NAME.yaml renders:
# every object exists, the inventory lists them and nothing else, every
# Deployment is rolled out and Available, the FluxInstance is Ready for its
# current generation, has the file's version, and its status the build's
# revision and images; and what upstream renders for FILE is what is live
# (matches_upstream).
state_is() {
  local rendered=$work/$1.yaml file=$2 ids inv d why=
  ids=$(live "$rendered" 2>"$work/state.err") || {
    echo "rendered objects missing:"
    sed 's/.*(NotFound): \(.*\) not found$/\1/' "$work/state.err"
    return 1
  }
  inv=$(inventory) || { echo "no FluxInstance flux in $ns"; return 1; }
  if [ "$(cut -d' ' -f1 <<<"$ids")" != "$inv" ]; then
    echo "the inventory is not the rendered objects (< rendered, > inventory):"
    diff <(cut -d' ' -f1 <<<"$ids") <(echo "$inv") | grep '^[<>]' | head -n 10
    return 1
  fi
  for d in $(deployments "$rendered"); do
    kwait 180 -n "$ns" rollout status "deployment/$d" >/dev/null 2>&1 ||
      why+="deployment/$d not rolled out; "
    [ "$(k -n "$ns" get deployment "$d" -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ] ||
      why+="deployment/$d not Available; "
  done
  [ -z "$why" ] || { echo "$why"; return 1; }
  instance_ready "$file" || return 1
  as_built "$1" || return 1
  matches_upstream "$1"
}
# matches_upstream NAME: the objects upstream renders (kind, namespace, name)
# all exist and are the inventory, nothing more; the Deployments in $ns run
# the images upstream renders; and the cluster holds those objects as
# upstream renders them: a server-side dry run of upstream's rendering, by
# the field manager fluxopctl applies with, would change nothing.
matches_upstream() {
  local upstream_rendered=$work/$1.upstream.yaml ids inv
  ids=$(live "$upstream_rendered" 2>"$work/state.err") || {
    echo "objects upstream renders are missing:"
    sed 's/.*(NotFound): \(.*\) not found$/\1/' "$work/state.err"
    return 1
  }
  inv=$(inventory)
  if [ "$(cut -d' ' -f1 <<<"$ids")" != "$inv" ]; then
    echo "the inventory is not what upstream renders (< upstream, > inventory):"
    diff <(cut -d' ' -f1 <<<"$ids") <(echo "$inv") | grep '^[<>]' | head -n 10
    return 1
  fi
  [ "$(live_images)" = "$(images "$upstream_rendered")" ] ||
    { echo "the Deployments run $(live_images | tr '\n' ' '), upstream renders $(images "$upstream_rendered" | tr '\n' ' ')"; return 1; }
  local status=0
  timeout -k 5 300 kubectl --request-timeout=60s diff --server-side --force-conflicts \
    --field-manager=flux-operator -f "$upstream_rendered" >"$work/upstream.diff" 2>&1 || status=$?
  [ "$status" = 0 ] || {
    echo "applying upstream's rendering would change the cluster (kubectl diff exit $status):"
    grep -E '^[-+] |rror' "$work/upstream.diff" | head -n 12
    return 1
  }
}
# as_built NAME: the FluxInstance's status has the revision and the
# component images of `fluxopctl build` of the same file.
as_built() {
  local applied components
  applied=$(fi_get '{.status.lastAppliedRevision}')
  [ "$applied" = "$(cat "$work/$1.revision")" ] ||
    { echo "lastAppliedRevision '$applied', fluxopctl build -v says '$(cat "$work/$1.revision")'"; return 1; }
  # repository:tag@digest, and "@" closing an image without a digest.
  components=$(fi_get '{range .status.components[*]}{.repository}:{.tag}@{.digest}{"\n"}{end}' | sort)
  [ "$components" = "$(images "$work/$1.yaml" | sed '/@/!s/$/@/')" ] ||
    { echo ".status.components are $(echo "$components" | tr '\n' ' '), not the rendered images"; return 1; }
}
instance_ready() {
  local ready gen obs version want
  ready=$(fi_get '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}')
  [ "${ready%% *}" = True ] || { echo "FluxInstance Ready is '$ready', not True"; return 1; }
  gen=$(fi_get '{.metadata.generation}')
  obs=$(fi_get '{.status.conditions[?(@.type=="Ready")].observedGeneration}')
  [ "$gen" = "$obs" ] || { echo "FluxInstance Ready for generation $obs, generation $gen"; return 1; }
  version=$(fi_get '{.spec.distribution.version}')
  want=$(sed -n 's/^ *version: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$1" | head -n 1)
  [ "$version" = "$want" ] || { echo "FluxInstance .spec.distribution.version is '$version', not '$want'"; return 1; }
}

# The screenshots the browser checks keep: beside the binary tested
# (build/test-artifacts), or where E2E_ARTIFACTS says.
e2e_artifacts() { echo "${E2E_ARTIFACTS:-$(dirname "$bin")/test-artifacts}"; }

e2e_browse() {
  local name=$1 url=$2 artifacts
  artifacts=$(e2e_artifacts)
  mkdir -p "$artifacts"
  # As root (CI) chromium needs --no-sandbox; its profile is the test's own.
  local browser=(timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --no-first-run
    --disable-extensions --user-data-dir="$work/chromium-$name" --window-size=1280,1400
    --enable-logging=stderr --v=0)
  "${browser[@]}" --dump-dom "$url" >"$work/$name.dom" 2>"$work/$name.browser.err" || return 1
  "${browser[@]}" --screenshot="$artifacts/$name.png" "$url" >/dev/null 2>>"$work/$name.browser.err" || return 1
  grep -F 'CONSOLE' "$work/$name.browser.err" >"$work/$name.console" || true
}

# e2e_require BIN DIST: what a suite needs before it starts: the binary (or
# abort), kubectl and the distribution (or skip).
e2e_require() {
  [ -x "$1" ] || abort "no fluxopctl at $1"
  command -v kubectl >/dev/null || skip_test "kubectl is not installed"
  [ -d "$2/flux" ] || skip_test "no Flux distribution at $2"
}

# e2e_suite BIN: the start of every suite (the header above).
e2e_suite() {
  bin=$(realpath "$1") || abort "no fluxopctl at $1"
  dist=${FLUXOPCTL_DISTRIBUTION_ARTIFACT:-$root/../shared/flux-distribution}
  work=$(mktemp -d)
  on_exit e2e_cleanup
  e2e_require "$bin" "$dist"
}

e2e_select_cases() {
  cases=("$@")
  [ ${#cases[@]} -gt 0 ] || read -r -a cases <<<"${CASES:-}"
  [ ${#cases[@]} -gt 0 ] || cases=("${all_cases[@]}")
  local name
  for name in "${cases[@]}"; do
    [[ " ${all_cases[*]} " == *" $name "* ]] || abort "no case $name (cases: ${all_cases[*]})"
  done
}
e2e_run_cases() {
  local name case_started
  for name in "${cases[@]}"; do
    case_started=$SECONDS
    "case_$name"
    echo "# $name took $((SECONDS - case_started))s"
  done
}
