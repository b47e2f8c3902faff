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
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fluxop::oci {

struct ExtractLimits {
  std::uint64_t max_total_bytes = 1ull << 30;  // sum of the regular files' sizes
  std::uint64_t max_files = 100000;            // entries (files + directories)
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
  std::string blob_digest;          // of the blob it indexes, when known
  bool gzip = true;                 // false: a plain tar
  std::vector<std::string> dirs;    // every directory, explicit or implied
  std::vector<LayerFile> files;     // regular files, in archive order
  std::vector<ResumePoint> points;  // ascending; the first at the start

  // A compact encoding closed by the SHA-256 of what precedes it, so that
  // a damaged index is never used.
  std::string encode() const;
  static std::optional<LayerIndex> decode(std::string_view data);
};

// A layer's blob in memory, with its index.
struct Layer {
  std::string blob;
  LayerIndex index;
};

// Indexes `blob`. Only regular files and directories are accepted: absolute
// names, `..` components, links, devices, FIFOs, duplicate entries and
// archives beyond `limits` are refused, as is a malformed or truncated
// archive. Throws fluxop::Error naming display_name (e.g. "blob sha256:…")
// and the entry.
LayerIndex index_layer(std::string_view blob, std::string_view display_name,
                       const ExtractLimits& limits = {});

// The files of `index` under `dir` ("" for all), by path, read from `blob`.
// Throws fluxop::Error when the blob does not inflate as the index says.
std::map<std::string, std::string> read_layer_dir(std::string_view blob, const LayerIndex& index,
                                                  std::string_view dir,
                                                  std::string_view display_name);

// An entry name as it may stand in a one-line message: control bytes
// escaped, an empty name quoted.
std::string printable_name(std::string_view name);

}  // namespace fluxop::oci
