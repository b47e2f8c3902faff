# Sourced by test scripts: a throwaway OCI registry on loopback (Debian's
# docker-registry run as a plain process, not as the system service; or CNCF
# distribution v3's, built once from the Go module proxy, where a test needs
# what docker-registry 2.8 refuses) and a push of a directory as a Flux
# content artifact, laid out as `flux push artifact` lays out
# ghcr.io/controlplaneio-fluxcd/flux-operator-manifests.
#
#   registry_v3_ensure_built    builds distribution $registry_v3_version's
#                               registry into $registry_v3 when missing;
#                               returns 77 without Go, 1 when the build fails
#                               (saying which on stderr)
#
#   registry_referrers_ensure_built
#                               the same for $registry_referrers (--referrers)
#
#   registry_start WORKDIR [OPTION...]
#                               starts a registry storing under WORKDIR/storage;
#                               sets REGISTRY_ADDR (127.0.0.1:PORT, or HOST:PORT
#                               with --tls/--host), REGISTRY_URL (http[s]://ADDR),
#                               REGISTRY_PID, REGISTRY_DIR, REGISTRY_STORAGE,
#                               REGISTRY_CA (with --tls), REGISTRY_LOG,
#                               REGISTRY_CLIENT_CERT/KEY (with --client-auth).
#                               Options:
#     --htpasswd USER:PASSWORD  basic auth (a bcrypt htpasswd file); the pushes
#                               below use these credentials
#     --tls HOST                HTTPS with a throwaway CA (REGISTRY_CA, PEM) and
#                               a server certificate for HOST and 127.0.0.1;
#                               still listens on 127.0.0.1 only
#     --client-auth             with --tls: clients must present a certificate
#                               signed by a throwaway client CA; one is made
#                               (REGISTRY_CLIENT_CERT, REGISTRY_CLIENT_KEY,
#                               PEM), which registry_curl uses
#     --host HOST               name the registry HOST:PORT (plain HTTP)
#     --token REALM SERVICE ISSUER ROOTCERTBUNDLE
#                               auth.token: clients get tokens from REALM
#     --credentials USER:PASSWORD
#                               what the pushes use with --token (basic
#                               credentials the token service accepts)
#     --access-log              the registry's access log in REGISTRY_LOG
#     --sparse-index OS/ARCH[,...]
#                               distribution v3's registry (registry_v3_ensure_built
#                               first), which accepts an index whose children
#                               are not all there: only those of these
#                               platforms must be (a mirror --platform's)
#     --distribution-v3         distribution v3's registry (registry_v3_ensure_built
#                               first), as it is: no referrers API, so that a
#                               client keeps the referrers tag schema
#     --referrers               go-containerregistry's registry, which serves
#                               the referrers API (registry_referrers_ensure_built
#                               first); in memory, plain HTTP, no auth
#                               The registry dies with the shell that started it
#                               (a parent-death signal, even when that shell is
#                               SIGKILLed); call registry_start in that shell,
#                               never in $( ). With $REGISTRY_LIFETIME (seconds)
#                               set, it also exits by itself after that long.
#                               It must answer within $REGISTRY_START_TIMEOUT
#                               seconds (60).
#   registry_stop               kills the current registry (the last started
#                               or selected one)
#   registry_stop_all           kills every registry registry_start started
#   registry_save NAME          keeps the current registry's variables as NAME
#   registry_use NAME           makes the registry saved as NAME current again
#   registry_push_artifact REPO:TAG DIR ENTRY...
#                               pushes DIR's ENTRY... (e.g. flux flux-images)
#                               as one tar+gzip layer; prints the manifest digest
#   registry_push_layer REPO:TAG FILE [SOURCE]
#                               pushes FILE as the artifact's only layer (any
#                               bytes: a hand-made, even malicious, tarball);
#                               prints the manifest digest
#   registry_layer_digest REPO:TAG
#                               prints the digest of the artifact's first layer
#   registry_blob_path DIGEST   prints the file in the registry's storage that
#                               holds the blob (to corrupt it)
#   registry_curl REPO CURL-ARG...
#                               curl with the current registry's CA and
#                               credentials (a bearer token for REPO with --token)

# shellcheck source=scripts/lib/go-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-install.sh"

REGISTRY_VARS=(REGISTRY_ADDR REGISTRY_URL REGISTRY_PID REGISTRY_DIR REGISTRY_STORAGE REGISTRY_CA
  REGISTRY_CLIENT_CERT REGISTRY_CLIENT_KEY REGISTRY_LOG REGISTRY_AUTH REGISTRY_CREDENTIALS REGISTRY_TOKEN_REALM REGISTRY_TOKEN_SERVICE)
REGISTRY_ALL_PIDS=()

# distribution v3 (Debian has only docker-registry 2.8, which refuses an index
# whose children are not all in the repository). FLUXOPCTL_TEST_CACHE: as in
# scripts/cluster; read when this file is sourced, so that a test's own HOME
# or XDG_CACHE_HOME does not hide the binary.
registry_v3_version=v3.0.0
registry_v3=${FLUXOPCTL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluxopctl-test}/bin/registry-distribution-$registry_v3_version

# Through a wrapper module whose command links only the filesystem storage and
# htpasswd and token auth: the published cmd/registry also links the S3, GCS
# and Azure drivers, whose SDKs are most of its download and build (1.2 GB of
# modules, against 318 MB). With cold module and build caches, 1.8 CPU-minutes
# (11 min at nice 10 on a 2-core machine three other builds kept busy).
registry_v3_ensure_built() {
  go_build_program "$registry_v3" "distribution $registry_v3_version's registry" \
    github.com/distribution/distribution/v3 "$registry_v3_version" <<'GO'
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/auth/token"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() { _ = registry.RootCmd.Execute() }
GO
}

# A registry that serves the OCI 1.1 referrers API (GET /v2/NAME/referrers/
# DIGEST), which neither docker-registry nor distribution v3.0.0 does:
# go-containerregistry's pkg/registry, in memory, on the address it is given.
registry_referrers_version=v0.21.7
registry_referrers=${FLUXOPCTL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluxopctl-test}/bin/registry-referrers-ggcr-$registry_referrers_version

registry_referrers_ensure_built() {
  go_build_program "$registry_referrers" "go-containerregistry $registry_referrers_version's registry" \
    github.com/google/go-containerregistry "$registry_referrers_version" <<'GO'
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: registry-referrers HOST:PORT")
		os.Exit(2)
	}
	handler := registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0)))
	log.Fatal(http.ListenAndServe(os.Args[1], handler))
}
GO
}

registry_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Installs Debian packages without starting their services; root or sudo -n.
registry_apt_install() {
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo -n)
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "$@" >/dev/null 2>&1
}

registry_ensure_installed() {
  command -v docker-registry >/dev/null && return 0
  echo "installing the Debian package docker-registry" >&2
  # The package's service must not start: only our own process runs it.
  registry_apt_install docker-registry || return 1
  command -v docker-registry >/dev/null
}

# htpasswd -B (apache2-utils), else python3-bcrypt.
registry_ensure_htpasswd() {
  command -v htpasswd >/dev/null && return 0
  python3 -c 'import bcrypt' 2>/dev/null && return 0
  echo "installing the Debian package apache2-utils (htpasswd)" >&2
  registry_apt_install apache2-utils || registry_apt_install python3-bcrypt || return 1
  command -v htpasswd >/dev/null || /usr/bin/python3 -c 'import bcrypt' 2>/dev/null
}

# registry_htpasswd USER PASSWORD FILE: one bcrypt entry.
registry_htpasswd() {
  registry_ensure_htpasswd || return 1
  if command -v htpasswd >/dev/null; then
    htpasswd -Bbn "$1" "$2" | grep -v '^$' >"$3"
  else
    local py=python3
    python3 -c 'import bcrypt' 2>/dev/null || py=/usr/bin/python3
    USER_NAME=$1 USER_PASSWORD=$2 "$py" -c 'import bcrypt, os
print(os.environ["USER_NAME"] + ":" + bcrypt.hashpw(os.environ["USER_PASSWORD"].encode(), bcrypt.gensalt(rounds=10)).decode())' >"$3"
  fi
}

# registry_tls_files DIR HOST: DIR/ca.pem (the CA), DIR/server.pem and
# DIR/server.key (a certificate for HOST and 127.0.0.1), with the openssl CLI.
registry_tls_files() {
  local dir=$1 host=$2 san
  case $host in
    *[!0-9.]*) san="DNS:$host,IP:127.0.0.1" ;;
    *) san="IP:$host" ;;
  esac
  [ "$host" = localhost ] || [ "$host" = 127.0.0.1 ] || san+=",DNS:localhost"
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=%s\n' \
    "$san" >"$dir/server.ext"
  registry_issue "$dir" ca "fluxopctl test CA $$" server "$host"
}

# registry_issue DIR CA CA_CN LEAF LEAF_CN: a throwaway CA (DIR/CA.pem,
# DIR/CA.key) and a certificate it signs (DIR/LEAF.pem, DIR/LEAF.key) with
# the extensions of DIR/LEAF.ext; valid two days.
registry_issue() {
  local dir=$1 ca=$2 ca_cn=$3 leaf=$4 leaf_cn=$5
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$dir/$ca.key" -out "$dir/$ca.pem" -subj "/CN=$ca_cn" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    >/dev/null 2>&1 &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout "$dir/$leaf.key" -out "$dir/$leaf.csr" -subj "/CN=$leaf_cn" >/dev/null 2>&1 &&
    openssl x509 -req -in "$dir/$leaf.csr" -CA "$dir/$ca.pem" -CAkey "$dir/$ca.key" \
      -CAcreateserial -days 2 -extfile "$dir/$leaf.ext" -out "$dir/$leaf.pem" >/dev/null 2>&1
}

# registry_client_files DIR: DIR/client-ca.pem (a CA for clients) and
# DIR/client.pem, DIR/client.key (a client certificate it signs).
registry_client_files() {
  local dir=$1
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' \
    >"$dir/client.ext"
  registry_issue "$dir" client-ca "fluxopctl test client CA $$" client "fluxopctl test client"
}

registry_start() {
  local dir=$1
  shift
  local htpasswd='' tls_host='' client_auth='' host='' token=() credentials='' access_log_disabled=true
  local sparse_index='' referrers='' server=(docker-registry serve)
  while [ $# -gt 0 ]; do
    case $1 in
      --htpasswd) htpasswd=$2; credentials=$2; shift 2 ;;
      --tls) tls_host=$2; shift 2 ;;
      --client-auth) client_auth=yes; shift ;;
      --host) host=$2; shift 2 ;;
      --token) token=("$2" "$3" "$4" "$5"); shift 5 ;;
      --credentials) credentials=$2; shift 2 ;;
      --access-log) access_log_disabled=false; shift ;;
      --sparse-index) sparse_index=$2; server=("$registry_v3" serve); shift 2 ;;
      --distribution-v3) server=("$registry_v3" serve); shift ;;
      --referrers) referrers=yes; shift ;;
      *) echo "registry_start: unknown option '$1'" >&2; return 2 ;;
    esac
  done
  mkdir -p "$dir/storage" || return 1
  dir=$(cd "$dir" && pwd)
  # shellcheck disable=SC2034 # REGISTRY_DIR is for the callers
  REGISTRY_DIR=$dir REGISTRY_STORAGE=$dir/storage REGISTRY_LOG=$dir/registry.log REGISTRY_CA=''
  REGISTRY_CLIENT_CERT='' REGISTRY_CLIENT_KEY=''
  REGISTRY_AUTH=none REGISTRY_CREDENTIALS=$credentials REGISTRY_TOKEN_REALM='' REGISTRY_TOKEN_SERVICE=''

  local auth_config='' tls_config='' scheme=http
  if [ -n "$htpasswd" ]; then
    registry_htpasswd "${htpasswd%%:*}" "${htpasswd#*:}" "$dir/htpasswd" || {
      echo "registry_start: no htpasswd (apache2-utils) nor python3-bcrypt" >&2
      return 1
    }
    auth_config=$'auth:\n  htpasswd:\n    realm: fluxopctl-test-registry\n    path: '$dir/htpasswd
    REGISTRY_AUTH=basic
  elif [ ${#token[@]} -gt 0 ]; then
    auth_config=$'auth:\n  token:\n    realm: '${token[0]}$'\n    service: '${token[1]}$'\n    issuer: '${token[2]}$'\n    rootcertbundle: '${token[3]}
    REGISTRY_AUTH=token REGISTRY_TOKEN_REALM=${token[0]} REGISTRY_TOKEN_SERVICE=${token[1]}
  fi
  if [ -n "$tls_host" ]; then
    registry_tls_files "$dir" "$tls_host" || { echo "registry_start: openssl failed" >&2; return 1; }
    tls_config=$'  tls:\n    certificate: '$dir/server.pem$'\n    key: '$dir/server.key
    if [ -n "$client_auth" ]; then
      registry_client_files "$dir" || { echo "registry_start: openssl failed" >&2; return 1; }
      tls_config+=$'\n    clientcas:\n      - '$dir/client-ca.pem
      REGISTRY_CLIENT_CERT=$dir/client.pem REGISTRY_CLIENT_KEY=$dir/client.key
    fi
    REGISTRY_CA=$dir/ca.pem scheme=https host=$tls_host
  fi

  if [ -n "$referrers" ]; then
    [ -x "$registry_referrers" ] || { echo "registry_start: no $registry_referrers (registry_referrers_ensure_built)" >&2; return 1; }
    [ -z "$htpasswd$tls_host${token[*]}$sparse_index" ] ||
      { echo "registry_start: --referrers serves plain HTTP, without auth" >&2; return 2; }
  fi

  if [ "${server[0]}" = "$registry_v3" ] && [ ! -x "$registry_v3" ]; then
    echo "registry_start: no $registry_v3 (registry_v3_ensure_built)" >&2
    return 1
  fi
  local validation='' platform
  if [ -n "$sparse_index" ]; then
    validation=$'validation:\n  manifests:\n    indexes:\n      platforms: list\n      platformlist:'
    for platform in ${sparse_index//,/ }; do
      validation+=$'\n        - os: '${platform%%/*}$'\n          architecture: '${platform#*/}
    done
  fi

  local port code deadline _
  for _ in 1 2 3; do
    port=$(registry_free_port) || return 1
    cat >"$dir/config.yml" <<CONFIG
version: 0.1
log:
  level: error
  accesslog:
    disabled: $access_log_disabled
storage:
  filesystem:
    rootdirectory: $dir/storage
http:
  addr: 127.0.0.1:$port
$tls_config
$auth_config
$validation
CONFIG
    # A killed caller cannot stop its registry: the kernel does (setpriv's
    # parent-death signal survives the exec, and timeout passes TERM on).
    # REGISTRY_LIFETIME (seconds) is a cap on top.
    local command=("${server[@]}" "$dir/config.yml")
    [ -z "$referrers" ] || command=("$registry_referrers" "127.0.0.1:$port")
    setpriv --pdeathsig TERM ${REGISTRY_LIFETIME:+timeout "$REGISTRY_LIFETIME"} \
      "${command[@]}" >"$REGISTRY_LOG" 2>&1 &
    REGISTRY_PID=$!
    REGISTRY_ALL_PIDS+=("$REGISTRY_PID")
    REGISTRY_ADDR=${host:-127.0.0.1}:$port
    REGISTRY_URL=$scheme://$REGISTRY_ADDR
    deadline=$((SECONDS + ${REGISTRY_START_TIMEOUT:-60}))
    while [ $SECONDS -lt $deadline ]; do
      # 401 is an answer too (an auth-protected registry is up).
      code=$(registry_curl_plain --max-time 5 -s -o /dev/null -w '%{http_code}' "$REGISTRY_URL/v2/") || true
      case $code in 200 | 401) return 0 ;; esac
      kill -0 "$REGISTRY_PID" 2>/dev/null || break
      sleep 0.1
    done
    registry_stop
  done
  echo "${server[0]##*/} did not start: $(tail -1 "$REGISTRY_LOG")" >&2
  return 1
}

# Stops one process: TERM, then KILL after 5 s.
registry_kill() {
  local pid=$1 _
  kill "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  return 0
}

registry_stop() {
  if [ -n "${REGISTRY_PID:-}" ]; then
    registry_kill "$REGISTRY_PID"
    REGISTRY_PID=
  fi
  return 0
}

registry_stop_all() {
  local pid
  for pid in "${REGISTRY_ALL_PIDS[@]}"; do
    registry_kill "$pid"
  done
  REGISTRY_ALL_PIDS=() REGISTRY_PID=
  return 0
}

registry_save() {
  local var
  for var in "${REGISTRY_VARS[@]}"; do
    printf -v "${1}_$var" '%s' "${!var:-}"
  done
}

registry_use() {
  local var saved
  for var in "${REGISTRY_VARS[@]}"; do
    saved=${1}_$var
    printf -v "$var" '%s' "${!saved:-}"
  done
}

# curl with the CA, the client certificate and the name resolution of the
# current registry, no credentials.
registry_curl_plain() {
  local args=()
  [ -z "${REGISTRY_CA:-}" ] || args+=(--cacert "$REGISTRY_CA")
  [ -z "${REGISTRY_CLIENT_CERT:-}" ] || args+=(--cert "$REGISTRY_CLIENT_CERT" --key "$REGISTRY_CLIENT_KEY")
  case ${REGISTRY_ADDR%:*} in
    127.0.0.1 | localhost) ;;
    *) args+=(--resolve "$REGISTRY_ADDR:127.0.0.1") ;;
  esac
  curl --max-time 60 "${args[@]}" "$@"
}

registry_curl() {
  local repo=$1 token
  shift
  case ${REGISTRY_AUTH:-none} in
    basic) registry_curl_plain -u "$REGISTRY_CREDENTIALS" "$@" ;;
    token)
      token=$(registry_curl_plain -fsS -u "$REGISTRY_CREDENTIALS" -G \
        --data-urlencode "service=$REGISTRY_TOKEN_SERVICE" \
        --data-urlencode "scope=repository:$repo:pull,push" "$REGISTRY_TOKEN_REALM" |
        sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
      [ -n "$token" ] || { echo "registry_curl: no token from $REGISTRY_TOKEN_REALM" >&2; return 1; }
      registry_curl_plain -H "Authorization: Bearer $token" "$@"
      ;;
    *) registry_curl_plain "$@" ;;
  esac
}

registry_sha256() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }

# POST opens an upload session, PUT closes it with the whole blob.
registry_push_blob() {
  local repo=$1 file=$2 digest location
  digest=$(registry_sha256 "$file")
  location=$(registry_curl "$repo" -fsS -X POST -o /dev/null -D - "$REGISTRY_URL/v2/$repo/blobs/uploads/" |
    tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
  [ -n "$location" ] || return 1
  case $location in /*) location=$REGISTRY_URL$location ;; esac
  case $location in *\?*) location=$location\&digest=$digest ;; *) location=$location\?digest=$digest ;; esac
  registry_curl "$repo" -fsS -X PUT -o /dev/null -H 'Content-Type: application/octet-stream' \
    --data-binary "@$file" "$location"
}

registry_descriptor() {
  printf '{"mediaType":"%s","digest":"%s","size":%d}' "$1" "$(registry_sha256 "$2")" "$(stat -c %s "$2")"
}

registry_push_artifact() {
  local ref=$1 src=$2
  shift 2
  local work status
  work=$(mktemp -d) || return 1
  # Like fluxcd/pkg's artifact builder: a root "." entry, then each directory
  # walked in name order, owner 0 without names, timestamps dropped; modes as
  # in a git checkout (the shared data is read-only).
  local tar_flags=(--format=ustar --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name
    --mode=u+w,a+r)
  tar -C "$src" "${tar_flags[@]}" --no-recursion -cf "$work/layer.tar" . &&
    tar -C "$src" "${tar_flags[@]}" -rf "$work/layer.tar" "$@" &&
    gzip -n -c "$work/layer.tar" >"$work/layer.tgz" || { rm -rf "$work"; return 1; }
  registry_push_layer "$ref" "$work/layer.tgz" "file://$src"
  status=$?
  rm -rf "$work"
  return $status
}

registry_push_layer() {
  local ref=$1 layer=$2 source=${3:-file://$2}
  local repo=${ref%:*} tag=${ref##*:} work diff_id status
  work=$(mktemp -d) || return 1
  # The config's diff_id is the uncompressed layer's digest (the bytes
  # themselves when they are not gzip).
  diff_id=$( (gzip -dc "$layer" 2>/dev/null || cat "$layer") | sha256sum | cut -d' ' -f1)
  printf '{"architecture":"","os":"","rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"config":{}}' \
    "$diff_id" >"$work/config.json"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":%s,"layers":[%s],"annotations":{"org.opencontainers.image.created":"%s","org.opencontainers.image.description":"Flux Operator","org.opencontainers.image.revision":"local@sha256:%s","org.opencontainers.image.source":"%s"}}' \
    "$(registry_descriptor application/vnd.cncf.flux.config.v1+json "$work/config.json")" \
    "$(registry_descriptor application/vnd.cncf.flux.content.v1.tar+gzip "$layer")" \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$diff_id" "$source" \
    >"$work/manifest.json"
  registry_push_blob "$repo" "$work/config.json" &&
    registry_push_blob "$repo" "$layer" &&
    registry_curl "$repo" -fsS -X PUT -o /dev/null -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
      --data-binary "@$work/manifest.json" "$REGISTRY_URL/v2/$repo/manifests/$tag" &&
    registry_sha256 "$work/manifest.json"
  status=$?
  rm -rf "$work"
  return $status
}

registry_layer_digest() {
  local ref=$1
  registry_curl "${ref%:*}" -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "$REGISTRY_URL/v2/${ref%:*}/manifests/${ref##*:}" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["layers"][0]["digest"])'
}

registry_blob_path() {
  local hex=${1#sha256:}
  echo "$REGISTRY_STORAGE/docker/registry/v2/blobs/sha256/${hex:0:2}/$hex/data"
}
