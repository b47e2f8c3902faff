// A content layer (tar+gzip, or plain tar) read in place, without
// extracting it. One pass over the blob indexes its files (where each one's
// bytes start in the uncompressed tar) and the points a read may start
// inflating from (each gzip member's start), and keeps the bytes of the
// files it is asked to (FileKeeper): the cache keeps the blob, this index
// and those files, not the thousands of files a Flux distribution holds.
// Inflating is ISA-L's igzip, two to three times zlib's speed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
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

// Where a read may start: a gzip member's start, or for a plain tar its start.
struct ResumePoint {
  std::uint64_t in = 0;       // offset in the blob
  std::uint64_t out = 0;      // offset in the uncompressed tar there
  bool member_start = false;  // `in` starts a gzip member
};

struct LayerIndex {
  std::string blob_digest;  // of the blob it indexes, when known
  std::uint64_t blob_size = 0;
  bool gzip = true;                 // false: a plain tar
  std::vector<std::string> dirs;    // every directory, explicit or implied
  std::vector<LayerFile> files;     // regular files, in archive order
  std::vector<ResumePoint> points;  // ascending; the first at the start
  // The directories whose files the index pass kept (FileKeeper), every
  // file under them, and the SHA-256 of their encoding (encode_kept_files),
  // which the cache keeps beside the blob; none when nothing was kept.
  std::vector<std::string> kept_dirs;
  std::string kept_digest;

  // A compact encoding closed by the seal (core/cache_seal.h) of what
  // precedes it, so that a damaged or planted index is never used.
  std::string encode(const CacheSeal& seal) const;
  // The index, when `seal` opens it; with no seal, any whole index (what it
  // says must then be checked: verify() hashes the blob it names).
  static std::optional<LayerIndex> decode(std::string_view data, const CacheSeal* seal);
};

// Files by path, with their bytes.
using KeptFiles = std::map<std::string, std::string>;

// A compact encoding of `files`, and the files again (nothing when `data`
// is not a whole encoding).
std::string encode_kept_files(const KeptFiles& files);
std::optional<KeptFiles> decode_kept_files(std::string_view data);

// Chooses, as the index pass goes by the layer's files, those whose bytes it
// keeps: a cold build then reads what it needs without inflating the blob a
// second time.
class FileKeeper {
 public:
  virtual ~FileKeeper() = default;
  // Called for each regular file, in archive order: whether to keep it.
  virtual bool wants(const std::string& path) = 0;
  // The bytes of a file it wanted.
  virtual void take(const std::string& path, std::string bytes) = 0;
  // A string the next file it wants may be read into, reusing its memory
  // (the bytes of a file it no longer keeps); empty when it has none.
  virtual std::string spare() { return {}; }
};

// A layer's blob in fluxopctl's cache, and its index. The blob stays on
// disk: a read takes only the part it inflates.
struct Layer {
  std::string path;
  LayerIndex index;
  // The files the index pass kept (index.kept_dirs), when they were read
  // and checked (the cache keeps them in the file `path` + ".kept").
  std::shared_ptr<const KeptFiles> kept{};
  // Whether the blob at `path` is known to have index.blob_digest. A cached
  // entry's is checked only when something is read from it (layer_blob_reader):
  // a build of the kept release reads nothing else, and hashing 1.6 MB was
  // a tenth of it.
  bool blob_checked = true;
  // Called, when set, by the read that finds an unchecked blob damaged,
  // before it throws: the cache, which leaves a blob unchecked, sets both
  // and removes the entry then, to be pulled again.
  std::function<void()> on_damaged{};
};

// Indexes `blob`. Only regular files and directories are accepted: absolute
// names, `..` components, links, devices, FIFOs, duplicate entries, a file
// and a directory at one path, name components over 255 bytes and archives
// beyond `limits` are refused, as is a malformed or truncated archive; an
// index read back (decode) is held to the same path rules, so that build
// and pull take the same layers. Throws fluxop::Error naming display_name (e.g. "blob sha256:…")
// and the entry.
// `keeper`, when given, is offered every regular file and takes the bytes
// of those it wants.
LayerIndex index_layer(std::string_view blob, std::string_view display_name,
                       const ExtractLimits& limits = {}, FileKeeper* keeper = nullptr);

// The bytes [offset, offset + size) of a blob; throws when they cannot be read.
using BlobReader = std::function<std::string(std::uint64_t offset, std::uint64_t size)>;

// Reads of `layer`'s blob file. When the blob is not checked yet, the first
// read hashes it whole first and, unless it has index.blob_digest, calls
// layer.on_damaged and throws fluxop::Error naming display_name: nothing
// unchecked is inflated.
BlobReader layer_blob_reader(const Layer& layer, std::string_view display_name);

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
