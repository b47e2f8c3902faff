# Sourced by end-to-end tests: the real Flux controllers acting on the local
# control plane (scripts/flux-controllers runs them), the sync's artifact in a
# loopback registry pushed with the real flux CLI, and a Helm repository
# served on loopback for helm-controller. See docs/cluster.md.
#
#   flux_controllers_ensure_built [NAME...]
#                         builds the controllers missing (default: all three);
#                         77 without Go, 1 when a build fails
#   flux_controllers_start DIR
#                         the supervisor against $KUBECONFIG, its state in DIR
#                         (logs: DIR/NAME.log, DIR/supervisor.log); the
#                         controllers trust $FLUX_CONTROLLERS_CA_FILE, which
#                         flux_sync_registry_start sets: start the registry
#                         first
#   flux_controllers_stop DIR
#                         the supervisor and every controller it started
#   flux_controller_pid DIR NAME
#                         prints the pid of controller NAME; false when it
#                         does not run
#   flux_controllers_cleanup DIR
#                         what a suite's e2e_cleanup_hook does: the
#                         controllers of DIR stopped (flux_controllers_stop,
#                         its complaints silenced), the Helm repository
#                         stopped (flux_chart_repo_stop)
#
#   flux_sync_registry_start DIR
#                         a registry (docker-registry, scripts/lib/oci-registry.sh)
#                         on 127.0.0.1 over TLS with a throwaway CA, storing in
#                         DIR; sets REGISTRY_ADDR and the other REGISTRY_
#                         variables, exports FLUX_CONTROLLERS_CA_FILE (its CA);
#                         stopped by registry_stop_all (e2e_cleanup)
#   flux_sync_push REPO:TAG DIR
#                         `flux push artifact` of DIR to the current registry
#                         (the flux CLI of scripts/lib/flux-cli.sh, built when
#                         missing); prints the digest; the sync's url is then
#                         oci://$REGISTRY_ADDR/REPO, its ref TAG. A registry
#                         of registry_start without --tls is pushed to with
#                         --insecure-registry (the OCIRepository then needs
#                         spec.insecure: true, see docs/cluster.md)
#
#   flux_chart_repo_start DIR
#                         a Helm repository: DIR served over plain HTTP on
#                         127.0.0.1 (python3's http.server); sets
#                         FLUX_CHART_REPO_URL and flux_chart_repo_pid; it dies
#                         with the shell that started it (call it there, not
#                         in $( ))
#   flux_chart_add NAME VERSION [TEMPLATES_DIR]
#                         a chart NAME-VERSION.tgz in the repository (made
#                         with tar), its templates TEMPLATES_DIR's files or
#                         one ConfigMap NAME named after the release, holding
#                         .Values.greeting ("hello"); index.yaml rewritten
#   flux_chart_repo_stop

# shellcheck source=scripts/lib/oci-registry.sh
declare -F registry_start >/dev/null || source "$(dirname "${BASH_SOURCE[0]}")/oci-registry.sh"
# shellcheck source=scripts/lib/flux-cli.sh
source "$(dirname "${BASH_SOURCE[0]}")/flux-cli.sh"

flux_controllers_command=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/flux-controllers
# The flux CLI that pushes: the one Flux release of the controllers.
flux_controllers_flux_version=v2.9.4

flux_controllers_ensure_built() {
  local status=0
  "$flux_controllers_command" build "$@" || status=$?
  return "$status"
}

flux_controllers_start() { "$flux_controllers_command" start "$1"; }
flux_controllers_stop() { "$flux_controllers_command" stop "$1"; }
flux_controllers_cleanup() {
  flux_controllers_stop "$1" 2>/dev/null
  flux_chart_repo_stop
}

flux_controller_pid() {
  local pid exe
  pid=$(cat "$1/$2.pid" 2>/dev/null) && [ -n "$pid" ] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [ "${exe##*/}" = "$2" ] || return 1
  echo "$pid"
}

flux_sync_registry_start() {
  registry_ensure_installed || { echo "the Debian package docker-registry is not installed and could not be" >&2; return 1; }
  registry_start "$1" --tls 127.0.0.1 || return 1
  # Go reads SSL_CERT_FILE in place of the system's CAs: the supervisor
  # gives the controllers a bundle of both.
  export FLUX_CONTROLLERS_CA_FILE=$REGISTRY_CA
}

flux_sync_push() {
  local ref=$1 dir=$2 flux out revision
  flux=$(flux_cli "$flux_controllers_flux_version")
  flux_cli_ensure_built "$flux_controllers_flux_version" || return
  # The revision a Git source would give: TAG@sha1:<the content's hash>.
  revision=${ref##*:}@sha1:$(tar -C "$dir" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - . |
    sha1sum | cut -d' ' -f1)
  # A HOME of its own (the CLI's own files); the registry's CA, or plain
  # HTTP for a registry without TLS.
  local home status=0 environment=() flags=()
  home=$(mktemp -d) || return 1
  environment=(HOME="$home")
  [ -z "${REGISTRY_CA:-}" ] || environment+=(SSL_CERT_FILE="$REGISTRY_CA")
  [[ ${REGISTRY_URL:-} != http://* ]] || flags+=(--insecure-registry)
  out=$(env "${environment[@]}" timeout -k 5 120 "$flux" push artifact "oci://$REGISTRY_ADDR/$ref" \
    --path "$dir" --source "file://$dir" --revision "$revision" -o json "${flags[@]}" 2>&1) || status=$?
  rm -rf "$home"
  [ "$status" = 0 ] || { echo "flux push artifact oci://$REGISTRY_ADDR/$ref failed: $out" >&2; return 1; }
  # -o json: {"digest": ..., "repository": ..., "tag": ...} (on stderr).
  local digest
  digest=$(sed -n 's/^ *"digest": *"\(sha256:[0-9a-f]\{64\}\)".*/\1/p' <<<"$out" | head -n 1)
  [ -n "$digest" ] || { echo "flux push artifact printed no digest: $out" >&2; return 1; }
  echo "$digest"
}

flux_chart_repo_start() {
  local dir port deadline _
  mkdir -p "$1" && dir=$(cd "$1" && pwd) || return 1
  for _ in 1 2 3; do
    port=$(registry_free_port) || return 1
    setpriv --pdeathsig TERM python3 -m http.server "$port" --bind 127.0.0.1 --directory "$dir" \
      >"$dir/.server.log" 2>&1 &
    flux_chart_repo_pid=$!
    FLUX_CHART_REPO_URL=http://127.0.0.1:$port
    flux_chart_repo_dir=$dir
    deadline=$((SECONDS + 30))
    while [ "$SECONDS" -lt "$deadline" ] && kill -0 "$flux_chart_repo_pid" 2>/dev/null; do
      curl -fsS --max-time 2 -o /dev/null "$FLUX_CHART_REPO_URL/" 2>/dev/null && return 0
      sleep 0.1
    done
    flux_chart_repo_stop
  done
  echo "the Helm repository's server did not start: $(tail -n 1 "$dir/.server.log")" >&2
  return 1
}

flux_chart_repo_stop() {
  [ -n "${flux_chart_repo_pid:-}" ] || return 0
  stop_process "$flux_chart_repo_pid"
  flux_chart_repo_pid=
}

flux_chart_add() {
  local name=$1 version=$2 templates=${3:-} dir=${flux_chart_repo_dir:?flux_chart_repo_start first} work digest
  work=$(mktemp -d) || return 1
  mkdir -p "$work/$name/templates" "$dir/index.d"
  printf 'apiVersion: v2\nname: %s\nversion: %s\ndescription: a chart of the e2e tests\ntype: application\n' \
    "$name" "$version" >"$work/$name/Chart.yaml"
  printf 'greeting: hello\n' >"$work/$name/values.yaml"
  if [ -n "$templates" ]; then
    cp "$templates"/* "$work/$name/templates/"
  else
    cat >"$work/$name/templates/configmap.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  greeting: {{ .Values.greeting | quote }}
  chart: {{ .Chart.Name }}-{{ .Chart.Version }}
YAML
  fi
  tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner -czf "$dir/$name-$version.tgz" "$name" ||
    { rm -rf "$work"; return 1; }
  rm -rf "$work"
  digest=$(sha256sum "$dir/$name-$version.tgz" | cut -d' ' -f1)
  printf '  - apiVersion: v2\n    name: %s\n    version: %s\n    type: application\n    created: "%s"\n    digest: %s\n    urls:\n    - %s/%s-%s.tgz\n' \
    "$name" "$version" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$digest" "$FLUX_CHART_REPO_URL" "$name" "$version" \
    >"$dir/index.d/$name@$version"
  # index.yaml: every chart added, grouped by name; written whole, then
  # renamed (the server never serves half of it).
  local entry chart last=
  {
    echo "apiVersion: v1"
    echo "entries:"
    for entry in "$dir"/index.d/*; do
      chart=${entry##*/}
      chart=${chart%@*}
      [ "$chart" = "$last" ] || echo "  $chart:"
      last=$chart
      cat "$entry"
    done
    echo "generated: \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  } >"$dir/.index.yaml" && mv "$dir/.index.yaml" "$dir/index.yaml"
}
