# Sourced by test scripts: a throwaway OCI registry on loopback (Debian's
# docker-registry run as a plain process, not as the system service) and a
# push of a directory as a Flux content artifact, laid out as `flux push
# artifact` lays out ghcr.io/controlplaneio-fluxcd/flux-operator-manifests.
#
#   registry_start WORKDIR      sets REGISTRY_ADDR (127.0.0.1:PORT), REGISTRY_PID
#   registry_stop               kills the process registry_start started
#   registry_push_artifact REPO:TAG DIR ENTRY...
#                               pushes DIR's ENTRY... (e.g. flux flux-images)
#                               as one tar+gzip layer; prints the manifest digest

registry_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

registry_ensure_installed() {
  command -v docker-registry >/dev/null && return 0
  echo "installing the Debian package docker-registry" >&2
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo -n)
  # The package's service must not start: only our own process runs it.
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    docker-registry >/dev/null 2>&1 || return 1
  command -v docker-registry >/dev/null
}

registry_start() {
  local dir=$1 port attempt
  mkdir -p "$dir/storage"
  for attempt in 1 2 3; do
    port=$(registry_free_port) || return 1
    cat >"$dir/config.yml" <<CONFIG
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/storage
http:
  addr: 127.0.0.1:$port
CONFIG
    docker-registry serve "$dir/config.yml" >"$dir/registry.log" 2>&1 &
    REGISTRY_PID=$!
    REGISTRY_ADDR=127.0.0.1:$port
    local tries
    for tries in $(seq 50); do
      curl -fs -o /dev/null "http://$REGISTRY_ADDR/v2/" && return 0
      kill -0 "$REGISTRY_PID" 2>/dev/null || break
      sleep 0.1
    done
    registry_stop
  done
  echo "docker-registry did not start: $(tail -1 "$dir/registry.log")" >&2
  return 1
}

registry_stop() {
  if [ -n "${REGISTRY_PID:-}" ]; then
    kill "$REGISTRY_PID" 2>/dev/null
    wait "$REGISTRY_PID" 2>/dev/null
    REGISTRY_PID=
  fi
}

registry_sha256() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }

# POST opens an upload session, PUT closes it with the whole blob.
registry_push_blob() {
  local repo=$1 file=$2 digest location
  digest=$(registry_sha256 "$file")
  location=$(curl -fsS -X POST -o /dev/null -D - "http://$REGISTRY_ADDR/v2/$repo/blobs/uploads/" |
    tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
  [ -n "$location" ] || return 1
  case $location in /*) location=http://$REGISTRY_ADDR$location ;; esac
  case $location in *\?*) location=$location\&digest=$digest ;; *) location=$location\?digest=$digest ;; esac
  curl -fsS -X PUT -o /dev/null -H 'Content-Type: application/octet-stream' \
    --data-binary "@$file" "$location"
}

registry_descriptor() {
  printf '{"mediaType":"%s","digest":"%s","size":%d}' "$1" "$(registry_sha256 "$2")" "$(stat -c %s "$2")"
}

registry_push_artifact() {
  local ref=$1 src=$2
  shift 2
  local repo=${ref%:*} tag=${ref##*:} work
  work=$(mktemp -d) || return 1
  # Like fluxcd/pkg's artifact builder: a root "." entry, then each directory
  # walked in name order, owner 0 without names, timestamps dropped; modes as
  # in a git checkout (the shared data is read-only).
  local tar_flags=(--format=ustar --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name
    --mode=u+w,a+r)
  tar -C "$src" "${tar_flags[@]}" --no-recursion -cf "$work/layer.tar" . &&
    tar -C "$src" "${tar_flags[@]}" -rf "$work/layer.tar" "$@" &&
    gzip -n -c "$work/layer.tar" >"$work/layer.tgz" || { rm -rf "$work"; return 1; }
  printf '{"architecture":"","os":"","rootfs":{"type":"layers","diff_ids":["%s"]},"config":{}}' \
    "$(registry_sha256 "$work/layer.tar")" >"$work/config.json"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":%s,"layers":[%s],"annotations":{"org.opencontainers.image.created":"%s","org.opencontainers.image.description":"Flux Operator","org.opencontainers.image.revision":"local@sha256:%s","org.opencontainers.image.source":"file://%s"}}' \
    "$(registry_descriptor application/vnd.cncf.flux.config.v1+json "$work/config.json")" \
    "$(registry_descriptor application/vnd.cncf.flux.content.v1.tar+gzip "$work/layer.tgz")" \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(sha256sum "$work/layer.tar" | cut -d' ' -f1)" "$src" \
    >"$work/manifest.json"
  registry_push_blob "$repo" "$work/config.json" &&
    registry_push_blob "$repo" "$work/layer.tgz" &&
    curl -fsS -X PUT -o /dev/null -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
      --data-binary "@$work/manifest.json" "http://$REGISTRY_ADDR/v2/$repo/manifests/$tag" &&
    registry_sha256 "$work/manifest.json"
  local status=$?
  rm -rf "$work"
  return $status
}
