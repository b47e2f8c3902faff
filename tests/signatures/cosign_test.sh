#!/usr/bin/env bash
# `fluxopctl verify REF|FILE` against cosign, the oracle (scripts/lib/cosign.sh,
# built once from the Go module proxy): cosign signs, with a key pair and no
# transparency log, the small synthetic images of tests/mirror and a test
# distribution pushed as an artifact into a local registry, Debian's
# docker-registry (it has no referrers API, nor has distribution v3.0.0's:
# the new bundle format goes under the referrers tag fallback). Then
# `cosign verify --key` and `fluxopctl verify --key` must agree on every
# case: signed (legacy `.sig` layout, and bundles as referrers), a changed
# payload, a signature moved to another digest, another key, a missing
# signature; except where fluxopctl refuses on purpose what cosign accepts
# (an attestation, a signature past the 32 tried); and `fluxopctl verify FILE` verifies the artifact and each image
# a FluxInstance installs, naming the one that is not signed.
# Keyless too, with a private Sigstore made here (tests/signatures/
# private_sigstore.sh): a CA (root and intermediate) whose code-signing
# certificates name a GitHub workflow and its OIDC issuer as Fulcio's do, a
# timestamp authority, no transparency nor CT log, and the trusted_root.json
# that describes them; `cosign verify --trusted-root` and `fluxopctl verify
# --trusted-root` agree on the signature (legacy and bundle), another
# identity, another issuer, a CA and a timestamp authority the trusted root
# does not name, a signature moved to another digest.
# And bundles through the referrers API, in a second registry that serves it
# (go-containerregistry's, scripts/lib/oci-registry.sh --referrers; its cases
# skip when it cannot be built): signed with the key and keyless, verified,
# and mirrored so that the mirror verifies through the API too; and mirrored
# to distribution v3.0.0's registry, which serves no API, where mirror keeps
# the referrers tag (the referrers tag schema) so that it verifies there too.
#
#   tests/signatures/cosign_test.sh BIN ROOT
#
# One line per case (tests/lib/harness.sh); exit 0 when none failed, 1
# otherwise, 77 when it cannot run (no Go to build cosign, no docker-registry).
# SIGNATURES_TEST_TIMEOUT (120) bounds each command, seconds.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BIN ROOT" >&2
  exit 2
fi
root=$(cd "$2" && pwd) || exit 2
bin=$1
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
cmd_timeout=${SIGNATURES_TEST_TIMEOUT:-120}

# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
# shellcheck source=scripts/lib/oci-registry.sh
source "$root/scripts/lib/oci-registry.sh"
# shellcheck source=scripts/lib/cosign.sh
source "$root/scripts/lib/cosign.sh"
# shellcheck source=tests/oci/lib.sh
source "$root/tests/oci/lib.sh"
# shellcheck source=tests/mirror/lib.sh
source "$root/tests/mirror/lib.sh"
# shellcheck source=tests/signatures/private_sigstore.sh
source "$root/tests/signatures/private_sigstore.sh"

registry_ensure_installed || skip_test "the Debian package docker-registry is not installed and could not be"
# Built with the machine's Go caches, before HOME is the test's own.
cosign_ensure_built || skip_test "cosign $cosign_version could not be built (above)"
registry_referrers_ensure_built || echo "the referrers API cases will skip" >&2
registry_v3_ensure_built || echo "the case mirroring to distribution v3 will skip" >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/fluxopctl-signatures-test.XXXXXX") || exit 1
cleanup() {
  set +e
  tsa_stop_all
  registry_stop_all
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Nothing from the machine's own configuration; cosign's key has no password.
export HOME=$work/home DOCKER_CONFIG=$work/docker XDG_CACHE_HOME=$work/cache
unset XDG_STATE_HOME
export COSIGN_PASSWORD='' COSIGN_YES=true TUF_ROOT=$work/tuf
mkdir -p "$HOME" "$DOCKER_CONFIG"
REASON=
show "$work/err"

cosign_run() { run "$cosign" "$@"; }

# --- fixtures --------------------------------------------------------------------

(cd "$work" && "$cosign" generate-key-pair --output-key-prefix signer >/dev/null 2>&1 &&
  "$cosign" generate-key-pair --output-key-prefix other >/dev/null 2>&1) ||
  abort "setup: cosign generate-key-pair failed"
key=$work/signer.key pub=$work/signer.pub other_pub=$work/other.pub

version=v2.9.0
dist=$work/dist
registry_start "$work/reg-legacy" || abort "setup: docker-registry did not start"
registry_save legacy
legacy=$REGISTRY_ADDR
mirror_source_fixture "$root/tests/cli/distribution/flux/$version" "$version" "$dist" ||
  abort "setup: the synthetic images or the test distribution"
artifact_digest=$(registry_push_artifact flux-operator-manifests:v1 "$dist" flux flux-images) ||
  abort "setup: pushing the test distribution failed"
artifact="$legacy/flux-operator-manifests@$artifact_digest"
# NAME@DIGEST of the four images, source-controller (an index) first.
mapfile -t images < <(mirror_catalog_refs "$dist" "$version")
[ ${#images[@]} -eq 4 ] || abort "setup: the catalog names ${#images[@]} images, not 4"

for prefix in bundle tamper keyless keyless-moved attested many; do
  timeout 120 python3 "$root/tests/mirror/synthetic_images.py" "$legacy" "$prefix" >/dev/null ||
    abort "setup: the synthetic images under $prefix/"
done
# The same images under another prefix, by component (the bytes, and so the
# digests, are the same).
image_under() {
  local image
  for image in "${images[@]}"; do
    [[ $image == */$2@* ]] && echo "$legacy/$1/$2@${image##*@}"
  done
}

# sign KEY REF [FLAG...]: cosign signs REF with KEY, without a transparency log.
sign() {
  local signing_key=$1 ref=$2
  shift 2
  timeout -k 5 "$cmd_timeout" "$cosign" sign --key "$signing_key" --tlog-upload=false --use-signing-config=false \
    "$@" "$ref" >"$work/sign.out" 2>&1 ||
    abort "setup: cosign sign $ref $*: $(tail -3 "$work/sign.out" | tr '\n' ' ')"
}
legacy_sign() { sign "$key" "$1" --new-bundle-format=false; }
# fluxcd/: the artifact and three images in the legacy layout;
# notification-controller stays unsigned.
legacy_sign "$artifact"
for image in "${images[@]:0:3}"; do legacy_sign "$image"; done
# helm-controller also as a bundle, which a mirror copies with its referrers tag.
sign "$key" "${images[2]}" --new-bundle-format=true
# bundle/: kustomize-controller signed as a bundle only (docker-registry has
# no referrers API: under the referrers tag fallback).
bundle_image=$(image_under bundle kustomize-controller)
sign "$key" "$bundle_image" --new-bundle-format=true
# tamper/: source-controller and notification-controller in the legacy
# layout, whose signatures the cases below change.
legacy_sign "$(image_under tamper source-controller)"
legacy_sign "$(image_under tamper notification-controller)"

# The private Sigstore: its CA and timestamp authority, and another CA and
# timestamp authority, not in its trusted root, that sign the same identity.
pki=$work/pki
identity=https://github.com/example/app/.github/workflows/release.yml@refs/heads/main
oidc_issuer=https://token.actions.githubusercontent.com
mkdir -p "$pki" && (
  cd "$pki" &&
    pki_ca "$pki" root "private Sigstore root" && pki_ca "$pki" intermediate "private Sigstore intermediate" root &&
    pki_signer "$pki" signer intermediate "$identity" "$oidc_issuer" &&
    pki_ca "$pki" rogue-root "rogue root" && pki_signer "$pki" rogue-signer rogue-root "$identity" "$oidc_issuer" &&
    pki_ca "$pki" tsa-root "private Sigstore timestamping root" && pki_tsa "$pki" tsa tsa-root &&
    pki_ca "$pki" rogue-tsa-root "rogue timestamping root" && pki_tsa "$pki" rogue-tsa rogue-tsa-root &&
    cat intermediate.pem root.pem >ca-chain.pem && cat tsa.pem tsa-root.pem >tsa-trusted.pem &&
    "$cosign" import-key-pair --key signer.key --output-key-prefix signer-cosign >/dev/null 2>&1 &&
    "$cosign" import-key-pair --key rogue-signer.key --output-key-prefix rogue-signer-cosign >/dev/null 2>&1
) || abort "setup: the private Sigstore's certificates (openssl) or cosign import-key-pair"
trusted_root=$pki/trusted_root.json
trusted_root_json "$pki/ca-chain.pem" "$pki/tsa-trusted.pem" >"$trusted_root" ||
  abort "setup: the private Sigstore's trusted root"
tsa_start "$pki" tsa || abort "setup: the timestamp authority"
tsa_url=$TSA_URL
tsa_start "$pki" rogue-tsa || abort "setup: the rogue timestamp authority"
rogue_tsa_url=$TSA_URL

# keyless_sign SIGNER TSA_URL REF [FLAG...]: cosign signs REF with SIGNER's
# certificate (the chain in the legacy layout), timestamped by TSA_URL.
keyless_sign() {
  local signer=$1 tsa=$2 ref=$3
  shift 3
  sign "$pki/$signer-cosign.key" "$ref" --certificate "$pki/$signer.pem" \
    --timestamp-server-url "$tsa" "$@"
}
# In the legacy layout, with the chain up to the root; a bundle holds the
# signer's certificate alone (cosign v3 verifies no v0.3 bundle with a chain).
keyless_legacy_sign() {
  keyless_sign "$1" "$2" "$3" --certificate-chain "$4" --new-bundle-format=false
}
cat "$pki/rogue-root.pem" >"$pki/rogue-chain.pem"
# keyless/: source-controller in the legacy layout, kustomize-controller as a
# bundle, both by the private Sigstore; helm-controller by the rogue CA;
# notification-controller timestamped by the rogue timestamp authority.
keyless_legacy_sign signer "$tsa_url" "$(image_under keyless source-controller)" "$pki/ca-chain.pem"
keyless_bundle_image=$(image_under keyless kustomize-controller)
keyless_sign signer "$tsa_url" "$keyless_bundle_image" --new-bundle-format=true
keyless_legacy_sign rogue-signer "$tsa_url" "$(image_under keyless helm-controller)" "$pki/rogue-chain.pem"
keyless_legacy_sign signer "$rogue_tsa_url" "$(image_under keyless notification-controller)" "$pki/ca-chain.pem"

# --- cosign and fluxopctl agree ----------------------------------------------------

# The signer a case asks for, as cosign's and fluxopctl's verify flags, and
# what fluxopctl then says signed, and who proves when (neither a log nor a
# timestamp authority for a key: "in no log"; the timestamp authority, for
# the private Sigstore: "timestamped at"). policy_key PUB: a key, no transparency log.
# policy_keyless IDENTITY ISSUER: the private Sigstore's trusted root; cosign
# is told what fluxopctl reads from that root (no log, no CT log: the time
# from the timestamp authority).
policy_key() {
  cosign_policy=(--key "$1" --insecure-ignore-tlog=true --insecure-ignore-sct=true)
  fx_policy=(--key "$1")
  signed_by="key $1, in no log"
}
policy_keyless() {
  cosign_policy=(--trusted-root "$trusted_root" --certificate-identity "$1" --certificate-oidc-issuer "$2"
    --use-signed-timestamps --insecure-ignore-tlog=true --insecure-ignore-sct=true)
  fx_policy=(--trusted-root "$trusted_root" --certificate-identity "$1" --certificate-oidc-issuer "$2")
  signed_by="$1 (issuer $2), timestamped at"
}

# agree NAME WANT REF [ERE]: `cosign verify` and `fluxopctl verify` with the
# case's policy both exit WANT (0 or 1) for REF; fluxopctl's one error line
# then matches ERE after "error: REF: ".
agree() {
  local want=$2 ref=$3 pattern=${4:-}
  cosign_run verify "${cosign_policy[@]}" --allow-http-registry "$ref"
  local cosign_rc=$rc
  if { [ "$want" -eq 0 ] && [ $cosign_rc -ne 0 ]; } || { [ "$want" -ne 0 ] && [ $cosign_rc -eq 0 ]; }; then
    because "cosign verify exits $cosign_rc, the case wants $want: $(first_err)"
    return 1
  fi
  fx verify "${fx_policy[@]}" "oci://$ref"
  if [ "$want" -eq 0 ]; then
    succeeded "fluxopctl verify" || return 1
    [ "$(lines "$work/out")" -eq 1 ] || { because "fluxopctl verify: $(lines "$work/out") lines, not 1"; return 1; }
    grep -qF "@${ref##*@} verified, signed by $signed_by" "$work/out" ||
      because "fluxopctl verify: $(head -c 300 "$work/out")"
  else
    one_line_error "fluxopctl verify" "^error: oci://${ref%@*}@${ref##*@}: $pattern"
  fi
}

t_artifact() { agree artifact 0 "$artifact"; }
t_index() { agree "index" 0 "${images[0]}"; }
t_image() { agree image 0 "${images[1]}"; }
t_bundle_referrers_tag() { agree "bundle" 0 "$bundle_image"; }
t_missing() { agree missing 1 "${images[3]}" "not signed"; }

t_other_key() {
  policy_key "$other_pub"
  agree "other key" 1 "${images[1]}" "no signature verifies: .*signature: does not verify" &&
    agree "other key, bundle" 1 "$bundle_image" "no signature verifies: .*signature"
}

# The signature manifest of REF copied, by python, to another tag with its
# payload changed (a byte of the image's name) or as is.
copy_signature() {
  timeout 60 python3 - "$@" <<'PY'
import hashlib, json, sys, urllib.request
registry, repo, source_tag, target_tag, change = sys.argv[1:6]
base = f"http://{registry}/v2/{repo}"
accept = "application/vnd.oci.image.manifest.v1+json"
def get(url):
    req = urllib.request.Request(url, headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()
def put(url, data, content_type):
    req = urllib.request.Request(url, data=data, method="PUT",
                                 headers={"Content-Type": content_type})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.headers
manifest = json.loads(get(f"{base}/manifests/{source_tag}"))
if change == "payload":
    layer = manifest["layers"][0]
    # The same claims, and a field cosign did not sign.
    payload = json.loads(get(f"{base}/blobs/{layer['digest']}"))
    payload["optional"] = {"changed": "by the test"}
    payload = json.dumps(payload).encode()
    digest = "sha256:" + hashlib.sha256(payload).hexdigest()
    req = urllib.request.Request(f"{base}/blobs/uploads/", data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        location = r.headers["Location"]
    if location.startswith("/"):
        location = f"http://{registry}{location}"
    put(f"{location}{'&' if '?' in location else '?'}digest={digest}", payload,
        "application/octet-stream")
    layer["digest"], layer["size"] = digest, len(payload)
put(f"{base}/manifests/{target_tag}", json.dumps(manifest).encode(), manifest["mediaType"])
PY
}

sig_tag() { local d=${1##*@}; echo "${d/:/-}.sig"; }
repo_of() { local r=${1%@*}; echo "${r#*/}"; }

t_changed_payload() {
  # notification-controller's signature, its payload changed, as its own.
  local ref
  ref=$(image_under tamper notification-controller)
  copy_signature "$legacy" "$(repo_of "$ref")" "$(sig_tag "$ref")" "$(sig_tag "$ref")" payload ||
    { because "rewriting the signature failed"; return 1; }
  agree "changed payload" 1 "$ref" "no signature verifies: .*signature: does not verify"
}

# move_signature FROM TO: FROM's legacy signature (NAME@DIGEST) put where TO's
# would be, in another repository.
move_signature() {
  timeout 60 python3 - "$legacy" "$(repo_of "$1")" "$(repo_of "$2")" "$(sig_tag "$1")" \
    "$(sig_tag "$2")" <<'PY'
import json, sys, urllib.request
registry, src, dst, src_tag, dst_tag = sys.argv[1:6]
accept = "application/vnd.oci.image.manifest.v1+json"
req = urllib.request.Request(f"http://{registry}/v2/{src}/manifests/{src_tag}",
                             headers={"Accept": accept})
with urllib.request.urlopen(req, timeout=30) as r:
    manifest = json.loads(r.read())
for blob in [manifest["config"]] + manifest["layers"]:
    req = urllib.request.Request(
        f"http://{registry}/v2/{dst}/blobs/uploads/?mount={blob['digest']}&from={src}",
        data=b"", method="POST")
    urllib.request.urlopen(req, timeout=30).close()
req = urllib.request.Request(f"http://{registry}/v2/{dst}/manifests/{dst_tag}",
                             data=json.dumps(manifest).encode(), method="PUT",
                             headers={"Content-Type": manifest["mediaType"]})
urllib.request.urlopen(req, timeout=30).close()
PY
}

t_other_digest() {
  # source-controller's signature (of its index) put where the unsigned
  # helm-controller's would be.
  local to
  to=$(image_under tamper helm-controller)
  move_signature "$(image_under tamper source-controller)" "$to" ||
    { because "copying the signature failed"; return 1; }
  agree "another digest" 1 "$to" "no signature verifies: .*digest: the signature is of"
}

# --- what counts as a signature, and how many are tried ---------------------------

# A predicate to attest: SLSA provenance v1, the least it asks for.
provenance=$work/provenance.json
cat >"$provenance" <<'JSON'
{"buildDefinition": {"buildType": "https://example.com/build/v1", "externalParameters": {}},
 "runDetails": {"builder": {"id": "https://example.com/builder"}}}
JSON
# attest REF: cosign attests REF's provenance with the signer's key, as a bundle.
attest() {
  cosign_run attest --key "$key" --type slsaprovenance1 --predicate "$provenance" \
    --new-bundle-format=true --tlog-upload=false --use-signing-config=false "$1"
  succeeded "cosign attest"
}

t_attestation_not_signature() {
  # An SLSA provenance attestation by the right key is not a signature of
  # the image: refused, by the predicate type of the signed statement
  # (cosign's referrers tag says nothing of it). cosign v3.1.3's own verify
  # counts any attestation it verifies as a signature: no oracle here.
  # Signed afterwards, the image verifies with the attestation beside it.
  local ref
  ref=$(image_under attested kustomize-controller)
  attest "$ref" || return 1
  agree_fluxopctl_refuses "an attestation" "$ref" \
    'no signature verifies: referrer sha256:[0-9a-f]{64}: an attestation \(predicate type "https://slsa\.dev/provenance/v1"\), not a signature$' || return 1
  sign "$key" "$ref" --new-bundle-format=true
  agree "signed beside an attestation" 0 "$ref"
}

# agree_fluxopctl_refuses NAME REF ERE: fluxopctl refuses REF, its one error
# line matching ERE after "error: REF: "; cosign accepts it.
agree_fluxopctl_refuses() {
  cosign_run verify "${cosign_policy[@]}" --allow-http-registry "$2"
  [ "$rc" -eq 0 ] || { because "$1: cosign verify exits $rc: $(first_err)"; return 1; }
  fx verify "${fx_policy[@]}" "oci://$2"
  one_line_error "$1: fluxopctl verify" "^error: oci://${2%@*}@${2##*@}: $3"
}

# repeat_first_signature REF N: REF's .sig manifest with its first layer
# (a signature by another key) repeated N times before the others.
repeat_first_signature() {
  timeout 60 python3 - "$legacy" "$(repo_of "$1")" "$(sig_tag "$1")" "$2" <<'PY'
import json, sys, urllib.request
registry, repo, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
url = f"http://{registry}/v2/{repo}/manifests/{tag}"
accept = "application/vnd.oci.image.manifest.v1+json"
with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": accept}), timeout=30) as r:
    manifest = json.loads(r.read())
first = manifest["layers"][0]
manifest["layers"] = [first] * count + [l for l in manifest["layers"] if l != first]
req = urllib.request.Request(url, data=json.dumps(manifest).encode(), method="PUT",
                             headers={"Content-Type": manifest["mediaType"]})
urllib.request.urlopen(req, timeout=30).close()
PY
}

t_signatures_beyond_bound() {
  # Signatures by another key before the right one: the 32nd signature is
  # still tried; the 33rd is not, and the refusal says so.
  local ref
  ref=$(image_under many helm-controller)
  sign "$work/other.key" "$ref" --new-bundle-format=false
  legacy_sign "$ref"
  repeat_first_signature "$ref" 31 || { because "rewriting the signature manifest failed"; return 1; }
  agree "the 32nd signature" 0 "$ref" || return 1
  repeat_first_signature "$ref" 32 || { because "rewriting the signature manifest failed"; return 1; }
  agree_fluxopctl_refuses "the 33rd signature" "$ref" \
    "no signature verifies: .*; 1 more signature not tried \(at most 32 are tried per reference\)$"
}

# --- keyless, the private Sigstore ----------------------------------------------------

t_keyless() {
  policy_keyless "$identity" "$oidc_issuer"
  agree "keyless" 0 "$(image_under keyless source-controller)" &&
    agree "keyless, bundle" 0 "$keyless_bundle_image"
}

t_keyless_regexp() {
  policy_keyless '^https://github\.com/example/' '^https://token\.actions\.githubusercontent\.com$'
  cosign_policy=("${cosign_policy[@]/#--certificate-identity/--certificate-identity-regexp}")
  cosign_policy=("${cosign_policy[@]/#--certificate-oidc-issuer/--certificate-oidc-issuer-regexp}")
  fx_policy=("${fx_policy[@]/#--certificate-identity/--certificate-identity-regexp}")
  fx_policy=("${fx_policy[@]/#--certificate-oidc-issuer/--certificate-oidc-issuer-regexp}")
  signed_by="$identity (issuer $oidc_issuer), timestamped at"
  agree "keyless, by regexp" 0 "$keyless_bundle_image"
}

t_keyless_other_identity() {
  policy_keyless https://github.com/example/other/.github/workflows/release.yml@refs/heads/main "$oidc_issuer"
  agree "another identity" 1 "$(image_under keyless source-controller)" "no signature verifies: .*certificate: signed by" &&
    agree "another identity, bundle" 1 "$keyless_bundle_image" "no signature verifies: .*certificate: signed by"
}

t_keyless_other_issuer() {
  policy_keyless "$identity" https://accounts.google.com
  agree "another issuer" 1 "$(image_under keyless source-controller)" "no signature verifies: .*certificate: issued by" &&
    agree "another issuer, bundle" 1 "$keyless_bundle_image" "no signature verifies: .*certificate: issued by"
}

t_keyless_untrusted_ca() {
  policy_keyless "$identity" "$oidc_issuer"
  agree "a CA not in the trusted root" 1 "$(image_under keyless helm-controller)" "no signature verifies: .*certificate chain"
}

t_keyless_untrusted_tsa() {
  policy_keyless "$identity" "$oidc_issuer"
  agree "a timestamp authority not in the trusted root" 1 "$(image_under keyless notification-controller)" \
    "no signature verifies: .*timestamp at .*: not signed by a timestamp authority of the trusted root"
}

t_keyless_other_digest() {
  # The private Sigstore's signature of source-controller (its index) where
  # keyless-moved/helm-controller's would be.
  local to
  to=$(image_under keyless-moved helm-controller)
  move_signature "$(image_under keyless source-controller)" "$to" ||
    { because "copying the signature failed"; return 1; }
  policy_keyless "$identity" "$oidc_issuer"
  agree "keyless, another digest" 1 "$to" "no signature verifies: .*digest: the signature is of"
}

# --- bundles through the referrers API -----------------------------------------------

# A registry that serves the referrers API (go-containerregistry's; neither
# docker-registry nor distribution v3.0.0 does), with its own copy of the
# synthetic images and the test distribution; cosign (v3 pushes a bundle as
# a referrer, and writes no referrers tag where the API is served) signs
# kustomize-controller with the key and helm-controller with the private
# Sigstore's certificate. Empty when it could not be built (the cases skip).
api= plain=
if registry_referrers_ensure_built; then
  registry_start "$work/reg-api" --referrers || abort "setup: the referrers API registry did not start"
  api=$REGISTRY_ADDR
  api_dist=$work/api-dist
  mirror_source_fixture "$root/tests/cli/distribution/flux/$version" "$version" "$api_dist" ||
    abort "setup: the synthetic images or the test distribution, in the referrers API registry"
  registry_push_artifact flux-operator-manifests:v1 "$api_dist" flux flux-images >/dev/null ||
    abort "setup: pushing the test distribution to the referrers API registry failed"
  mapfile -t api_images < <(mirror_catalog_refs "$api_dist" "$version")
  sign "$key" "${api_images[1]}" --new-bundle-format=true
  keyless_sign signer "$tsa_url" "${api_images[2]}" --new-bundle-format=true
  # And distribution v3.0.0's, which serves no referrers API, to mirror them
  # to. Empty when it could not be built (its case skips).
  if [ -x "$registry_v3" ]; then
    registry_start "$work/reg-plain" --distribution-v3 || abort "setup: distribution v3's registry did not start"
    plain=$REGISTRY_ADDR
  fi
  registry_use legacy
fi

# api_only REF: REF's signatures are found through the referrers API alone:
# it lists one, and no tag of its repository holds any.
api_only() {
  local ref=$1 digest=${1##*@} repo
  repo=$(repo_of "$ref")
  curl -fsS -m 30 "http://$api/v2/$repo/referrers/$digest" | grep -q '"digest"' ||
    { because "the referrers API lists nothing for $ref"; return 1; }
  ! curl -fsS -m 30 "http://$api/v2/$repo/tags/list" | grep -q "sha256-" ||
    { because "$repo has a signature tag: $(curl -fsS -m 30 "http://$api/v2/$repo/tags/list")"; return 1; }
}

t_bundle_referrers_api() {
  api_only "${api_images[1]}" && api_only "${api_images[2]}" || return 1
  agree "bundle, referrers API" 0 "${api_images[1]}" || return 1
  policy_key "$other_pub"
  agree "bundle, referrers API, another key" 1 "${api_images[1]}" "no signature verifies: .*signature" || return 1
  policy_keyless "$identity" "$oidc_issuer"
  agree "keyless bundle, referrers API" 0 "${api_images[2]}" || return 1
  policy_keyless "$identity" https://accounts.google.com
  agree "keyless bundle, referrers API, another issuer" 1 "${api_images[2]}" "no signature verifies: .*certificate: issued by"
}

# mirror_from_api DEST: mirrors the instance of the referrers API registry
# to oci://DEST/mirrored; sets kustomize and helm (the caller's locals) to
# its two signed images there.
mirror_from_api() {
  fresh_cache
  write_instance "$work/api-source.yaml" "artifact: oci://$api/flux-operator-manifests:v1"
  sed -i "s|registry: $legacy/fluxcd|registry: $api/fluxcd|" "$work/api-source.yaml"
  fx mirror "oci://$1/mirrored" "$work/api-source.yaml"
  succeeded "mirror to $1" || return 1
  kustomize=$1/mirrored/kustomize-controller@${api_images[1]##*@}
  helm=$1/mirrored/helm-controller@${api_images[2]##*@}
}

t_mirror_referrers_api() {
  # mirror copies the bundles the referrers API lists: the mirror, in a
  # registry that serves the API, verifies through it as its source does.
  local kustomize helm
  mirror_from_api "$api" || return 1
  api_only "$kustomize" && api_only "$helm" || return 1
  agree "the mirror's bundle, referrers API" 0 "$kustomize" || return 1
  policy_keyless "$identity" "$oidc_issuer"
  agree "the mirror's keyless bundle, referrers API" 0 "$helm"
}

# tag_lists REF: the referrers tag of REF (in the plain registry) lists a
# Sigstore bundle, once, with the descriptor fields the referrers tag schema
# asks for; and the registry serves no referrers API.
tag_lists() {
  local ref=$1 digest=${1##*@} repo code
  repo=$(repo_of "$ref")
  code=$(curl -s -o /dev/null -w '%{http_code}' -m 30 "http://$plain/v2/$repo/referrers/$digest")
  [ "$code" = 404 ] || { because "$plain serves the referrers API after all (HTTP $code)"; return 1; }
  curl -fsS -m 30 -H "Accept: application/vnd.oci.image.index.v1+json" \
    "http://$plain/v2/$repo/manifests/${digest/:/-}" >"$work/tag.json" ||
    { because "$repo has no referrers tag ${digest/:/-}"; return 1; }
  python3 - "$work/tag.json" <<'PY' || { because "the referrers tag of $ref: $(head -c 400 "$work/tag.json")"; return 1; }
import json, sys
index = json.load(open(sys.argv[1]))
assert index["mediaType"] == "application/vnd.oci.image.index.v1+json", index
bundles = [m for m in index["manifests"] if m["artifactType"].startswith("application/vnd.dev.sigstore.bundle")]
assert len(bundles) == 1, bundles
assert len({m["digest"] for m in index["manifests"]}) == len(index["manifests"]), "a duplicate"
assert bundles[0]["mediaType"] == "application/vnd.oci.image.manifest.v1+json" and bundles[0]["size"] > 0, bundles
assert bundles[0]["annotations"], bundles
PY
}

t_mirror_referrers_api_to_tag() {
  # mirror from a registry serving the referrers API to one serving none:
  # each bundle copied is added to its subject's referrers tag there, so
  # that cosign and fluxopctl find it in the mirror as in the source.
  local kustomize helm
  mirror_from_api "$plain" || return 1
  tag_lists "$kustomize" && tag_lists "$helm" || return 1
  # Again, everything there: the tags list each bundle still once.
  mirror_from_api "$plain" || return 1
  tag_lists "$kustomize" && tag_lists "$helm" || return 1
  agree "the mirror's bundle, referrers tag" 0 "$kustomize" || return 1
  policy_keyless "$identity" "$oidc_issuer"
  agree "the mirror's keyless bundle, referrers tag" 0 "$helm"
}

t_attestation_referrers_api_to_tag() {
  # An attestation mirrored with the image: the referrers tag mirror writes
  # carries each referrer's annotations (neither cosign's tag nor
  # go-containerregistry's API does), so an attestation that says its
  # predicate type there is named without being fetched.
  local kustomize helm mirrored
  attest "${api_images[3]}" || return 1
  mirror_from_api "$plain" || return 1
  mirrored=$plain/mirrored/notification-controller@${api_images[3]##*@}
  agree_fluxopctl_refuses "a mirrored attestation" "$mirrored" \
    'no signature verifies: referrers: 1 attestation \(predicate type "https://slsa\.dev/provenance/v1"\), not a signature$'
}

# --- verify FILE --------------------------------------------------------------------

# write_instance FILE [LINE...]: a FluxInstance of the test distribution's
# version, its images from the registry; each LINE added to .spec.distribution.
write_instance() {
  local file=$1 line
  shift
  cat >"$file" <<YAML
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.9.x"
    registry: $legacy/fluxcd
    variant: upstream-alpine
YAML
  for line in "$@"; do echo "    $line" >>"$file"; done
}

t_instance() {
  write_instance "$work/instance.yaml" "artifact: oci://$legacy/flux-operator-manifests:v1"
  fx verify "$work/instance.yaml" --key "$pub"
  [ $rc -eq 1 ] || { because "verify FILE: exit $rc (want 1: notification-controller is not signed)"; return 1; }
  [ "$(lines "$work/out")" -eq 4 ] || { because "verify FILE: $(lines "$work/out") verified lines, not 4 (the artifact and 3 images)"; return 1; }
  grep -q "^oci://$legacy/flux-operator-manifests@$artifact_digest verified" "$work/out" ||
    { because "verify FILE: the artifact is not among the verified: $(head -c 300 "$work/out")"; return 1; }
  [ "$(grep -c '^error:' "$work/err")" -eq 1 ] &&
    grep -q "^error: oci://$legacy/fluxcd/notification-controller@${images[3]##*@}: not signed" "$work/err" ||
    { because "verify FILE: stderr does not name notification-controller alone: $(first_err)"; return 1; }
  # Without it (the instance's components), everything verifies; -o json lists the four.
  cat >>"$work/instance.yaml" <<YAML
  components: [source-controller, kustomize-controller, helm-controller]
YAML
  fx verify "$work/instance.yaml" --key "$pub" -o json
  succeeded "verify FILE -o json, every image signed" || return 1
  python3 - "$work/out" <<'PY' || { because "verify FILE -o json: $(head -c 300 "$work/out")"; return 1; }
import json, sys
verified = json.load(open(sys.argv[1]))
assert len(verified) == 4, len(verified)
assert all(v["digest"].startswith("sha256:") and v["signature"] for v in verified), verified
PY
}

# --- --verify on the commands that pull -----------------------------------------

# The signed artifact, and the same bytes in a repository where they are not signed.
unsigned_artifact=oci://$legacy/unsigned-manifests:v1
registry_push_artifact unsigned-manifests:v1 "$dist" flux flux-images >/dev/null ||
  abort "setup: pushing the unsigned copy of the test distribution failed"

t_pull_verify() {
  fresh_cache
  fx pull --verify --key "$pub" "oci://$legacy/flux-operator-manifests:v1"
  succeeded "pull --verify" || return 1
  grep -q "^verified the signature of oci://$legacy/flux-operator-manifests@$artifact_digest" "$work/err" ||
    { because "pull --verify says nothing of the signature: $(first_err)"; return 1; }
  # Another key, an unsigned artifact: refused, nothing written to the cache.
  fresh_cache
  fx pull --verify --key "$other_pub" "oci://$legacy/flux-operator-manifests:v1"
  one_line_error "pull --verify, another key" "^error: oci://$legacy/flux-operator-manifests@$artifact_digest: no signature verifies: .*signature" || return 1
  fx pull --verify --key "$pub" "$unsigned_artifact"
  one_line_error "pull --verify, unsigned" "^error: oci://$legacy/unsigned-manifests@sha256:[0-9a-f]{64}: not signed" || return 1
  [ -z "$(cache_listing)" ] ||
    { because "a refused pull wrote to the cache: $(cache_listing | head -3 | tr '\n' ' ')"; return 1; }
  fx pull --verify --offline --key "$pub" "oci://$legacy/flux-operator-manifests:v1"
  one_line_error "pull --verify --offline" "--verify: .*--offline"
}

t_verified_remembered() {
  # A signature verified online is remembered in the cache, sealed: --verify
  # --offline then trusts it, and only it. A record rewritten by whoever can
  # write the cache, or sealed under another key, does not open.
  fresh_cache
  local ref=oci://$legacy/flux-operator-manifests:v1 record
  fx pull --verify --key "$pub" "$ref"
  succeeded "pull --verify" || return 1
  record=$(find "$(cache_root)/verified" -type f 2>/dev/null)
  [ "$(grep -c '' <<<"$record")" -eq 1 ] && [ -n "$record" ] ||
    { because "pull --verify left $(grep -c . <<<"$record") verified records, not 1"; return 1; }
  fx pull --verify --offline --key "$pub" "$ref"
  succeeded "pull --verify --offline, verified before" || return 1
  write_instance "$work/remembered.yaml"
  fx build "$work/remembered.yaml" --verify --offline --key "$pub" --distribution-artifact "$ref"
  succeeded "build --verify --offline, verified before" || return 1
  fx pull --verify --offline --key "$other_pub" "$ref"
  one_line_error "pull --verify --offline, another key" "not verified online before" || return 1
  printf 'hmac-sha256:%064d' 0 >"$record"
  fx pull --verify --offline --key "$pub" "$ref"
  one_line_error "pull --verify --offline, a forged record" "not verified online before" || return 1
  # Verified again online, then the seal's key replaced (another machine's cache).
  fx pull --verify --key "$pub" "$ref"
  succeeded "pull --verify again" || return 1
  rm -f "$HOME/.local/state/fluxopctl/cache.key"
  fx pull --verify --offline --key "$pub" "$ref"
  one_line_error "pull --verify --offline, another seal key" "not verified online before"
}

t_build_images_mirror_verify() {
  fresh_cache
  write_instance "$work/build.yaml"
  fx build "$work/build.yaml" --verify --key "$pub" --distribution-artifact "oci://$legacy/flux-operator-manifests:v1"
  succeeded "build --verify" || return 1
  grep -q "kind: Deployment" "$work/out" || { because "build --verify rendered no Deployment"; return 1; }
  fx build "$work/build.yaml" --verify --key "$pub" --distribution-artifact "$unsigned_artifact"
  [ $rc -eq 1 ] && [ ! -s "$work/out" ] && grep -q "not signed" "$work/err" ||
    { because "build --verify of the unsigned artifact: exit $rc: $(first_err)"; return 1; }
  fx images "$work/build.yaml" --verify --key "$other_pub" --distribution-artifact "oci://$legacy/flux-operator-manifests:v1"
  [ $rc -eq 1 ] && [ ! -s "$work/out" ] && grep -q "signature" "$work/err" ||
    { because "images --verify with another key: exit $rc: $(first_err)"; return 1; }
  fx mirror "oci://$legacy/mirrored" "$work/build.yaml" --dry-run --verify --key "$pub" \
    --distribution-artifact "$unsigned_artifact"
  [ $rc -eq 1 ] && [ ! -s "$work/out" ] && grep -q "not signed" "$work/err" ||
    { because "mirror --verify of the unsigned artifact: exit $rc: $(first_err)"; return 1; }
  fx build "$work/build.yaml" --key "$pub"
  [ $rc -eq 2 ] || because "--key without --verify: exit $rc, not 2"
}

t_key_algorithms() {
  # The key types cosign signs with, each imported into cosign from a key
  # openssl made, signing a blob: ECDSA P-256/SHA-256 (generate-key-pair's),
  # P-384/SHA-384, P-521/SHA-512, RSA 3072 PKCS#1 v1.5 and Ed25519. Each
  # verifies, and fails over another blob. (cosign v3.1.3's own verify-blob
  # refuses its P-384 and P-521 signatures, which openssl and the registry's
  # pairing accept: it is no oracle there.)
  local dir=$work/algorithms kind
  mkdir -p "$dir" && head -c 4096 /dev/urandom >"$dir/blob" && cp "$dir/blob" "$dir/other" &&
    printf x >>"$dir/other" || { because "writing the blobs"; return 1; }
  (
    cd "$dir" || exit 1
    openssl ecparam -name secp384r1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out p384.pk8 &&
      openssl ecparam -name secp521r1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out p521.pk8 &&
      openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:3072 -out rsa3072.pk8 &&
      openssl genpkey -algorithm ed25519 -out ed25519.pk8
  ) 2>"$work/err" || { because "openssl: $(first_err)"; return 1; }
  for kind in p384 p521 rsa3072 ed25519; do
    cosign_run import-key-pair --key "$dir/$kind.pk8" --output-key-prefix "$dir/$kind"
    succeeded "cosign import-key-pair $kind" || return 1
  done
  cp "$key" "$dir/p256.key" && cp "$pub" "$dir/p256.pub" || { because "copying the P-256 key"; return 1; }
  for kind in p256 p384 p521 rsa3072 ed25519; do
    sign_blob "$dir/$kind.key" "$dir/$kind.json" "$dir/blob" || return 1
    fx verify bundle --key "$dir/$kind.pub" --bundle "$dir/$kind.json" "$dir/blob"
    succeeded "verify bundle, $kind" || return 1
    fx verify bundle --key "$dir/$kind.pub" --bundle "$dir/$kind.json" "$dir/other"
    one_line_error "verify bundle of another blob, $kind" "does not verify|is not the artifact" || return 1
  done
}

t_verify_directory() {
  # A directory has no signature: --verify with one is refused, however it
  # is given and by every command that verifies, before anything is written.
  fresh_cache
  write_instance "$work/dir.yaml"
  local given
  for given in "$dist" "file://$dist"; do
    fx build "$work/dir.yaml" --verify --key "$pub" --distribution-artifact "$given"
    one_line_error "build --verify --distribution-artifact $given" \
      "^error: --verify: --distribution-artifact: \"$given\" is a directory, which has no signature" || return 1
  done
  FLUXOPCTL_DISTRIBUTION=$dist fx images "$work/dir.yaml" --verify --key "$pub"
  one_line_error "images --verify, FLUXOPCTL_DISTRIBUTION a directory" \
    "^error: --verify: FLUXOPCTL_DISTRIBUTION: .* is a directory" || return 1
  fx mirror "oci://$legacy/from-directory" "$work/dir.yaml" --verify --key "$pub" --distribution-artifact "$dist"
  one_line_error "mirror --verify from a directory" "^error: --verify: .* is a directory" || return 1
  ! curl -fsS -m 30 "http://$legacy/v2/_catalog" | grep -q from-directory ||
    { because "mirror --verify from a directory copied something"; return 1; }
  # Without --verify, the directory is read.
  fx build "$work/dir.yaml" --distribution-artifact "$dist"
  succeeded "build from a directory without --verify"
}

t_mirror_signatures() {
  # mirror copies the signatures with the images and the artifact: the
  # mirror verifies as its source, notification-controller alone unsigned,
  # and the bundle-only image through its copied referrers tag.
  fresh_cache
  write_instance "$work/source.yaml" "artifact: oci://$legacy/flux-operator-manifests:v1"
  fx mirror "oci://$legacy/mirrored" "$work/source.yaml"
  succeeded "mirror" || return 1
  write_instance "$work/mirrored.yaml" "artifact: oci://$legacy/mirrored/flux-operator-manifests:v1"
  sed -i "s|registry: $legacy/fluxcd|registry: $legacy/mirrored|" "$work/mirrored.yaml"
  fx verify "$work/mirrored.yaml" --key "$pub"
  [ $rc -eq 1 ] && [ "$(lines "$work/out")" -eq 4 ] && [ "$(grep -c '^error:' "$work/err")" -eq 1 ] &&
    grep -q "^error: oci://$legacy/mirrored/notification-controller@.*: not signed" "$work/err" ||
    { because "verify of the mirror: exit $rc, $(lines "$work/out") verified: $(grep '^error' "$work/err" | head -2 | tr '\n' ' ')"; return 1; }
  grep -q "^oci://$legacy/mirrored/flux-operator-manifests@$artifact_digest verified" "$work/out" ||
    { because "the mirrored artifact is not verified: $(head -c 300 "$work/out")"; return 1; }
  # helm-controller's bundle went too, under its referrers tag.
  local helm=${images[2]##*@}
  curl -fsS -m 30 "http://$legacy/v2/mirrored/helm-controller/tags/list" | grep -q "\"${helm/:/-}\"" ||
    { because "mirrored/helm-controller has no referrers tag ${helm/:/-}"; return 1; }
}

t_mirror_verify() {
  # mirror --verify: the artifact and every image verified before anything
  # is copied; notification-controller, unsigned, stops it with nothing copied.
  fresh_cache
  write_instance "$work/to-verify.yaml" "artifact: oci://$legacy/flux-operator-manifests:v1"
  fx mirror "oci://$legacy/verified-mirror" "$work/to-verify.yaml" --verify --key "$pub"
  [ $rc -eq 1 ] && [ ! -s "$work/out" ] && [ "$(grep -c '^error:' "$work/err")" -eq 1 ] &&
    grep -q "^error: oci://$legacy/fluxcd/notification-controller@${images[3]##*@}: not signed" "$work/err" ||
    { because "mirror --verify, an image unsigned: exit $rc: $(grep '^error' "$work/err")"; return 1; }
  ! curl -fsS -m 30 "http://$legacy/v2/_catalog" | grep -q verified-mirror ||
    { because "mirror --verify copied something before refusing"; return 1; }
  echo "  components: [source-controller, kustomize-controller, helm-controller]" >>"$work/to-verify.yaml"
  fx mirror "oci://$legacy/verified-mirror" "$work/to-verify.yaml" --verify --key "$pub"
  succeeded "mirror --verify, every image signed"
}

t_keyless_defaults() {
  # Without --key: the default identities, which a key's signature is not.
  fx verify "oci://${images[1]}"
  one_line_error "verify without --key" "no signature verifies: .*signed by a key"
}

t_bad_flags() {
  fx verify "oci://${images[1]}" --key "$pub" --certificate-identity x
  [ $rc -eq 2 ] || { because "--key with --certificate-identity: exit $rc, not 2"; return 1; }
  fx verify "oci://${images[1]}" --key "$work/missing.pub"
  [ $rc -ne 0 ] && grep -q "missing.pub" "$work/err" || { because "a missing --key file is not named: $(first_err)"; return 1; }
  # A value and a regular expression for the same field: two rules where
  # either might be taken to suffice; refused, in either order, before any
  # request or file.
  local flag other pair
  for flag in --certificate-oidc-issuer --certificate-identity; do
    other=--certificate-identity-regexp
    [ "$flag" = --certificate-oidc-issuer ] || other=--certificate-oidc-issuer-regexp
    for pair in "$flag x $flag-regexp ." "$flag-regexp . $flag x"; do
      # shellcheck disable=SC2086 # the pair's words
      fx verify "oci://${images[1]}" --trusted-root "$trusted_root" "$other" . $pair
      [ $rc -eq 2 ] && [ ! -s "$work/out" ] && [ "$(lines "$work/err")" -eq 1 ] &&
        grep -q "^error: $flag-regexp: give it or $flag, not both$" "$work/err" ||
        { because "verify $pair: exit $rc: $(first_err)"; return 1; }
    done
  done
}

# sign_blob KEY BUNDLE BLOB: cosign signs BLOB with KEY into BUNDLE (a v0.3
# bundle), without a transparency log.
sign_blob() {
  cosign_run sign-blob --key "$1" --bundle "$2" --tlog-upload=false --use-signing-config=false "$3"
  succeeded "cosign sign-blob $(basename "$1")"
}

t_blob_bundle() {
  # A blob cosign signs, beyond the bounded reader's 64 MiB (hashed as it is
  # read), verified by cosign and by `verify bundle` from a directory that
  # holds a file named as the blob's digest: the blob's content decides,
  # never the working directory. A key whose path holds an escape sequence is
  # named escaped.
  local dir=$work/blob blob digest odd_key
  mkdir -p "$dir" && truncate -s 65M "$dir/big.bin" && printf x >>"$dir/big.bin" ||
    { because "writing a 65 MiB blob failed"; return 1; }
  blob=$dir/big.bin
  digest=$(sha256sum "$blob" | cut -d' ' -f1)
  : >"$dir/sha256:$digest"
  sign_blob "$key" "$dir/bundle.json" "$blob" || return 1
  cosign_run verify-blob "${cosign_policy[@]}" --bundle "$dir/bundle.json" "$blob"
  succeeded "cosign verify-blob, the oracle" || return 1
  odd_key=$dir/$'signer\e[31m.pub'
  cp "$pub" "$odd_key" || { because "copying the key"; return 1; }
  cd "$dir" || return 1
  fx verify bundle --key "$odd_key" --bundle bundle.json big.bin
  cd - >/dev/null || return 1
  succeeded "verify bundle, a file named as its digest beside it" || return 1
  grep -q "^sha256:$digest verified, signed by " "$work/out" && grep -qF 'signer\x1b[31m.pub' "$work/out" ||
    { because "verify bundle says: $(head -c 300 "$work/out" | cat -v)"; return 1; }
  ! grep -q $'\e' "$work/out" || { because "verify bundle wrote an escape sequence to the terminal"; return 1; }
  printf x >>"$blob"
  fx verify bundle --key "$pub" --bundle "$dir/bundle.json" "$blob"
  one_line_error "verify bundle of another blob" "" || return 1
}

for name in artifact index image bundle_referrers_tag missing other_key \
  changed_payload other_digest attestation_not_signature signatures_beyond_bound keyless keyless_regexp keyless_other_identity keyless_other_issuer \
  keyless_untrusted_ca keyless_untrusted_tsa keyless_other_digest instance pull_verify verified_remembered build_images_mirror_verify verify_directory key_algorithms mirror_signatures mirror_verify keyless_defaults \
  bad_flags blob_bundle bundle_referrers_api mirror_referrers_api mirror_referrers_api_to_tag attestation_referrers_api_to_tag; do
  policy_key "$pub"
  if [[ $name == *referrers_api* ]] && [ -z "$api" ]; then
    skip "$name" "go-containerregistry's registry (the referrers API) could not be built"
    continue
  fi
  if [[ $name == *_to_tag ]] && [ -z "$plain" ]; then
    skip "$name" "distribution v3's registry could not be built"
    continue
  fi
  if "t_$name"; then pass "$name"; else fail "$name" "$REASON"; fi
done

summary
