# push, pull and build against the main registry: the artifact push lays
# out, the output of pull, builds equal to both oracles, the cache, a missing tag.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

pushed_ref='' pushed_digest=''
t_push() {
  fx push "$dist" "oci://$main/flux-operator-manifests:v1"
  succeeded push || return 1
  local line
  line=$(cat "$work/out")
  [[ $line =~ ^oci://$main/flux-operator-manifests@(sha256:[0-9a-f]{64})$ ]] ||
    { because "push printed '$line', want oci://$main/flux-operator-manifests@sha256:<digest>"; return 1; }
  pushed_digest=${BASH_REMATCH[1]}
  pushed_ref=oci://$main/flux-operator-manifests:v1
  # The registry has that manifest under the tag, laid out like `flux push
  # artifact`: a Flux config, one tar+gzip content layer of flux/ and flux-images/.
  registry_use main
  registry_curl x -fsS -o "$work/manifest.json" -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "$REGISTRY_URL/v2/flux-operator-manifests/manifests/v1" ||
    { because "the registry has no manifest under the tag v1"; return 1; }
  [ "$(registry_sha256 "$work/manifest.json")" = "$pushed_digest" ] ||
    { because "the tag's manifest digest is not the printed one"; return 1; }
  python3 - "$work/manifest.json" <<'PY' >"$work/layer.digest" || { because "manifest: $(cat "$work/layer.digest")"; return 1; }
import json, sys
m = json.load(open(sys.argv[1]))
problems = []
if m.get("config", {}).get("mediaType") != "application/vnd.cncf.flux.config.v1+json":
    problems.append("config mediaType %r" % m.get("config", {}).get("mediaType"))
layers = m.get("layers", [])
if len(layers) != 1 or layers[0].get("mediaType") != "application/vnd.cncf.flux.content.v1.tar+gzip":
    problems.append("layers %r" % [l.get("mediaType") for l in layers])
for key in ("created", "source", "revision"):
    if "org.opencontainers.image." + key not in m.get("annotations", {}):
        problems.append("no org.opencontainers.image.%s annotation" % key)
if problems:
    print("; ".join(problems)); sys.exit(1)
print(layers[0]["digest"])
PY
  registry_curl x -fsS -o "$work/layer.tgz" \
    "$REGISTRY_URL/v2/flux-operator-manifests/blobs/$(cat "$work/layer.digest")" ||
    { because "cannot fetch the pushed layer"; return 1; }
  tar -tzf "$work/layer.tgz" >"$work/layer.list" 2>/dev/null || { because "the layer is no tar+gzip"; return 1; }
  grep -qE "^(\./)?flux/$latest/source-controller.yaml$" "$work/layer.list" &&
    grep -qE "^(\./)?flux-images/$latest/" "$work/layer.list" ||
    { because "the layer lacks flux/$latest/source-controller.yaml or flux-images/$latest/"; return 1; }
  ! grep -qE '^/|(^|/)\.\.(/|$)' "$work/layer.list" || because "the layer has absolute or .. entries"
}

t_pull_pushed() {
  [ -n "$pushed_ref" ] || { because "nothing pushed (push failed)"; return 1; }
  fresh_cache
  fx pull "$pushed_ref" -o json
  succeeded pull || return 1
  cp "$work/out" "$work/pull.json"
  local digest versions path url
  digest=$(json_field "$work/pull.json" digest) || { because "no digest in the pull -o json output"; return 1; }
  [ "$digest" = "$pushed_digest" ] || { because "pull digest $digest, push printed $pushed_digest"; return 1; }
  url=$(json_field "$work/pull.json" url) || { because "no url in the output"; return 1; }
  [ "$url" = "$pushed_ref" ] || { because "url '$url', want $pushed_ref"; return 1; }
  versions=$(json_field "$work/pull.json" versions | tr ' ' '\n' | sort -V | tr '\n' ' ') ||
    { because "no versions in the output"; return 1; }
  [ "$versions" = "$expected_versions" ] || { because "versions '$versions', want '$expected_versions'"; return 1; }
  path=$(json_field "$work/pull.json" path) || { because "no path in the output"; return 1; }
  [ -d "$path/flux/$latest" ] || { because "path $path has no flux/$latest"; return 1; }
  case $path in "$XDG_CACHE_HOME"/*) ;; *) because "path $path is not in the cache $XDG_CACHE_HOME"; return 1 ;; esac
  for key in source revision created; do
    json_field "$work/pull.json" $key >/dev/null || { because "no $key in the output"; return 1; }
  done
  # The default output is YAML with the same digest.
  fx pull "$pushed_ref"
  succeeded "pull (yaml)" || return 1
  grep -qE "^digest: [\"']?${digest}[\"']?$" "$work/out" || because "pull's YAML lacks 'digest: $digest'"
}

t_build_pushed() {
  [ -n "$pushed_ref" ] || { because "nothing pushed (push failed)"; return 1; }
  fresh_cache
  fx build "$instance" --distribution-artifact "$pushed_ref"
  succeeded "build oci://" || return 1
  same_as_oracles "build from fluxopctl push's artifact" pushed
}

t_pull_annotations() {
  fresh_cache
  fx pull "oci://$main/full:v1" -o json
  succeeded pull || return 1
  cp "$work/out" "$work/pull.json"
  registry_use main
  registry_curl x -fsS -o "$work/manifest.json" -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "$REGISTRY_URL/v2/full/manifests/v1" || { because "curl: no manifest"; return 1; }
  local key want got
  [ "$(json_field "$work/pull.json" digest)" = "$full_digest" ] || { because "digest is not $full_digest"; return 1; }
  for key in source revision created; do
    want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["annotations"]["org.opencontainers.image." + sys.argv[2]])' "$work/manifest.json" $key)
    got=$(json_field "$work/pull.json" $key)
    [ "$got" = "$want" ] || { because "$key '$got', the manifest says '$want'"; return 1; }
  done
  fx build "$instance" --distribution-artifact "oci://$main/full:v1"
  succeeded "build oci://" || return 1
  same_as_oracles "build from a curl-pushed artifact" full
}

t_cache_hit() {
  fresh_cache
  local before after
  before=$(blob_gets)
  fx build "$instance" --distribution-artifact "oci://$main/full:v1"
  succeeded "first build" || return 1
  same_as_oracles "first build" full || return 1
  after=$(blob_gets)
  [ "$after" -gt "$before" ] || { because "the first build fetched no blob (registry log $main_REGISTRY_LOG)"; return 1; }
  fx build "$instance" --distribution-artifact "oci://$main/full:v1"
  succeeded "second build" || return 1
  same_as_oracles "second build" full || return 1
  [ "$(blob_gets)" -eq "$after" ] || because "the second build fetched $(($(blob_gets) - after)) blob(s) again"
}

t_missing_tag() {
  fresh_cache
  fx pull "oci://$main/full:no-such-tag"
  one_line_error "missing tag" '404|not found|unknown' || return 1
  fx build "$instance" --distribution-artifact "oci://$main/full:no-such-tag"
  one_line_error "build of a missing tag" '404|not found|unknown'
}

tcase "push: fluxopctl push lays out a Flux artifact" t_push
upstream_case pushed "$pushed_ref" "fluxopctl push's artifact"
upstream_case full "oci://$main/full:v1" "a curl-pushed artifact"
tcase "pull: output has push's digest, the versions, the cache path" t_pull_pushed
tcase "build oci:// of a pushed artifact equals both oracles" t_build_pushed
tcase "pull: annotations and build of a curl-pushed artifact" t_pull_annotations
tcase "cache: a second build fetches no blob" t_cache_hit
tcase "missing tag: clear not found error" t_missing_tag
