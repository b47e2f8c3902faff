# shellcheck shell=bash
# The static build of fluxopctl (scripts/setup, scripts/release):
#
#   source scripts/lib/static-build.sh
#   static_configure BUILD_DIR ARCH    # cmake configures BUILD_DIR for a static
#                                      # fluxopctl of ARCH (amd64, or arm64 cross)
#   static_libcurl_ensure_built ARCH   # prints libcurl's install prefix
#   static_sysroot_ensure ARCH         # prints the sysroot of the packages of
#                                      # ARCH that cannot be installed here
#
# libcurl for the static build, compiled from Debian's source package
# (the version the build machine's libcurl4-openssl-dev has, with Debian's
# patches) with only what fluxopctl uses: HTTP and HTTPS over OpenSSL, HTTP/2
# (nghttp2), gzip (zlib), HTTP, HTTPS and SOCKS proxies, the threaded
# resolver, the system CA bundle and directory where Debian's libcurl looks.
# Debian's own libcurl.a would drag in LDAP, Kerberos, RTMP, SSH, IDN, PSL,
# brotli and zstd, whose static libraries Debian partly does not ship.
#
# The source is pinned by version and by the digest of its .dsc, whose own
# checksums dpkg-source verifies for the tarballs it names. The build is
# cached in ${FLUXOPCTL_RELEASE_CACHE:-$XDG_CACHE_HOME/fluxopctl-release}/libcurl-ARCH,
# rebuilt when the version or the options below change.

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

static_libcurl_cache() {
  local cache_home=${XDG_CACHE_HOME:-}
  [[ $cache_home == /* ]] || cache_home=$HOME/.cache
  echo "${FLUXOPCTL_RELEASE_CACHE:-$cache_home/fluxopctl-release}"
}

# static_libcurl_ensure_built ARCH: the prefix (include/, lib/libcurl.a,
# lib/cmake/CURL) of libcurl for ARCH, built when missing.
static_libcurl_ensure_built() {
  local arch=$1 cache key prefix work dsc triplet
  case $arch in
    amd64) triplet=x86_64-linux-gnu ;;
    arm64) triplet=aarch64-linux-gnu ;;
    *) echo "static-build: unsupported architecture '$arch'" >&2; return 1 ;;
  esac
  cache=$(static_libcurl_cache)
  # One place per architecture, so that the compilers' include paths stay
  # the same (ccache); what it holds is named by its key file.
  key=$(printf '%s\n' "$STATIC_LIBCURL_VERSION" "$arch" "${STATIC_LIBCURL_OPTIONS[@]}" | sha256sum | cut -c1-16)
  prefix=$cache/libcurl-$arch
  if [ -f "$prefix/lib/libcurl.a" ] && [ "$(cat "$prefix/key" 2>/dev/null)" = "$key" ]; then
    echo "$prefix"
    return 0
  fi
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/libcurl-build.XXXXXX")
  dsc=curl_$STATIC_LIBCURL_VERSION.dsc
  (
    set -euo pipefail
    cd "$work"
    echo "static-build: fetching Debian's curl $STATIC_LIBCURL_VERSION source" >&2
    curl -fsSL --retry 3 -o "$dsc" "$STATIC_LIBCURL_POOL/$dsc"
    echo "$STATIC_LIBCURL_DSC_SHA256  $dsc" | sha256sum -c --quiet -
    # The .dsc names the tarballs with their SHA-256 sums; dpkg-source checks them.
    sed -n '/^Checksums-Sha256:/,/^[^ ]/p' "$dsc" | awk 'NF == 3 { print $3 }' | while read -r file; do
      curl -fsSL --retry 3 -o "$file" "$STATIC_LIBCURL_POOL/$file"
    done
    # (The signature is not checked: its key is not on the machine; the pinned digest is.)
    dpkg-source --require-strong-checksums -x "$dsc" src >dpkg-source.log 2>&1 || { cat dpkg-source.log >&2; exit 1; }
    local toolchain=()
    if [ "$arch" != "$(dpkg --print-architecture)" ]; then
      toolchain=(-DCMAKE_TOOLCHAIN_FILE="$STATIC_BUILD_ROOT/cmake/toolchain-$arch.cmake")
    fi
    echo "static-build: building libcurl for $arch" >&2
    # The build directory's path stays out of the objects (reproducible builds).
    # Static archives of its dependencies, Debian's (libssl-dev, libnghttp2-dev, zlib1g-dev).
    local libdir=/usr/lib/$triplet
    cmake -S src -B build -G Ninja "${toolchain[@]}" "${STATIC_LIBCURL_OPTIONS[@]}" \
      -DOPENSSL_USE_STATIC_LIBS=ON -DNGHTTP2_LIBRARY="$libdir/libnghttp2.a" -DZLIB_LIBRARY="$libdir/libz.a" \
      -DCMAKE_C_FLAGS="-O2 -ffile-prefix-map=$work=. -DCURL_PATCHSTAMP=\\\"$STATIC_LIBCURL_VERSION\\\"" \
      -DCMAKE_INSTALL_PREFIX="$work/prefix" -DCMAKE_INSTALL_LIBDIR=lib >build.log 2>&1 ||
      { tail -n 30 build.log >&2; exit 1; }
    ninja -C build install >>build.log 2>&1 || { tail -n 30 build.log >&2; exit 1; }
  ) || { rm -rf "$work"; return 1; }
  echo "$key" >"$work/prefix/key"
  rm -rf "$prefix"
  mv -T "$work/prefix" "$prefix"
  rm -rf "$work"
  echo "$prefix"
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
# FLUXOPCTL_STATIC, the libcurl above, the arm64 cross toolchain.
static_configure() {
  local dir=$1 arch=$2 prefix args sysroot
  shift 2
  prefix=$(static_libcurl_ensure_built "$arch") || return 1
  if [ "$arch" != "$(dpkg --print-architecture)" ]; then
    sysroot=$(static_sysroot_ensure "$arch") || return 1
    prefix="$prefix;$sysroot/usr"
  fi
  args=(-DCMAKE_BUILD_TYPE=Release -DFLUXOPCTL_STATIC=ON -DCMAKE_PREFIX_PATH="$prefix" "$@")
  [ "$arch" = "$(dpkg --print-architecture)" ] ||
    args+=(-DCMAKE_TOOLCHAIN_FILE="$STATIC_BUILD_ROOT/cmake/toolchain-$arch.cmake")
  if [ -f "$dir/build.ninja" ] && grep -qx "FLUXOPCTL_STATIC:BOOL=ON" "$dir/CMakeCache.txt" &&
    grep -qxF "CMAKE_PREFIX_PATH:UNINITIALIZED=$prefix" "$dir/CMakeCache.txt"; then
    return 0
  fi
  # A dynamic build's cache holds the shared libraries it found: started afresh.
  rm -f "$dir/CMakeCache.txt"
  cmake -S "$STATIC_BUILD_ROOT" -B "$dir" -G Ninja "${args[@]}" >/dev/null
}
