# shellcheck shell=bash
# The static build of fluxopctl (scripts/setup, scripts/release):
#
#   source scripts/lib/static-build.sh
#   static_configure BUILD_DIR ARCH    # cmake configures BUILD_DIR for a static
#                                      # fluxopctl of ARCH (amd64, or arm64 cross)
#   static_libcurl_ensure_built ARCH   # prints libcurl's install prefix
#   static_isal_ensure_built ARCH      # prints ISA-L's install prefix
#   static_sysroot_ensure ARCH         # prints the sysroot of the packages of
#                                      # ARCH that cannot be installed here
#
# Two libraries are compiled from Debian's source packages, with Debian's
# patches, because Debian's static archive of them is unfit or missing:
#
# - libcurl (the version the build machine's libcurl4-openssl-dev has) with
#   only what fluxopctl uses: HTTP and HTTPS over OpenSSL, HTTP/2 (nghttp2),
#   gzip (zlib), HTTP, HTTPS and SOCKS proxies, the threaded resolver, the
#   system CA bundle and directory where Debian's libcurl looks. Debian's own
#   libcurl.a would drag in LDAP, Kerberos, RTMP, SSH, IDN, PSL, brotli and
#   zstd, whose static libraries Debian partly does not ship.
# - ISA-L (Intel's igzip inflate; libisal-dev's version): libisal-dev ships
#   only the shared library. It is built by its own Makefile.unx, its x86
#   assembly by nasm, its arm64 assembly by the C compiler.
#
# Each source is pinned by version and by the digest of its .dsc, whose own
# checksums dpkg-source verifies for the tarballs it names. Each prefix holds
# the source's debian/copyright as copyright (the .deb reproduces it) and is
# cached in ${FLUXOPCTL_RELEASE_CACHE:-$XDG_CACHE_HOME/fluxopctl-release}/NAME-ARCH
# (libcurl-ARCH, isal-ARCH), rebuilt when the version or the options below
# change.

STATIC_BUILD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STATIC_LIBCURL_VERSION=7.88.1-10+deb12u15
STATIC_LIBCURL_DSC_SHA256=2744f12e3aef161c0361743fa1b318296b122e566e47f381e4a63320fbcc23f4
STATIC_LIBCURL_POOL=${STATIC_LIBCURL_POOL:-http://deb.debian.org/debian/pool/main/c/curl}

# The options, one line each: part of the cache key.
STATIC_LIBCURL_OPTIONS=(
  -DBUILD_SHARED_LIBS=OFF -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DBUILD_LIBCURL_DOCS=OFF
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=OFF
  -DCURL_USE_OPENSSL=ON -DUSE_NGHTTP2=ON -DCURL_ZLIB=ON
  -DHTTP_ONLY=ON -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON
  -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF -DCURL_USE_GSSAPI=OFF -DUSE_LIBIDN2=OFF -DUSE_LIBRTMP=OFF
  -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DENABLE_THREADED_RESOLVER=ON -DENABLE_UNIX_SOCKETS=OFF
  -DCURL_DISABLE_ALTSVC=ON -DCURL_DISABLE_HSTS=ON -DCURL_DISABLE_NTLM=ON -DCURL_DISABLE_DOH=ON
  -DCURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt -DCURL_CA_PATH=/etc/ssl/certs
  -DCURL_CA_FALLBACK=OFF
)

STATIC_ISAL_VERSION=2.30.0-5
STATIC_ISAL_DSC_SHA256=f0376ddb24f0126641161054002a251ba48b52c2e28fe29cc7b5106e9f0938a8
STATIC_ISAL_POOL=${STATIC_ISAL_POOL:-http://deb.debian.org/debian/pool/main/libi/libisal}

# Makefile.unx's variables, one a line: part of the cache key. The archive
# is built without debug information (DEBUG, DEBUG_nasm; its own default for
# the library) so that no build path gets into the release.
STATIC_ISAL_OPTIONS=(lib_name=isa-l.a DEBUG_nasm=)

static_libcurl_cache() {
  local cache_home=${XDG_CACHE_HOME:-}
  [[ $cache_home == /* ]] || cache_home=$HOME/.cache
  echo "${FLUXOPCTL_RELEASE_CACHE:-$cache_home/fluxopctl-release}"
}

# static_triplet ARCH: the GNU triplet of ARCH's toolchain (and multiarch
# directory).
static_triplet() {
  case $1 in
    amd64) echo x86_64-linux-gnu ;;
    arm64) echo aarch64-linux-gnu ;;
    *) echo "static-build: unsupported architecture '$1'" >&2; return 1 ;;
  esac
}

# static_cross ARCH: true when ARCH is not the build machine's (cross-compiled).
static_cross() {
  [ "$1" != "$(dpkg --print-architecture)" ]
}

# static_debian_source POOL DSC SHA256: Debian's source package DSC from
# POOL, its .dsc checked against SHA256, extracted with its patches into
# ./src.
static_debian_source() {
  local pool=$1 dsc=$2 sha256=$3 file
  echo "static-build: fetching Debian's source ${dsc%.dsc}" >&2
  curl -fsSL --retry 3 -o "$dsc" "$pool/$dsc" || return 1
  echo "$sha256  $dsc" | sha256sum -c --quiet - || return 1
  # The .dsc names the tarballs with their SHA-256 sums; dpkg-source checks them.
  while read -r file; do
    curl -fsSL --retry 3 -o "$file" "$pool/$file" || return 1
  done < <(sed -n '/^Checksums-Sha256:/,/^[^ ]/p' "$dsc" | awk 'NF == 3 { print $3 }')
  # (The signature is not checked: its key is not on the machine; the pinned digest is.)
  dpkg-source --require-strong-checksums -x "$dsc" src >dpkg-source.log 2>&1 ||
    { cat dpkg-source.log >&2; return 1; }
}

# static_prefix NAME ARCH: where static_from_source installs NAME for ARCH.
static_prefix() {
  echo "$(static_libcurl_cache)/$1-$2"
}

# static_from_source NAME ARCH ARCHIVE BUILDER KEY-LINE...: prints the prefix
# NAME-ARCH in the cache (static_prefix), which holds lib/ARCHIVE, the source's copyright
# and the key of the KEY-LINEs (version, architecture, options); when it does
# not, BUILDER ARCH runs in a fresh directory of the cache, fetches the
# source into ./src (static_debian_source) and installs into ./prefix.
# (Every step's failure is checked: set -e would be ignored in a subshell
# whose status is tested.)
static_from_source() {
  local name=$1 arch=$2 archive=$3 builder=$4 cache key prefix work
  shift 4
  cache=$(static_libcurl_cache)
  # One place per architecture, so that the compilers' include paths stay
  # the same (ccache); what it holds is named by its key file.
  key=$(printf '%s\n' "$@" | sha256sum | cut -c1-16)
  prefix=$(static_prefix "$name" "$arch")
  if [ -f "$prefix/lib/$archive" ] && [ -f "$prefix/copyright" ] &&
    [ "$(cat "$prefix/key" 2>/dev/null)" = "$key" ]; then
    echo "$prefix"
    return 0
  fi
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/$name-build.XXXXXX")
  (
    set -uo pipefail
    cd "$work" && "$builder" "$arch" &&
      # The notice the .deb's copyright reproduces (scripts/release).
      install -D -m 0644 src/debian/copyright prefix/copyright
  ) || { rm -rf "$work"; return 1; }
  echo "$key" >"$work/prefix/key"
  rm -rf "$prefix"
  mv -T "$work/prefix" "$prefix"
  rm -rf "$work"
  echo "$prefix"
}

# static_libcurl_ensure_built ARCH: the prefix (include/, lib/libcurl.a,
# lib/cmake/CURL) of libcurl for ARCH, built when missing.
static_libcurl_ensure_built() {
  static_triplet "$1" >/dev/null || return 1
  static_from_source libcurl "$1" libcurl.a static_libcurl_build \
    "$STATIC_LIBCURL_VERSION" "$1" "${STATIC_LIBCURL_OPTIONS[@]}"
}

# static_libcurl_build ARCH (static_from_source's builder).
static_libcurl_build() {
  local arch=$1 toolchain=() libdir
  static_debian_source "$STATIC_LIBCURL_POOL" "curl_$STATIC_LIBCURL_VERSION.dsc" "$STATIC_LIBCURL_DSC_SHA256" ||
    return 1
  if static_cross "$arch"; then
    toolchain=(-DCMAKE_TOOLCHAIN_FILE="$STATIC_BUILD_ROOT/cmake/toolchain-$arch.cmake")
  fi
  echo "static-build: building libcurl for $arch" >&2
  # The build directory's path stays out of the objects (reproducible builds).
  # Static archives of its dependencies, Debian's (libssl-dev, libnghttp2-dev, zlib1g-dev).
  libdir=/usr/lib/$(static_triplet "$arch") || return 1
  cmake -S src -B build -G Ninja "${toolchain[@]}" "${STATIC_LIBCURL_OPTIONS[@]}" \
    -DOPENSSL_USE_STATIC_LIBS=ON -DNGHTTP2_LIBRARY="$libdir/libnghttp2.a" -DZLIB_LIBRARY="$libdir/libz.a" \
    -DCMAKE_C_FLAGS="-O2 -ffile-prefix-map=$PWD=. -DCURL_PATCHSTAMP=\\\"$STATIC_LIBCURL_VERSION\\\"" \
    -DCMAKE_INSTALL_PREFIX="$PWD/prefix" -DCMAKE_INSTALL_LIBDIR=lib >build.log 2>&1 ||
    { tail -n 30 build.log >&2; return 1; }
  ninja -C build install >>build.log 2>&1 || { tail -n 30 build.log >&2; return 1; }
}

# static_isal_ensure_built ARCH: the prefix (include/isa-l.h,
# include/isa-l/*.h, lib/libisal.a) of ISA-L for ARCH, built when missing.
static_isal_ensure_built() {
  static_triplet "$1" >/dev/null || return 1
  static_from_source isal "$1" libisal.a static_isal_build \
    "$STATIC_ISAL_VERSION" "$1" "${STATIC_ISAL_OPTIONS[@]}"
}

# static_isal_build ARCH (static_from_source's builder).
static_isal_build() {
  local arch=$1 triplet make_args
  triplet=$(static_triplet "$arch") &&
    static_debian_source "$STATIC_ISAL_POOL" "libisal_$STATIC_ISAL_VERSION.dsc" "$STATIC_ISAL_DSC_SHA256" ||
    return 1
  # ISA-L's CPU (its assembly's directory), whatever the build machine's;
  # make.inc's arch=aarch64 assembles the .S files with $(CC). The build
  # directory's path stays out of the objects (DEBUG is in its CFLAGS).
  make_args=(host_cpu="${triplet%%-*}" "${STATIC_ISAL_OPTIONS[@]}" DEBUG="-ffile-prefix-map=$PWD=.")
  [ "$arch" != arm64 ] || make_args+=(arch=aarch64)
  if static_cross "$arch"; then
    make_args+=(CC="$triplet-gcc" AR="$triplet-ar")
  fi
  if [ "$arch" = amd64 ] && ! command -v nasm >/dev/null; then
    echo "static-build: ISA-L's x86 assembly needs nasm (scripts/setup installs it)" >&2
    return 1
  fi
  echo "static-build: building ISA-L for $arch" >&2
  make -C src -f Makefile.unx -j"$(nproc)" "${make_args[@]}" isa-l.a isa-l.h >build.log 2>&1 ||
    { tail -n 30 build.log >&2; return 1; }
  # Laid out as ISA-L's `make install` and Debian's libisal-dev do: isa-l.h
  # includes <isa-l/NAME.h>, which include "types.h".
  install -D -m 0644 src/isa-l.a prefix/lib/libisal.a &&
    install -D -m 0644 src/isa-l.h prefix/include/isa-l.h &&
    mkdir -p prefix/include/isa-l &&
    sed -n 's|^#include <isa-l/\(.*\)>$|src/include/\1|p' src/isa-l.h |
    xargs install -m 0644 -t prefix/include/isa-l src/include/types.h
}

# Packages of a foreign architecture that dpkg cannot install beside the
# build machine's own (not Multi-Arch: same): libyaml-cpp-dev:arm64 would
# remove libyaml-cpp-dev:amd64. They are extracted, never installed, into
# $cache/sysroot-ARCH, with their control files and file lists in info/
# (the SBOM's source of their versions); CMAKE_PREFIX_PATH names it.
STATIC_SYSROOT_PACKAGES=(libyaml-cpp-dev libyaml-cpp0.7)

# static_sysroot_ensure ARCH: prints the sysroot of ARCH's extracted packages.
static_sysroot_ensure() {
  local arch=$1 sysroot work key p deb
  sysroot=$(static_libcurl_cache)/sysroot-$arch
  key=$(for p in "${STATIC_SYSROOT_PACKAGES[@]}"; do
    apt-cache policy "$p:$arch" | sed -n 's/^ *Candidate: //p'
  done | tr '\n' ' ')
  if [ -f "$sysroot/info/key" ] && [ "$(cat "$sysroot/info/key")" = "$key" ]; then
    echo "$sysroot"
    return 0
  fi
  work=$(mktemp -d "$(static_libcurl_cache)/sysroot-build.XXXXXX")
  (
    set -euo pipefail
    cd "$work"
    mkdir -p root/info
    for p in "${STATIC_SYSROOT_PACKAGES[@]}"; do
      apt-get download -q "$p:$arch" >/dev/null 2>&1
    done
    for deb in *.deb; do
      p=$(dpkg-deb -f "$deb" Package)
      dpkg-deb -x "$deb" root
      dpkg-deb -f "$deb" >"root/info/$p.control"
      dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\.||' >"root/info/$p.list"
    done
    echo "$key" >root/info/key
  ) || { rm -rf "$work"; echo "static-build: extracting ${STATIC_SYSROOT_PACKAGES[*]} ($arch) failed" >&2; return 1; }
  rm -rf "$sysroot"
  mv -T "$work/root" "$sysroot"
  rm -rf "$work"
  echo "$sysroot"
}

# static_configure BUILD_DIR ARCH [CMAKE-ARG...]: BUILD_DIR configured (when
# it is not yet, or not so) for a static fluxopctl of ARCH: Release,
# FLUXOPCTL_STATIC, the libcurl and ISA-L above (CMAKE_PREFIX_PATH), the
# arm64 cross toolchain.
static_configure() {
  local dir=$1 arch=$2 prefix isal args sysroot
  shift 2
  prefix=$(static_libcurl_ensure_built "$arch") || return 1
  isal=$(static_isal_ensure_built "$arch") || return 1
  prefix="$prefix;$isal"
  if static_cross "$arch"; then
    sysroot=$(static_sysroot_ensure "$arch") || return 1
    prefix="$prefix;$sysroot/usr"
  fi
  args=(-DCMAKE_BUILD_TYPE=Release -DFLUXOPCTL_STATIC=ON -DCMAKE_PREFIX_PATH="$prefix" "$@")
  ! static_cross "$arch" ||
    args+=(-DCMAKE_TOOLCHAIN_FILE="$STATIC_BUILD_ROOT/cmake/toolchain-$arch.cmake")
  if [ -f "$dir/build.ninja" ] && grep -qx "FLUXOPCTL_STATIC:BOOL=ON" "$dir/CMakeCache.txt" &&
    grep -qxF "CMAKE_PREFIX_PATH:UNINITIALIZED=$prefix" "$dir/CMakeCache.txt"; then
    return 0
  fi
  # A dynamic build's cache holds the shared libraries it found: started afresh.
  rm -f "$dir/CMakeCache.txt"
  cmake -S "$STATIC_BUILD_ROOT" -B "$dir" -G Ninja "${args[@]}" >/dev/null
}
