# push writes no temporary files: after a push, a failed push, SIGINT or
# SIGTERM mid-upload.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

push_tmp=$work/push-tmp
fresh_push_tmp() { rm -rf "$push_tmp" && mkdir "$push_tmp"; }
# push_tmp_empty LABEL: nothing was left in $push_tmp, the push's TMPDIR.
push_tmp_empty() {
  local left
  left=$(find "$push_tmp" -mindepth 1 -maxdepth 1 | head -3 | tr '\n' ' ')
  [ -z "$left" ] || because "$1: left $left in TMPDIR"
}

t_push_tmp() {
  local how=$1
  fresh_push_tmp
  case $how in
    pushed)
      run env TMPDIR="$push_tmp" "$bin" push "$mini" "oci://$main/no-tmp:v1"
      succeeded push || return 1 ;;
    failed)
      run env TMPDIR="$push_tmp" "$bin" push "$mini" "oci://127.0.0.1:$(registry_free_port)/no-tmp:v1"
      one_line_error "push to a registry that is not there" 'connect|refused' || return 1 ;;
  esac
  push_tmp_empty "push $how"
}

# t_push_stopped SIGNAL: a push killed by SIGNAL while the registry holds its
# first upload unanswered.
t_push_stopped() {
  local signal=$1 pid deadline
  fresh_push_tmp
  start_faults --upstream "$main_REGISTRY_URL" --hold-match '/(blobs/uploads|manifests)/' ||
    { because "http_faults.py did not start"; return 1; }
  # Through timeout, which passes the signal on: a background job of this
  # shell would ignore SIGINT.
  env TMPDIR="$push_tmp" timeout -k 5 "$cmd_timeout" "$bin" push "$mini" \
    "oci://127.0.0.1:$faults_port/stopped-${signal,,}:v1" >"$work/out" 2>"$work/err" &
  pid=$!
  deadline=$((SECONDS + cmd_timeout))
  until grep -q ' held$' "$faults_log" || [ $SECONDS -ge $deadline ] || ! kill -0 "$pid" 2>/dev/null; do
    sleep 0.1
  done
  kill -s "$signal" "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  stop_helper "$faults_pid"
  grep -q ' held$' "$faults_log" || { because "the push never started an upload: exit $rc: $(first_err)"; return 1; }
  [ $rc -eq $((128 + $(kill -l "$signal"))) ] || { because "push exit $rc, want death by SIG$signal"; return 1; }
  push_tmp_empty "push stopped by SIG$signal"
}

tcase "push: nothing left in TMPDIR after a push" t_push_tmp pushed
tcase "push: nothing left in TMPDIR after a failed push" t_push_tmp failed
tcase "push: nothing left in TMPDIR after SIGINT mid-upload" t_push_stopped INT
tcase "push: nothing left in TMPDIR after SIGTERM mid-upload" t_push_stopped TERM
