# FLUXOPCTL_STATIC: fluxopctl as one static executable (no NEEDED entry, no
# interpreter) from Debian's static archives (libssl.a, libcrypto.a,
# libre2.a, libyaml-cpp.a, libz.a, libnghttp2.a, glibc's and libstdc++'s),
# the libcurl that scripts/lib/static-build.sh builds from Debian's source
# package with only what fluxopctl uses (its CURLConfig.cmake carries its
# dependencies) and the ISA-L it builds from Debian's (CMAKE_PREFIX_PATH
# names both). scripts/setup and
# scripts/release configure it; the tests and other executables stay
# dynamic, linking the same archives.
#
# Reproducible: no build path reaches the binary (no debug information, no
# __FILE__ in fluxopctl's sources, none from OpenSSL's macros:
# OPENSSL_NO_FILENAMES), so two checkouts of one commit build the same bytes;
# scripts/release refuses a binary holding a source path, and --verify builds
# the commit again elsewhere to compare.
if(FLUXOPCTL_SANITIZE OR FLUXOPCTL_FUZZ)
  message(FATAL_ERROR "FLUXOPCTL_STATIC: the sanitizers need a dynamic executable")
endif()
# The unit tests' libarchive (tests only) stays the shared library, found
# before the suffix below: its static archive would want a dozen more.
find_package(LibArchive REQUIRED)
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(OPENSSL_USE_STATIC_LIBS TRUE)
set(ZLIB_USE_STATIC_LIBS TRUE)

# Exceptions found through a binary-search table (.eh_frame_hdr), as in a
# dynamic executable. For -static, GCC links crtbeginT.o, which registers
# .eh_frame with libgcc's unwinder: the first exception thrown then sorts
# every FDE of the 14 MB binary, 82 million instructions, ~10 ms (the YAML
# block reader's fallback throws once in a cold `build`: docs/benchmarks.md,
# issue 39). crtbegin.o, found first under -B, does not register; the linker
# writes the table (--eh-frame-hdr, which GCC passes only without -static),
# and glibc's static dl_iterate_phdr shows it to the unwinder.
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=crtbegin.o OUTPUT_VARIABLE fluxop_crtbegin
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
if(NOT IS_ABSOLUTE "${fluxop_crtbegin}" OR NOT EXISTS "${fluxop_crtbegin}")
  message(FATAL_ERROR "FLUXOPCTL_STATIC: ${CMAKE_CXX_COMPILER} has no crtbegin.o (${fluxop_crtbegin})")
endif()
set(FLUXOP_STATIC_STARTFILES ${CMAKE_BINARY_DIR}/static-startfiles)
file(MAKE_DIRECTORY ${FLUXOP_STATIC_STARTFILES})
file(CREATE_LINK ${fluxop_crtbegin} ${FLUXOP_STATIC_STARTFILES}/crtbeginT.o SYMBOLIC)
set(FLUXOP_STATIC_LINK_OPTIONS -static -B${FLUXOP_STATIC_STARTFILES}/ -Wl,--eh-frame-hdr)

# After the find_package calls: the targets whose package names a shared
# library (Debian's yaml-cpp config) point at its static archive instead; a
# libcurl that is not the static one is refused.
macro(fluxop_static_libraries)
  find_library(FLUXOP_YAML_CPP_ARCHIVE libyaml-cpp.a REQUIRED)
  set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION ${FLUXOP_YAML_CPP_ARCHIVE}
                                            IMPORTED_LOCATION_NONE ${FLUXOP_YAML_CPP_ARCHIVE})
  get_target_property(fluxop_curl_location CURL::libcurl LOCATION)
  if(NOT fluxop_curl_location MATCHES "[.]a$")
    message(FATAL_ERROR "FLUXOPCTL_STATIC: libcurl is ${fluxop_curl_location}, not a static archive: "
                        "set CMAKE_PREFIX_PATH to scripts/lib/static-build.sh's prefix")
  endif()
endmacro()
