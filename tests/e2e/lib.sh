# Sourced by the end-to-end tests: a local control plane (scripts/cluster) of
# the test's own, in a state directory the test chooses.
#
#   e2e_cluster_up DIR    brings it up in DIR and sets KUBECONFIG; exits 77
#                         (with the reason) when it cannot be built here, 1
#                         (with its log) when it fails to start
#   e2e_cluster_down      stops it and removes DIR

e2e_cluster_up() {
  export FLUXOPCTL_CLUSTER_DIR=$1
  local up status=0
  up=$("$root/scripts/cluster" up 2>"$FLUXOPCTL_CLUSTER_DIR.up.err") || status=$?
  if [ "$status" != 0 ]; then
    [ "$status" = 77 ] && { echo "skipped: $(tail -1 "$FLUXOPCTL_CLUSTER_DIR.up.err")" >&2; exit 77; }
    sed 's/^/  | /' "$FLUXOPCTL_CLUSTER_DIR.up.err" >&2
    echo "FAIL scripts/cluster up (exit $status)"
    exit 1
  fi
  eval "$up"
  e2e_cluster_started=1
}

# Only what e2e_cluster_up started: never a cluster $FLUXOPCTL_CLUSTER_DIR
# named before.
e2e_cluster_down() {
  [ "${e2e_cluster_started:-0}" = 1 ] || return 0
  "$root/scripts/cluster" down >/dev/null 2>&1
  rm -f "$FLUXOPCTL_CLUSTER_DIR.up.err"
  e2e_cluster_started=0
}
