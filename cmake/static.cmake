# FLUXOPCTL_STATIC: fluxopctl as one static executable (no NEEDED entry, no
# interpreter) from Debian's static archives (libssl.a, libcrypto.a,
# libre2.a, libyaml-cpp.a, libz.a, libnghttp2.a, glibc's and libstdc++'s) and
# the libcurl that scripts/lib/static-libcurl.sh builds from Debian's source
# package with only what fluxopctl uses (CMAKE_PREFIX_PATH names it; its
# CURLConfig.cmake carries its dependencies). scripts/setup and
# scripts/release configure it; the tests and other executables stay
# dynamic, linking the same archives.
#
# Reproducible: no build path reaches the binary (no debug information, no
# __FILE__ in fluxopctl's sources), so two checkouts of one commit build
# the same bytes; scripts/release --verify checks it.
if(FLUXOPCTL_SANITIZE OR FLUXOPCTL_FUZZ)
  message(FATAL_ERROR "FLUXOPCTL_STATIC: the sanitizers need a dynamic executable")
endif()
# The unit tests' libarchive (tests only) stays the shared library, found
# before the suffix below: its static archive would want a dozen more.
find_package(LibArchive REQUIRED)
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(OPENSSL_USE_STATIC_LIBS TRUE)
set(ZLIB_USE_STATIC_LIBS TRUE)

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
                        "set CMAKE_PREFIX_PATH to scripts/lib/static-libcurl.sh's prefix")
  endif()
endmacro()
