// The tar+gzip layer of a Flux content artifact (media type
// application/vnd.cncf.flux.content.v1.tar+gzip), read and written with
// fluxopctl itself (writing here, reading in oci/layer.h). The flux-operator-manifests artifact
// holds
//   ./                         a root directory entry
//   flux/vX.Y.Z/*.yaml         the manifests
//   flux-images/vX.Y.Z/*.yaml  the image catalogs
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/oci/layer.h"

namespace fluxop::oci {

// Extracts the tar+gzip (or plain tar) at archive_path into dest_dir, which
// must be an existing, empty directory. Only regular files and directories
// are extracted; absolute names, `..` components, links, devices, FIFOs,
// sockets, duplicate entries and archives beyond `limits` (counted while
// reading) are refused. The names "." and "./" (the root entry) and a leading
// "./" are accepted. Files are created 0644, or 0755 when the entry has an x
// bit, directories 0755 (both less the umask); parents as needed.
// Throws fluxop::Error naming display_name (e.g. "blob sha256:…") and the
// entry; what was extracted before the error stays, so extract into a
// temporary directory and remove it on failure.
void extract_archive(const std::string& archive_path, const std::string& dest_dir,
                     std::string_view display_name, const ExtractLimits& limits = {});

// Writes the files and directories of `layer` into dest_dir, an existing
// empty directory, as extract_archive does.
void extract_layer(const Layer& layer, const std::string& dest_dir, std::string_view display_name);

// A reproducible tar+gzip of root_dir's `entries` (relative names, e.g.
// {"flux", "flux-images"}), built in memory, laid out as `flux push artifact`
// lays out the flux-operator-manifests layer: a root entry "./", then each
// entry's directories and files, every directory walked in byte order of
// name; uid and gid 0 without names, mtime 0, directories 0755, files 0644
// (0755 when executable); ustar headers (pax only for names ustar cannot
// hold); a gzip header without name or timestamp. Equal trees give
// byte-identical output. `tar_digest`, when given, gets the SHA-256 of the
// uncompressed tar. Throws fluxop::Error naming the path for a missing
// entry, a symbolic link or a special file, and for the file or directory
// that takes the archive beyond `limits` (what extraction would refuse),
// before reading a file that would.
std::string create_archive(const std::string& root_dir, const std::vector<std::string>& entries,
                           std::string* tar_digest = nullptr, const ExtractLimits& limits = {});

}  // namespace fluxop::oci
