// A content layer (tar+gzip, or plain tar) read in place, without
// extracting it. One pass over the blob indexes its files (where each one's
// bytes start in the uncompressed tar) and records resume points: the
// inflater's state at a deflate block boundary about every MiB (the input
// offset, the bits of the last input byte still unread, and the 32 KiB of
// output before it). Reading a directory back then inflates only from the
// nearest point before it: the cache keeps the blob and this index, not the
// thousands of files a Flux distribution holds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cache_seal.h"

namespace fluxop::oci {

// What pull accepts of a layer, and so what push refuses to publish: one
// definition for both. A Flux distribution artifact is a few MB (every
// release since v2.2 is 16 MB unpacked); the bounds leave it ample room and
// keep a pull, a build from the artifact and a push within 512 MiB, since a
// layer is read whole to be indexed and a directory's files whole to be
// rendered.
inline constexpr std::uint64_t kMaxLayerBytes = 64ull << 20;  // the blob as stored
struct ExtractLimits {
  std::uint64_t max_total_bytes = 128ull << 20;  // sum of the regular files' sizes
  std::uint64_t max_files = 100000;              // entries (files, directories, pax headers)
  std::uint64_t max_layer_bytes = kMaxLayerBytes;
};

struct LayerFile {
  std::string path;          // normalised: no "./", no empty or "." components
  std::uint64_t offset = 0;  // of its first byte in the uncompressed tar
  std::uint64_t size = 0;
  bool executable = false;
};

struct ResumePoint {
  std::uint64_t in = 0;       // offset in the blob of the next byte to inflate
  std::uint64_t out = 0;      // offset in the uncompressed tar reached there
  int bits = 0;               // bits of the byte before `in` not yet inflated (0-7)
  std::string window;         // the output before `out` (at most 32 KiB)
  bool member_start = false;  // `in` starts a gzip member: no bits, no window
};

struct LayerIndex {
  std::string blob_digest;  // of the blob it indexes, when known
  std::uint64_t blob_size = 0;
  bool gzip = true;                 // false: a plain tar
  std::vector<std::string> dirs;    // every directory, explicit or implied
  std::vector<LayerFile> files;     // regular files, in archive order
  std::vector<ResumePoint> points;  // ascending; the first at the start

  // A compact encoding closed by the seal (core/cache_seal.h) of what
  // precedes it, so that a damaged or planted index is never used.
  std::string encode(const CacheSeal& seal) const;
  // The index, when `seal` opens it; with no seal, any whole index (what it
  // says must then be checked: verify() hashes the blob it names).
  static std::optional<LayerIndex> decode(std::string_view data, const CacheSeal* seal);
};

// A layer's blob in fluxopctl's cache, and its index. The blob stays on
// disk: a read takes only the part it inflates.
struct Layer {
  std::string path;
  LayerIndex index;
};

// Indexes `blob`. Only regular files and directories are accepted: absolute
// names, `..` components, links, devices, FIFOs, duplicate entries, a file
// and a directory at one path, name components over 255 bytes and archives
// beyond `limits` are refused, as is a malformed or truncated archive; an
// index read back (decode) is held to the same path rules, so that build
// and pull take the same layers. Throws fluxop::Error naming display_name (e.g. "blob sha256:…")
// and the entry.
LayerIndex index_layer(std::string_view blob, std::string_view display_name,
                       const ExtractLimits& limits = {});

// The bytes [offset, offset + size) of a blob; throws when they cannot be read.
using BlobReader = std::function<std::string(std::uint64_t offset, std::uint64_t size)>;

// The files of `index` under `dir` ("" for all), by path, inflated from the
// part of the blob they need. Throws fluxop::Error when the blob does not
// inflate as the index says.
std::map<std::string, std::string> read_layer_dir(const BlobReader& read_blob,
                                                  const LayerIndex& index, std::string_view dir,
                                                  std::string_view display_name);
// The same, from the whole blob in memory.
std::map<std::string, std::string> read_layer_dir(std::string_view blob, const LayerIndex& index,
                                                  std::string_view dir,
                                                  std::string_view display_name);

// Reads a layer's blob from its file: the part asked for.
BlobReader blob_file_reader(const std::string& path, std::string_view display_name);

}  // namespace fluxop::oci
