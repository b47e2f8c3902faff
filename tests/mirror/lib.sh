# The fixtures of the mirror tests (tests/oci/cases/mirror.sh and the e2e
# case in tests/e2e/pull_secret_test.sh): synthetic images in a source
# registry and a distribution whose catalog names them.
# shellcheck shell=bash

# mirror_source_fixture FLUXDIR VERSION DIST: pushes the synthetic images to
# the current registry (scripts/lib/oci-registry.sh) under fluxcd/, and
# writes DIST: FLUXDIR's manifests as flux/VERSION and the catalog naming the
# images as flux-images/VERSION/upstream-alpine.yaml.
mirror_source_fixture() {
  local here dist=$3
  here=$(dirname "${BASH_SOURCE[0]}")
  timeout 120 python3 "$here/synthetic_images.py" "$REGISTRY_ADDR" fluxcd >/dev/null || return 1
  mkdir -p "$dist/flux" "$dist/flux-images/$2" || return 1
  cp -r "$1" "$dist/flux/$2" || return 1
  sed "s|@SOURCE@|$REGISTRY_ADDR/fluxcd|" "$here/upstream-alpine.yaml" \
    >"$dist/flux-images/$2/upstream-alpine.yaml"
}

# mirror_catalog_refs DIST VERSION: "NAME@DIGEST" of each catalog entry.
mirror_catalog_refs() {
  awk '/- name:/ { name = $3 } /digest:/ { print name "@" $2 }' \
    "$1/flux-images/$2/upstream-alpine.yaml"
}

# mirror_has_manifest URL REPO DIGEST [TAG]: the registry at URL
# (http[s]://HOST:PORT; curl with mirror_curl_options, e.g. --cacert and -u)
# serves the manifest DIGEST in REPO (and TAG resolves to it).
mirror_curl_options=()
mirror_has_manifest() {
  local accept='application/vnd.oci.image.manifest.v1+json,application/vnd.oci.image.index.v1+json'
  curl "${mirror_curl_options[@]}" -fs -m 30 -o /dev/null -I -H "Accept: $accept" \
    "$1/v2/$2/manifests/$3" || return 1
  [ -z "${4:-}" ] && return 0
  curl "${mirror_curl_options[@]}" -fsS -m 30 -I -H "Accept: $accept" "$1/v2/$2/manifests/$4" |
    tr -d '\r' | grep -qix "docker-content-digest: $3"
}
