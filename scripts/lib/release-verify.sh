#!/usr/bin/env bash
# scripts/release --verify: proves the release in DIST on this machine, each
# step an `ok`/`FAIL` line with its figures (tests/lib/harness.sh), closing
# with `N passed, M failed`:
#
#   - each architecture's binary (from its tarball) in a chroot that holds
#     nothing else (tests/release/chroot_test.sh): version, build, pull over
#     TLS; arm64 under Debian's qemu-aarch64-static
#   - the image's binary of each platform has the tarball's sha256
#   - lintian on each .deb
#   - a fresh minimal Debian 13 root (mmdebstrap, from deb.debian.org) where
#     the README's Install commands work: SHA256SUMS checked, the .deb
#     installed with `apt-get install ./fluxopctl_*.deb`, `fluxopctl version`,
#     `man -w fluxopctl`, the bash completion; the tarball's binary too
#   - a second release of the same commit, cloned into another directory and
#     built without ccache, is byte for byte the same
#
#   scripts/lib/release-verify.sh DIST VERSION DEB_VERSION ARCH...
#
# RELEASE_VERIFY_ONLY (chroot image lintian debian13 reproducible, any of
# them) runs only those steps.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dist=$1 version=$2 deb_version=$3
shift 3
arches=("$@")

# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/fluxopctl-release-verify.XXXXXX") || exit 1
on_exit 'rm -rf "$work"'
echo "== verifying $dist (fluxopctl $version)"
# step NAME: whether RELEASE_VERIFY_ONLY lets step NAME run.
step() { [ -z "${RELEASE_VERIFY_ONLY:-}" ] || [[ " $RELEASE_VERIFY_ONLY " == *" $1 "* ]]; }
# verify NAME CASE...: CASE's ok/FAIL line, then its figures (what it
# printed) and its time, whether it passed or not: the run is the proof
# (harness.sh's check shows them only for a failure).
verify() {
  local name=$1 start=$SECONDS status
  shift
  "$@" >"$work/step.out" 2>&1
  status=$?
  if [ $status -eq 0 ]; then pass "$name"; else fail "$name" "$(head -n 1 "$work/step.out")"; fi
  sed 's/^/  | /' "$work/step.out"
  echo "  ($((SECONDS - start)) s)"
  return $status
}

# The binaries as users get them: out of the tarballs.
for arch in "${arches[@]}"; do
  mkdir -p "$work/tar-$arch"
  tar -C "$work/tar-$arch" -xzf "$dist/fluxopctl-$version-linux-$arch.tar.gz"
  ls -l "$work/tar-$arch/fluxopctl-$version-linux-$arch/fluxopctl" | awk -v a="$arch" '{ print "  " a ": " $5 " bytes" }'
  file -b "$work/tar-$arch/fluxopctl-$version-linux-$arch/fluxopctl" | sed "s/^/  $arch: /"
done

chroot_case() {
  local arch=$1 emulator=()
  [ "$arch" = amd64 ] || emulator=(/usr/bin/qemu-aarch64-static)
  local start=$SECONDS
  bash "$root/tests/release/chroot_test.sh" "$work/tar-$arch/fluxopctl-$version-linux-$arch/fluxopctl" "$root" \
    "${emulator[@]}" >"$work/chroot-$arch.out" 2>&1
  local status=$?
  sed 's/^/    /' "$work/chroot-$arch.out"
  echo "$(tail -n 1 "$work/chroot-$arch.out") in $((SECONDS - start)) s"
  return $status
}
step chroot && for arch in "${arches[@]}"; do
  how=
  [ "$arch" = amd64 ] || how=" under qemu-aarch64-static"
  verify "$arch: the chroot test$how" chroot_case "$arch"
done

image_case() {
  mkdir -p "$work/image" && tar -C "$work/image" -xf "$dist/fluxopctl-$version-image.oci.tar" || return 1
  python3 - "$work/image" "$work" "$version" "${arches[@]}" <<'PY'
import hashlib, io, json, os, sys, tarfile
layout, work, version = sys.argv[1:4]
arches = sys.argv[4:]
def blob(d):
    return open(os.path.join(layout, "blobs", *d.split(":")), "rb").read()
top = json.load(open(os.path.join(layout, "index.json")))["manifests"][0]
body = json.loads(blob(top["digest"]))
manifests = body.get("manifests", [top])
seen = {}
for m in manifests:
    manifest = json.loads(blob(m["digest"]))
    config = json.loads(blob(manifest["config"]["digest"]))
    arch = config["architecture"]
    for layer in manifest["layers"]:
        with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"]))) as t:
            for member in t.getmembers():
                if member.name.lstrip("./") == "usr/bin/fluxopctl":
                    seen[arch] = hashlib.sha256(t.extractfile(member).read()).hexdigest()
problems = []
for arch in arches:
    want = hashlib.sha256(open(f"{work}/tar-{arch}/fluxopctl-{version}-linux-{arch}/fluxopctl", "rb").read()).hexdigest()
    print(f"  linux/{arch}: image {seen.get(arch, 'none')[:16]}, tarball {want[:16]}")
    if seen.get(arch) != want:
        problems.append(arch)
print(f"  index {top['digest'][:23]}, platforms {sorted(seen)}")
sys.exit(1 if problems else 0)
PY
}
step image && verify "image: each platform's binary is the tarball's (sha256)" image_case

lintian_case() {
  local arch out
  for arch in "${arches[@]}"; do
    out=$(lintian --fail-on error,warning "$dist/fluxopctl_${deb_version}_$arch.deb" 2>&1) ||
      { echo "$arch: $out"; return 1; }
    echo "  $arch: lintian: ${out:-nothing to report}"
  done
}
step lintian && verify "lintian: nothing but the explained overrides" lintian_case

# The README's Install section in a fresh Debian 13 root, as its user types it.
debian13_case() {
  local arch
  arch=$(dpkg --print-architecture)
  local start=$SECONDS
  # The bash completion as an interactive bash loads it on demand, then asked
  # what follows `fluxopctl completion `.
  cat >"$work/completion-check.bash" <<'EOF'
source /usr/share/bash-completion/bash_completion
_comp_load fluxopctl 2>/dev/null || _completion_loader fluxopctl
complete -p fluxopctl || exit 1
function=$(complete -p fluxopctl | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
COMP_WORDS=(fluxopctl completion "")
COMP_CWORD=2
"$function" fluxopctl "" completion
echo "bash completes 'fluxopctl completion ': ${COMPREPLY[*]}"
EOF
  # shellcheck disable=SC2016 # $1 is mmdebstrap's root
  mmdebstrap --quiet --variant=apt --include=ca-certificates,man-db,bash-completion \
    --customize-hook="mkdir -p \"\$1/root/dl\"" \
    --customize-hook="copy-in $dist/SHA256SUMS $dist/fluxopctl_${deb_version}_$arch.deb $dist/fluxopctl-$version-linux-$arch.tar.gz $work/completion-check.bash /root/dl" \
    --customize-hook='chroot "$1" sh -c "cd /root/dl && sha256sum --ignore-missing -c SHA256SUMS"' \
    --customize-hook="chroot \"\$1\" sh -c 'cd /root/dl && apt-get install -y -q ./fluxopctl_${deb_version}_$arch.deb' >/dev/null" \
    --customize-hook='chroot "$1" fluxopctl version' \
    --customize-hook='chroot "$1" man -w fluxopctl' \
    --customize-hook='chroot "$1" bash /root/dl/completion-check.bash' \
    --customize-hook='chroot "$1" sh -c "dpkg -s fluxopctl | grep -E \"^(Version|Depends):\""' \
    --customize-hook="chroot \"\$1\" sh -c 'cd /root/dl && tar -xzf fluxopctl-$version-linux-$arch.tar.gz && install fluxopctl-$version-linux-$arch/fluxopctl /usr/local/bin/ && /usr/local/bin/fluxopctl version'" \
    --customize-hook='chroot "$1" sh -c ". /etc/os-release && echo \"\$PRETTY_NAME\""' \
    trixie "$work/debian13.tar" http://deb.debian.org/debian >"$work/debian13.out" 2>&1
  local status=$?
  sed 's/^/    /' "$work/debian13.out"
  echo "  in $((SECONDS - start)) s"
  [ $status -eq 0 ] || return 1
  grep -q "^fluxopctl $version\$" "$work/debian13.out" || { echo "no 'fluxopctl $version' printed"; return 1; }
  grep -q '^/usr/share/man/man1/fluxopctl.1.gz$' "$work/debian13.out" || { echo "man -w found no page"; return 1; }
  grep -q "completes 'fluxopctl completion ': bash zsh fish" "$work/debian13.out" ||
    { echo "the bash completion does not complete fluxopctl"; return 1; }
}
step debian13 && verify "Debian 13 (mmdebstrap): SHA256SUMS, apt-get install ./fluxopctl_*.deb, version, man -w, bash completion, the tarball" debian13_case

reproducible_case() {
  local other=$work/second commit start=$SECONDS f differ=0
  commit=$(git -C "$root" rev-parse HEAD)
  git clone --quiet --no-local --no-checkout "$root" "$other" && git -C "$other" checkout --quiet "$commit" || return 1
  CCACHE_DISABLE=1 FLUXOPCTL_RELEASE_CACHE="$work/second-cache" "$other/scripts/release" \
    --arch "$(if [ ${#arches[@]} -eq 2 ]; then echo all; else echo "${arches[0]}"; fi)" \
    --output "$work/second-dist" >"$work/second.out" 2>"$work/second.err" ||
    { tail -n 5 "$work/second.err"; return 1; }
  for f in "$dist"/*; do
    if cmp -s "$f" "$work/second-dist/${f##*/}"; then
      echo "  same: ${f##*/}"
    else
      echo "  DIFFERENT: ${f##*/}"
      differ=1
    fi
  done
  echo "  second build (from $other, libcurl rebuilt, no ccache): $((SECONDS - start)) s"
  [ $differ -eq 0 ]
}
step reproducible && verify "reproducible: a second release of $(git -C "$root" rev-parse --short HEAD) in another directory, byte for byte" reproducible_case

summary
