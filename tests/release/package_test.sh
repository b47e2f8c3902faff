#!/usr/bin/env bash
# scripts/release on the binary the tests ran (--binary BIN, amd64): its
# artifacts, each checked as a user would check it. SHA256SUMS verifies; the
# tarball holds the binary (BIN stripped, byte for byte), the man page and
# the three completions; the .deb's control says the version and
# `Depends: ca-certificates`, its files are where Debian's tools look, and
# lintian finds nothing but what the package's overrides explain; the SBOM
# is SPDX 2.3 and names every archive the linker took (its map) with a
# Debian version and source package; the image layout's binary has the
# tarball's digest, and its labels the version. The version is `fluxopctl
# version`'s everywhere, and `git describe`'s.
#
#   tests/release/package_test.sh BIN ROOT
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BIN ROOT" >&2
  exit 2
fi
root=$(cd "$2" && pwd) || exit 2
bin=$(realpath "$1") || exit 2

# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"

[ -x "$bin" ] || abort "setup: $bin is not an executable"
work=$(mktemp -d "${TMPDIR:-/tmp}/fluxopctl-package-test.XXXXXX") || exit 1
on_exit 'rm -rf "$work"'
dist=$work/dist

version=$("$bin" version --client | awk '{ print $2 }')
if ! "$root/scripts/release" --arch amd64 --binary "$bin" --output "$dist" >"$work/release.out" 2>"$work/release.err"; then
  show "$work/release.err"
  abort "scripts/release --binary $bin failed: $(tail -n 1 "$work/release.err")"
fi
sed 's/^/  /' "$work/release.out"
deb_version=${version/-/+}
deb_version=${deb_version//-/.}
tarball=$dist/fluxopctl-$version-linux-amd64.tar.gz
deb=$dist/fluxopctl_${deb_version}_amd64.deb
sbom=$dist/fluxopctl-$version-linux-amd64.spdx.json
image=$dist/fluxopctl-$version-image.oci.tar

t_version() {
  local described
  [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9]+-g[0-9a-f]{7,})?(-dirty)?$ ]] ||
    { echo "version '$version' is not X.Y.Z[-N-gHASH][-dirty]"; return 1; }
  # git describe's, as cmake/build_info.cmake reads it (before the first tag: the project's version).
  if described=$(git -C "$root" describe --tags --match 'v[0-9]*' --abbrev=7 2>/dev/null); then
    [[ $version == "${described#v}" || $version == "${described#v}-dirty" ]] ||
      { echo "version $version, git describe $described"; return 1; }
  else
    [[ $version == *-$(git -C "$root" rev-list --count HEAD)-g$(git -C "$root" rev-parse --short=7 HEAD)* ]] ||
      { echo "version $version is not N-gHASH of HEAD"; return 1; }
  fi
  [ "$("$bin" version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')" = "$version" ] ||
    { echo "version -o json differs from version"; return 1; }
}

t_sums() {
  local f
  (cd "$dist" && sha256sum --quiet -c SHA256SUMS) || { echo "sha256sum -c SHA256SUMS failed"; return 1; }
  for f in "$tarball" "$deb" "$sbom" "$image"; do
    [ -f "$f" ] || { echo "${f##*/} is missing (dist: $(ls "$dist" | tr '\n' ' '))"; return 1; }
    grep -q "  ${f##*/}\$" "$dist/SHA256SUMS" || { echo "SHA256SUMS lacks ${f##*/}"; return 1; }
  done
}

t_tarball() {
  local d=$work/tar expected
  mkdir -p "$d" && tar -C "$d" -xzf "$tarball" || { echo "tar -xzf failed"; return 1; }
  expected="fluxopctl-$version-linux-amd64/LICENSE
fluxopctl-$version-linux-amd64/completions/_fluxopctl
fluxopctl-$version-linux-amd64/completions/fluxopctl.bash
fluxopctl-$version-linux-amd64/completions/fluxopctl.fish
fluxopctl-$version-linux-amd64/fluxopctl
fluxopctl-$version-linux-amd64/fluxopctl.1"
  [ "$(cd "$d" && find . -type f | sed 's|^\./||' | sort)" = "$expected" ] ||
    { echo "tarball holds: $(cd "$d" && find . -type f | tr '\n' ' ')"; return 1; }
  cmp -s "$d/fluxopctl-$version-linux-amd64/LICENSE" "$root/LICENSE" ||
    { echo "the tarball's LICENSE is not the tree's"; return 1; }
  strip --strip-all -R .comment -o "$work/stripped" "$bin"
  cmp -s "$work/stripped" "$d/fluxopctl-$version-linux-amd64/fluxopctl" ||
    { echo "the tarball's binary is not the tested binary, stripped"; return 1; }
  file -b "$d/fluxopctl-$version-linux-amd64/fluxopctl" | grep -q 'statically linked' ||
    { echo "file: $(file -b "$d/fluxopctl-$version-linux-amd64/fluxopctl")"; return 1; }
}

t_deb() {
  local field
  [ "$(dpkg-deb -f "$deb" Version)" = "$deb_version" ] || { echo "Version: $(dpkg-deb -f "$deb" Version)"; return 1; }
  [ "$(dpkg-deb -f "$deb" Depends)" = "ca-certificates" ] || { echo "Depends: $(dpkg-deb -f "$deb" Depends)"; return 1; }
  field=$(dpkg-deb -f "$deb" Built-Using)
  for source in curl openssl glibc; do
    [[ $field == *"$source (= "* ]] || { echo "Built-Using lacks $source: $field"; return 1; }
  done
  dpkg-deb -c "$deb" | awk '{ print $6 }' >"$work/deb.files"
  for path in ./usr/bin/fluxopctl ./usr/share/man/man1/fluxopctl.1.gz \
    ./usr/share/bash-completion/completions/fluxopctl ./usr/share/zsh/vendor-completions/_fluxopctl \
    ./usr/share/fish/vendor_completions.d/fluxopctl.fish ./usr/share/doc/fluxopctl/copyright; do
    grep -qx -- "$path" "$work/deb.files" || { echo ".deb lacks $path"; return 1; }
  done
  dpkg-deb -x "$deb" "$work/deb" && cmp -s "$work/deb/usr/bin/fluxopctl" "$work/stripped" ||
    { echo "the .deb's binary is not the tarball's"; return 1; }
  grep -qx "License: Apache-2.0" "$work/deb/usr/share/doc/fluxopctl/copyright" ||
    { echo "the .deb's copyright does not say fluxopctl's licence"; return 1; }
}

t_lintian() {
  lintian --fail-on error,warning "$deb" >"$work/lintian.out" 2>&1 ||
    { echo "lintian: $(grep -m1 -E '^[EW]:' "$work/lintian.out" || tail -n 1 "$work/lintian.out")"; cat "$work/lintian.out"; return 1; }
  ! grep -qE '^[EW]:' "$work/lintian.out" || { echo "lintian: $(grep -m1 -E '^[EW]:' "$work/lintian.out")"; return 1; }
}

t_sbom() {
  python3 - "$sbom" "$(dirname "$bin")/fluxopctl.map" "$work/stripped" <<'PY'
import hashlib, json, os, re, sys
doc = json.load(open(sys.argv[1]))
problems = []
if doc.get("spdxVersion") != "SPDX-2.3" or doc.get("dataLicense") != "CC0-1.0":
    problems.append("not an SPDX-2.3 document")
for key in ("SPDXID", "name", "documentNamespace", "creationInfo", "packages", "relationships"):
    if key not in doc:
        problems.append(f"no {key}")
main = doc["packages"][0]
if main.get("licenseDeclared") != "Apache-2.0":
    problems.append(f"fluxopctl's licenseDeclared is {main.get('licenseDeclared')}")
digest = hashlib.sha256(open(sys.argv[3], "rb").read()).hexdigest()
if main["checksums"] != [{"algorithm": "SHA256", "checksumValue": digest}]:
    problems.append("the binary's checksum is not the shipped binary's")
linked = {r["relatedSpdxElement"] for r in doc["relationships"] if r["relationshipType"] == "STATIC_LINK"}
libs = {p["SPDXID"]: p for p in doc["packages"][1:]}
if set(libs) != linked:
    problems.append("packages and STATIC_LINK relationships differ")
named = " ".join(p.get("comment", "") for p in libs.values())
archives = {os.path.basename(m) for m in re.findall(r"^(/\S+?\.a)\(", open(sys.argv[2]).read(), re.M)}
for archive in sorted(archives):
    if not archive.startswith("libfluxop_") and archive not in named:
        problems.append(f"{archive} is linked but not in the SBOM")
for p in libs.values():
    if not p.get("versionInfo") or not p.get("sourceInfo", "").startswith("Debian source package "):
        problems.append(f"{p['name']}: no version or source package")
for want in ("libcurl", "libssl-dev", "libre2-dev", "libyaml-cpp-dev", "zlib1g-dev", "libc6-dev", "libnghttp2-dev",
             "nlohmann-json3-dev", "libcli11-dev"):
    if want not in {p["name"] for p in libs.values()}:
        problems.append(f"{want} is not in the SBOM")
if problems:
    print("; ".join(problems))
    sys.exit(1)
PY
}

t_image() {
  local d=$work/image
  mkdir -p "$d" && tar -C "$d" -xf "$image" || { echo "tar -xf of the image failed"; return 1; }
  python3 - "$d" "$version" "$work/stripped" <<'PY'
import hashlib, io, json, os, sys, tarfile
layout, version, binary = sys.argv[1:]
def blob(digest):
    return open(os.path.join(layout, "blobs", *digest.split(":")), "rb").read()
problems = []
top = json.load(open(os.path.join(layout, "index.json")))["manifests"]
if [m["annotations"]["org.opencontainers.image.ref.name"] for m in top] != [version]:
    problems.append(f"tags {top}")
body = json.loads(blob(top[0]["digest"]))
manifests = body["manifests"] if "manifests" in body else [top[0]]
want = hashlib.sha256(open(binary, "rb").read()).hexdigest()
for m in manifests:
    manifest = json.loads(blob(m["digest"]))
    config = json.loads(blob(manifest["config"]["digest"]))
    if config["architecture"] != "amd64":
        continue
    labels = config["config"].get("Labels", {})
    if labels.get("org.opencontainers.image.version") != version:
        problems.append(f"label version {labels.get('org.opencontainers.image.version')}")
    if labels.get("org.opencontainers.image.licenses") != "Apache-2.0":
        problems.append(f"label licenses {labels.get('org.opencontainers.image.licenses')}")
    if config["config"].get("User") != "65532:65532":
        problems.append(f"user {config['config'].get('User')}")
    names = {}
    for layer in manifest["layers"]:
        with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"]))) as t:
            for member in t.getmembers():
                names[member.name.lstrip("./")] = member
                if member.name.lstrip("./") == "usr/bin/fluxopctl":
                    got = hashlib.sha256(t.extractfile(member).read()).hexdigest()
                    if got != want:
                        problems.append(f"image binary sha256 {got[:16]}, tarball's {want[:16]}")
    files = sorted(n for n, m in names.items() if m.isfile())
    extra = [f for f in files if f not in ("usr/bin/fluxopctl", "etc/ssl/certs/ca-certificates.crt",
                                           "etc/passwd", "etc/group", "etc/nsswitch.conf")
             and not f.startswith("usr/share/doc/")]
    if extra:
        problems.append(f"the image holds more: {extra[:5]}")
    if "usr/bin/fluxopctl" not in names:
        problems.append("no usr/bin/fluxopctl")
    if "usr/share/doc/fluxopctl/LICENSE" not in names:
        problems.append("no usr/share/doc/fluxopctl/LICENSE")
    if any(n in names for n in ("bin/sh", "usr/bin/sh")):
        problems.append("a shell")
    break
else:
    problems.append("no amd64 image")
if problems:
    print("; ".join(problems))
    sys.exit(1)
PY
}

# A binary holding a source path (one more section, as a __FILE__ would
# leave it): refused before anything is written, the path named.
t_source_path() {
  local tainted=$work/tainted out=$work/tainted-dist
  mkdir -p "$tainted"
  printf '%s' /build/src/core/sigstore/certificate.cpp >"$work/path.txt"
  objcopy --add-section .fluxop_path="$work/path.txt" "$bin" "$tainted/fluxopctl" &&
    cp "$(dirname "$bin")/fluxopctl.map" "$tainted/" || { echo "objcopy failed"; return 1; }
  if "$root/scripts/release" --arch amd64 --binary "$tainted/fluxopctl" --output "$out" \
    >/dev/null 2>"$work/tainted.err"; then
    echo "scripts/release took a binary holding src/core/"
    return 1
  fi
  grep -q "the binary holds source paths: .*src/core/" "$work/tainted.err" ||
    { echo "its error: $(tail -n 1 "$work/tainted.err")"; return 1; }
  [ -z "$(ls -A "$out" 2>/dev/null)" ] || { echo "it wrote $(ls "$out" | tr '\n' ' ')"; return 1; }
}

check "version: git describe's, also -o json" t_version
check "SHA256SUMS lists and verifies every artifact" t_sums
check "tarball: the tested binary stripped (static), man page, completions, LICENSE" t_tarball
check ".deb: version, Depends: ca-certificates, Built-Using, files in Debian's places, licence" t_deb
check ".deb: lintian finds nothing but the explained overrides" t_lintian
check "SBOM: SPDX 2.3, every archive the linker took, versions and source packages, fluxopctl's licence" t_sbom
check "image: the tarball's binary (same sha256), CA bundle, non-root user, version and licence labels, LICENSE, no shell" t_image
check "a binary holding a source path is refused, nothing written" t_source_path
summary
