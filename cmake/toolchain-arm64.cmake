# Cross-compiling for arm64 with Debian's cross toolchain (g++-aarch64-linux-gnu)
# and arm64 multiarch packages (libssl-dev:arm64 ...), whose headers are in
# /usr/include and /usr/include/aarch64-linux-gnu, libraries in
# /usr/lib/aarch64-linux-gnu: scripts/release --arch arm64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Libraries and packages of arm64 only; programs (pkg-config) of the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
