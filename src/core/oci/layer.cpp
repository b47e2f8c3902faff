#include "core/oci/layer.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <unordered_set>
#include <utility>

#include "core/cache_seal.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/file.h"

namespace fluxop::oci {

namespace {

constexpr std::size_t kBlock = 512;
// A pax header or GNU long name larger than this is no name anyone needs.
constexpr std::uint64_t kMaxExtendedHeader = 64 * 1024;

bool is_gzip(std::string_view blob) {
  return blob.size() >= 2 && static_cast<unsigned char>(blob[0]) == 0x1f &&
         static_cast<unsigned char>(blob[1]) == 0x8b;
}

// The size of the gzip member header (RFC 1952) at the start of `data`;
// nothing when it is incomplete.
std::optional<std::size_t> gzip_header_size(std::string_view data) {
  constexpr unsigned char kExtra = 4, kName = 8, kComment = 16, kHeaderCrc = 2;
  if (data.size() < 10) return std::nullopt;
  auto flags = static_cast<unsigned char>(data[3]);
  std::size_t at = 10;
  if (flags & kExtra) {
    if (data.size() < at + 2) return std::nullopt;
    at +=
        2 + (static_cast<unsigned char>(data[at]) | static_cast<unsigned char>(data[at + 1]) << 8);
  }
  for (unsigned char zero_terminated : {kName, kComment}) {
    if (!(flags & zero_terminated)) continue;
    std::size_t end = data.find('\0', at);
    if (end == std::string_view::npos) return std::nullopt;
    at = end + 1;
  }
  if (flags & kHeaderCrc) at += 2;
  if (at > data.size()) return std::nullopt;
  return at;
}

// The uncompressed bytes of a blob from a resume point on: inflated (gzip
// members one after another) or, for a plain tar, as they are. Inflation is
// raw deflate, the gzip framing read here: the blob's SHA-256 is checked, so
// the members' CRC-32 is not.
class Inflater {
 public:
  // `bytes` are the blob's from offset `base` on: the whole blob, or the part
  // a read needs.
  Inflater(std::string_view bytes, std::uint64_t base, bool gzip, const ResumePoint& from,
           std::string_view display)
      : blob_(bytes),
        base_(base),
        end_(base + bytes.size()),
        gzip_(gzip),
        in_(from.in),
        out_(from.out),
        display_(display) {
    if (from.in < base_ || from.in > end_ || (gzip_ && !from.member_start)) broken();
    if (gzip_) start_member();
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Up to `size` bytes into `out`; 0 at the end of the blob.
  std::size_t read(char* out, std::size_t size) {
    if (!gzip_) {
      std::size_t n = std::min<std::uint64_t>(size, end_ - in_);
      std::memcpy(out, at(in_), n);
      in_ += n;
      out_ += n;
      return n;
    }
    std::size_t produced = 0;
    while (produced < size) {
      if (!open_ && !next_member()) break;
      inflate_state& state = *state_;
      const char* given = at(in_);
      state.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(given));
      state.avail_in = static_cast<std::uint32_t>(std::min<std::uint64_t>(end_ - in_, 1u << 30));
      state.next_out = reinterpret_cast<std::uint8_t*>(out + produced);
      state.avail_out = static_cast<std::uint32_t>(size - produced);
      std::uint32_t before_out = state.avail_out;
      int status = isal_inflate(&state);
      std::size_t made = before_out - state.avail_out;
      out_ += made;
      produced += made;
      if (status < 0) throw Error(std::string(display_) + ": gzip: " + problem(status));
      // The input it took, less the whole bytes still unread in its bit
      // buffer: where the member's deflate stream ends, once it has.
      std::uint64_t taken = reinterpret_cast<const char*>(state.next_in) - given;
      if (state.block_state == ISAL_BLOCK_FINISH) {
        in_ += taken - static_cast<std::uint64_t>(state.read_in_length) / 8;
        end_member();
        continue;
      }
      in_ += taken;
      if (made > 0 || taken > 0) continue;
      // Out of input within a member: what was made may be all the caller
      // needs (a read takes only the part of the blob it needs); asked for
      // more, the stream is cut short. With input left, igzip took none of
      // it: never so for a stream it can go on with.
      if (produced > 0) break;
      throw Error(std::string(display_) +
                  (in_ == end_ ? ": truncated gzip stream" : ": gzip: invalid compressed data"));
    }
    return produced;
  }

  std::uint64_t out() const { return out_; }

  // Records a resume point at each gzip member's start from now on.
  void record_into(std::vector<ResumePoint>& points) { points_ = &points; }

 private:
  [[noreturn]] void broken() const {
    throw Error(std::string(display_) + ": the layer index does not match the blob");
  }

  static const char* problem(int status) {
    switch (status) {
      case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
      case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
      case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
      default:
        return "invalid compressed data";
    }
  }

  void start_member() {
    std::string_view member = blob_.substr(in_ - base_);
    constexpr unsigned char kReservedFlags = 0xe0;
    if (!is_gzip(member) || (member.size() > 3 && (member[2] != 8 || (member[3] & kReservedFlags))))
      throw Error(std::string(display_) + ": not a gzip stream");
    std::optional<std::size_t> header = gzip_header_size(member);
    if (!header) throw Error(std::string(display_) + ": truncated gzip stream");
    in_ += *header;
    // 85 KiB of state: on the heap, made once per Inflater.
    if (!state_) state_ = std::make_unique<inflate_state>();
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_DEFLATE;
    open_ = true;
  }

  // A raw inflate stops before the member's CRC-32 and size.
  void end_member() {
    if (end_ - in_ < 8) throw Error(std::string(display_) + ": truncated gzip stream");
    in_ += 8;
    open_ = false;
  }

  // Starts the gzip member at in_, if there is one.
  bool next_member() {
    if (in_ == end_) return false;
    if (!is_gzip(blob_.substr(in_ - base_))) {
      throw Error(std::string(display_) + ": data after the gzip stream is not a gzip member");
    }
    if (points_) points_->push_back({in_, out_, true});
    start_member();
    return true;
  }

  const char* at(std::uint64_t offset) const { return blob_.data() + (offset - base_); }

  std::string_view blob_;
  std::uint64_t base_;
  std::uint64_t end_;
  bool gzip_;
  std::uint64_t in_;
  std::uint64_t out_;
  std::string_view display_;
  std::unique_ptr<inflate_state> state_;
  bool open_ = false;
  std::vector<ResumePoint>* points_ = nullptr;
};

// Buffered reads of exact sizes over an Inflater.
class TarSource {
 public:
  explicit TarSource(Inflater& inflater) : inflater_(inflater), buffer_(64 * 1024) {}

  // Fills `out` with the next `size` bytes; false at the very end of the
  // stream (nothing read); throws when the stream ends within them.
  bool read(char* out, std::size_t size, std::string_view what) {
    std::size_t done = 0;
    while (done < size) {
      if (start_ == end_ && !refill()) {
        if (done == 0) return false;
        throw Error(std::string(what));
      }
      std::size_t n = std::min(size - done, end_ - start_);
      std::memcpy(out + done, buffer_.data() + start_, n);
      start_ += n;
      done += n;
      position_ += n;
    }
    return true;
  }

  // The next `size` bytes, a file's content: appended from the inflated
  // buffer into a string made to measure, never zero-filled first (15 MB of
  // a distribution's layer go by so). Throws `what` when the stream ends
  // within them.
  // `reuse`'s capacity is kept when it is large enough.
  std::string take(std::size_t size, std::string_view what, std::string reuse = {}) {
    std::string out = std::move(reuse);
    out.clear();
    out.reserve(size);
    while (out.size() < size) {
      if (start_ == end_ && !refill()) throw Error(std::string(what));
      std::size_t n = std::min(size - out.size(), end_ - start_);
      out.append(buffer_.data() + start_, n);
      start_ += n;
      position_ += n;
    }
    return out;
  }

  void skip(std::uint64_t size, std::string_view what) {
    while (size > 0) {
      if (start_ == end_ && !refill())
        throw Error(std::string(what) + ": the archive ends within it");
      std::size_t n = std::min<std::uint64_t>(size, end_ - start_);
      start_ += n;
      size -= n;
      position_ += n;
    }
  }

  std::uint64_t position() const { return position_; }

 private:
  bool refill() {
    start_ = 0;
    end_ = inflater_.read(buffer_.data(), buffer_.size());
    return end_ > 0;
  }

  Inflater& inflater_;
  std::vector<char> buffer_;
  std::size_t start_ = 0;
  std::size_t end_ = 0;
  std::uint64_t position_ = 0;
};

std::uint64_t padded(std::uint64_t size) { return (size + kBlock - 1) / kBlock * kBlock; }

// A NUL-terminated field of at most `size` bytes.
std::string field(const char* header, std::size_t at, std::size_t size) {
  const char* start = header + at;
  return std::string(start, strnlen(start, size));
}

// A numeric header field: octal digits (spaces and NULs around them), or
// base-256 when its first byte has the high bit set.
std::optional<std::uint64_t> number(const char* header, std::size_t at, std::size_t size) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(header + at);
  if (bytes[0] & 0x80) {
    if (bytes[0] & 0x40) return std::nullopt;  // negative
    std::uint64_t value = bytes[0] & 0x3f;
    for (std::size_t i = 1; i < size; ++i) {
      if (value >> 55) return std::nullopt;
      value = (value << 8) | bytes[i];
    }
    return value;
  }
  std::size_t i = 0;
  while (i < size && bytes[i] == ' ') ++i;
  std::uint64_t value = 0;
  bool digits = false;
  for (; i < size && bytes[i] >= '0' && bytes[i] <= '7'; ++i) {
    if (value >> 60) return std::nullopt;
    value = value * 8 + (bytes[i] - '0');
    digits = true;
  }
  for (; i < size; ++i) {
    if (bytes[i] != ' ' && bytes[i] != '\0') return std::nullopt;
  }
  if (!digits) return std::uint64_t{0};
  return value;
}

bool checksum_matches(const char* header) {
  std::optional<std::uint64_t> stored = number(header, 148, 8);
  if (!stored) return false;
  std::uint64_t unsigned_sum = 0;
  std::int64_t signed_sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    char c = (i >= 148 && i < 156) ? ' ' : header[i];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return *stored == unsigned_sum || static_cast<std::int64_t>(*stored) == signed_sum;
}

// The records "LENGTH KEY=VALUE\n" of a pax extended header.
std::map<std::string, std::string> pax_records(std::string_view data, std::string_view what) {
  std::map<std::string, std::string> records;
  while (!data.empty()) {
    std::size_t space = data.find(' ');
    std::uint64_t length = 0;
    if (space == 0 || space == std::string_view::npos || space > 20)
      throw Error(std::string(what) + ": malformed pax header");
    for (char c : data.substr(0, space)) {
      if (c < '0' || c > '9') throw Error(std::string(what) + ": malformed pax header");
      length = length * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (length <= space + 1 || length > data.size() || data[length - 1] != '\n')
      throw Error(std::string(what) + ": malformed pax header");
    std::string_view record = data.substr(space + 1, length - space - 2);
    std::size_t equals = record.find('=');
    if (equals == std::string_view::npos) throw Error(std::string(what) + ": malformed pax header");
    records[std::string(record.substr(0, equals))] = std::string(record.substr(equals + 1));
    data.remove_prefix(length);
  }
  return records;
}

class Indexer {
 public:
  Indexer(std::string_view display, const ExtractLimits& limits, FileKeeper* keeper)
      : display_(display), limits_(limits), keeper_(keeper) {}

  void run(TarSource& source, LayerIndex& index) {
    char header[kBlock];
    std::string long_name;
    std::string long_link;
    std::map<std::string, std::string> pax;
    for (;;) {
      // A stream that ends on an entry boundary ends the archive, as an
      // end-of-archive block does.
      bool first = entries_ == 0;
      std::string what =
          std::string(display_) + (first ? ": not a tar archive" : ": truncated tar archive");
      if (!source.read(header, kBlock, what)) {
        if (first) throw Error(what);
        return;
      }
      if (std::all_of(header, header + kBlock, [](char c) { return c == '\0'; })) return;
      if (!checksum_matches(header)) {
        throw Error(std::string(display_) +
                    (first ? ": not a tar archive" : ": invalid tar header"));
      }
      char type = header[156];
      std::optional<std::uint64_t> declared = number(header, 124, 12);
      if (!declared) throw Error(std::string(display_) + ": invalid size in a tar header");
      std::uint64_t size = *declared;
      if (auto found = pax.find("size"); found != pax.end()) size = pax_size(found->second);

      std::string name = field(header, 0, 100);
      std::string magic = field(header, 257, 6);
      std::string prefix = magic == "ustar" ? field(header, 345, 155) : "";
      if (!prefix.empty()) name = prefix + "/" + name;
      std::string link = field(header, 157, 100);
      if (!long_name.empty()) name = std::exchange(long_name, "");
      if (!long_link.empty()) link = std::exchange(long_link, "");
      if (auto found = pax.find("path"); found != pax.end()) name = found->second;
      if (auto found = pax.find("linkpath"); found != pax.end()) link = found->second;
      pax.clear();

      if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
        if (size > kMaxExtendedHeader) refuse(name, "extended header too large");
        std::string data(size, '\0');
        source.read(data.data(), size, std::string(display_) + ": truncated tar archive");
        source.skip(padded(size) - size, display_);
        count_entry(name);
        if (type == 'x') pax = pax_records(data, display_);
        if (type == 'L') long_name = data.substr(0, strnlen(data.c_str(), data.size()));
        if (type == 'K') long_link = data.substr(0, strnlen(data.c_str(), data.size()));
        continue;  // a global header ('g') applies to nothing we read
      }
      count_entry(name);
      std::uint64_t size_read = 0;
      bool directory = type == '5' || ((type == '0' || type == '\0') && name.ends_with('/'));
      check_type(type, name, link);
      std::vector<std::string> parts = components(name);
      std::string path = join(parts);
      if (!seen_.insert(path).second) refuse(name, "duplicate entry");
      if (parts.empty()) {
        if (!directory) refuse(name, "the root entry is not a directory");
      } else {
        for (std::size_t i = 1; i < parts.size(); ++i) add_dir(join(parts, i), index);
        if (directory) {
          add_dir(path, index);
        } else {
          if (size > limits_.max_total_bytes - total_bytes_) {
            refuse(name, "the archive's files exceed " + std::to_string(limits_.max_total_bytes) +
                             " bytes");
          }
          total_bytes_ += size;
          auto mode = number(header, 100, 8);
          index.files.push_back({path, source.position(), size, mode && (*mode & 0111) != 0});
          if (keeper_ && keeper_->wants(path)) {
            keeper_->take(path, source.take(size, std::string(display_) + ": truncated tar archive",
                                            keeper_->spare()));
            size_read = size;
          }
        }
      }
      source.skip(padded(size) - size_read,
                  std::string(display_) + ": entry " + quote(name, kQuotedPathCharacters));
    }
  }

 private:
  std::uint64_t pax_size(const std::string& value) const {
    std::uint64_t size = 0;
    if (value.empty() || value.size() > 18)
      throw Error(std::string(display_) + ": invalid pax size");
    for (char c : value) {
      if (c < '0' || c > '9') throw Error(std::string(display_) + ": invalid pax size");
      size = size * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return size;
  }

  void count_entry(std::string_view name) {
    // Counted before anything else, so a flood of entries stops early.
    if (++entries_ > limits_.max_files) {
      refuse(name, "the archive has more than " + std::to_string(limits_.max_files) + " entries");
    }
  }

  void check_type(char type, std::string_view name, std::string_view link) const {
    switch (type) {
      case '0':
      case '\0':
      case '7':  // contiguous file: a regular file
      case '5':
        return;
      case '1':
        refuse(name, "hard link to " + quote(link, kQuotedPathCharacters));
      case '2':
        refuse(name, "symbolic link to " + quote(link, kQuotedPathCharacters));
      case '3':
        refuse(name, "character device");
      case '4':
        refuse(name, "block device");
      case '6':
        refuse(name, "FIFO");
      default:
        refuse(name, "unsupported entry type");
    }
  }

  // The name's components without "." and empty ones: none for the root entry.
  std::vector<std::string> components(std::string_view name) const {
    if (name.empty()) refuse(name, "empty name");
    if (name.front() == '/') refuse(name, "absolute path");
    std::vector<std::string> parts;
    for (std::size_t start = 0; start <= name.size();) {
      std::size_t end = std::min(name.find('/', start), name.size());
      std::string_view part = name.substr(start, end - start);
      // Refused even where it would stay inside: no name needs it.
      if (part == "..") refuse(name, "path leaves the archive root");
      if (part.find('\0') != std::string_view::npos) refuse(name, "NUL in the name");
      if (!part.empty() && part != ".") parts.emplace_back(part);
      start = end + 1;
    }
    return parts;
  }

  static std::string join(const std::vector<std::string>& parts,
                          std::size_t count = std::string::npos) {
    std::string out;
    for (std::size_t i = 0; i < std::min(count, parts.size()); ++i) {
      if (i > 0) out += '/';
      out += parts[i];
    }
    return out;
  }

  void add_dir(const std::string& path, LayerIndex& index) {
    if (dirs_.insert(path).second) index.dirs.push_back(path);
  }

  [[noreturn]] void refuse(std::string_view name, const std::string& reason) const {
    throw Error(std::string(display_) + ": entry " + quote(name, kQuotedPathCharacters) +
                ": refused: " + reason);
  }

  std::string_view display_;
  const ExtractLimits& limits_;
  FileKeeper* keeper_;
  std::set<std::string> seen_;  // entry paths; the root as ""
  std::set<std::string> dirs_;
  std::uint64_t entries_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// The rules every path of a layer obeys, whether its tar is indexed now or
// its index read back from the cache, so that what a build reads from a
// layer pull can also extract: no file where a directory is (an entry
// "a" and an entry "a/b"), no name component a file system refuses
// (NAME_MAX). Empty when they hold, else the path and why it is refused.
std::string path_problem(const LayerIndex& index) {
  constexpr std::size_t kMaxComponentBytes = 255;
  auto too_long = [](std::string_view path) {
    for (std::size_t start = 0; start <= path.size();) {
      std::size_t end = std::min(path.find('/', start), path.size());
      if (end - start > kMaxComponentBytes) return true;
      start = end + 1;
    }
    return false;
  };
  auto refused = [](std::string_view path, std::string_view why) {
    return "entry " + quote(path, kQuotedPathCharacters) + ": refused: " + std::string(why);
  };
  const std::string long_name =
      "a name component longer than " + std::to_string(kMaxComponentBytes) + " bytes";
  std::unordered_set<std::string_view> dirs(index.dirs.begin(), index.dirs.end());
  for (std::string_view dir : index.dirs) {
    if (too_long(dir)) return refused(dir, long_name);
  }
  for (const LayerFile& file : index.files) {
    if (dirs.contains(file.path)) return refused(file.path, "a file and a directory at one path");
    if (too_long(file.path)) return refused(file.path, long_name);
  }
  return "";
}

// --- encoding

// Version 3 adds the kept files' directories and digest and has no points
// within a gzip member; an index of version 2 (fluxopctl before them) is
// read as one that kept nothing, its points within a member left out.
constexpr std::string_view kMagic = "fluxopctl layer index 3\n";
constexpr std::string_view kMagicVersion2 = "fluxopctl layer index 2\n";
constexpr std::string_view kKeptMagic = "fluxopctl kept files 1\n";

void put_number(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_bytes(std::string& out, std::string_view bytes) {
  put_number(out, bytes.size());
  out += bytes;
}

class Decoder {
 public:
  explicit Decoder(std::string_view data) : data_(data) {}

  bool number(std::uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (data_.empty()) return false;
      auto byte = static_cast<unsigned char>(data_.front());
      data_.remove_prefix(1);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }
  bool bytes(std::string& out) {
    std::uint64_t size = 0;
    if (!number(size) || size > data_.size()) return false;
    out.assign(data_.substr(0, size));
    data_.remove_prefix(size);
    return true;
  }
  bool done() const { return data_.empty(); }

 private:
  std::string_view data_;
};

}  // namespace

std::string LayerIndex::encode(const CacheSeal& seal) const {
  std::string out(kMagic);
  put_bytes(out, blob_digest);
  put_number(out, blob_size);
  put_number(out, gzip ? 1 : 0);
  put_number(out, dirs.size());
  for (const std::string& dir : dirs) put_bytes(out, dir);
  put_number(out, files.size());
  for (const LayerFile& file : files) {
    put_bytes(out, file.path);
    put_number(out, file.offset);
    put_number(out, file.size);
    put_number(out, file.executable ? 1 : 0);
  }
  put_number(out, points.size());
  for (const ResumePoint& point : points) {
    put_number(out, point.in);
    put_number(out, point.out);
    put_number(out, point.member_start ? 1 : 0);
  }
  put_number(out, kept_dirs.size());
  for (const std::string& dir : kept_dirs) put_bytes(out, dir);
  put_bytes(out, kept_digest);
  // Without a key, a seal of the same size that nothing opens.
  out += seal.has_key() ? seal.seal(out) : "hmac-sha256:" + std::string(64, '0');
  return out;
}

std::optional<LayerIndex> LayerIndex::decode(std::string_view data, const CacheSeal* seal) {
  constexpr std::size_t kSealSize = 76;  // "hmac-sha256:" and 64 hex digits
  bool version3 = data.starts_with(kMagic);
  if (data.size() < kMagic.size() + kSealSize || !(version3 || data.starts_with(kMagicVersion2)))
    return std::nullopt;
  std::string_view body = data.substr(0, data.size() - kSealSize);
  if (seal && !seal->opens(body, data.substr(body.size()))) return std::nullopt;
  Decoder in(body.substr(kMagic.size()));
  LayerIndex index;
  std::uint64_t flag = 0, count = 0;
  if (!in.bytes(index.blob_digest) || !in.number(index.blob_size) || !in.number(flag) || flag > 1)
    return std::nullopt;
  index.gzip = flag == 1;
  if (!in.number(count) || count > body.size()) return std::nullopt;
  index.dirs.resize(count);
  for (std::string& dir : index.dirs) {
    if (!in.bytes(dir)) return std::nullopt;
  }
  if (!in.number(count) || count > body.size()) return std::nullopt;
  index.files.resize(count);
  for (LayerFile& file : index.files) {
    if (!in.bytes(file.path) || !in.number(file.offset) || !in.number(file.size) ||
        !in.number(flag) || flag > 1)
      return std::nullopt;
    file.executable = flag == 1;
  }
  if (!in.number(count) || count > body.size()) return std::nullopt;
  for (std::uint64_t i = 0; i < count; ++i) {
    ResumePoint point;
    std::uint64_t bits = 0;
    std::string window;
    if (!in.number(point.in) || !in.number(point.out) || (!version3 && !in.number(bits)) ||
        !in.number(flag) || flag > 1 || (!version3 && !in.bytes(window)))
      return std::nullopt;
    point.member_start = flag == 1;
    // Version 2's points within a member (zlib's state at a block's start,
    // `bits` and `window`) are not where igzip starts: the others are kept.
    if (point.member_start || (!index.gzip && point.in == 0)) index.points.push_back(point);
  }
  if (version3) {
    if (!in.number(count) || count > body.size()) return std::nullopt;
    index.kept_dirs.resize(count);
    for (std::string& dir : index.kept_dirs) {
      if (!in.bytes(dir)) return std::nullopt;
    }
    if (!in.bytes(index.kept_digest)) return std::nullopt;
  }
  if (!in.done() || index.points.empty() || !path_problem(index).empty()) return std::nullopt;
  return index;
}

std::string encode_kept_files(const KeptFiles& files) {
  // Allocated once: grown by doubling, the encoding of a release (0.34 MB)
  // took twice its pages.
  std::size_t size = kKeptMagic.size() + 10;
  for (const auto& [path, bytes] : files) size += 20 + path.size() + bytes.size();
  std::string out;
  out.reserve(size);
  out += kKeptMagic;
  put_number(out, files.size());
  for (const auto& [path, bytes] : files) {
    put_bytes(out, path);
    put_bytes(out, bytes);
  }
  return out;
}

std::optional<KeptFiles> decode_kept_files(std::string_view data) {
  if (!data.starts_with(kKeptMagic)) return std::nullopt;
  Decoder in(data.substr(kKeptMagic.size()));
  std::uint64_t count = 0;
  if (!in.number(count) || count > data.size()) return std::nullopt;
  KeptFiles files;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string path, bytes;
    if (!in.bytes(path) || !in.bytes(bytes)) return std::nullopt;
    files.emplace(std::move(path), std::move(bytes));
  }
  if (!in.done()) return std::nullopt;
  return files;
}

LayerIndex index_layer(std::string_view blob, std::string_view display_name,
                       const ExtractLimits& limits, FileKeeper* keeper) {
  if (blob.size() > limits.max_layer_bytes) {
    throw Error(std::string(display_name) + ": refused: larger than " +
                std::to_string(limits.max_layer_bytes) + " bytes");
  }
  LayerIndex index;
  index.gzip = is_gzip(blob);
  index.blob_size = blob.size();
  ResumePoint start{0, 0, index.gzip};
  index.points.push_back(start);
  Inflater inflater(blob, 0, index.gzip, start, display_name);
  inflater.record_into(index.points);
  TarSource source(inflater);
  Indexer(display_name, limits, keeper).run(source, index);
  if (std::string problem = path_problem(index); !problem.empty())
    throw Error(std::string(display_name) + ": " + problem);
  return index;
}

std::map<std::string, std::string> read_layer_dir(const BlobReader& read_blob,
                                                  const LayerIndex& index, std::string_view dir,
                                                  std::string_view display_name) {
  std::string prefix = dir.empty() ? "" : std::string(dir) + "/";
  std::uint64_t begin = UINT64_MAX;
  std::uint64_t end = 0;
  for (const LayerFile& file : index.files) {
    if (!file.path.starts_with(prefix)) continue;
    begin = std::min(begin, file.offset);
    end = std::max(end, file.offset + file.size);
  }
  std::map<std::string, std::string> files;
  if (begin == UINT64_MAX) return files;
  auto out_after = [](std::uint64_t at, const ResumePoint& p) { return at < p.out; };
  auto after = std::upper_bound(index.points.begin(), index.points.end(), begin, out_after);
  if (after == index.points.begin()) throw Error(std::string(display_name) + ": no resume point");
  const ResumePoint& from = *std::prev(after);
  // Inflating from `from` to the first point at or past `end` needs the
  // blob up to that point's input.
  auto until = std::lower_bound(index.points.begin(), index.points.end(), end,
                                [](const ResumePoint& p, std::uint64_t at) { return p.out < at; });
  std::uint64_t first = from.in;
  std::uint64_t last = until == index.points.end() ? index.blob_size : until->in;
  if (last < first || last > index.blob_size)
    throw Error(std::string(display_name) + ": the layer index does not match the blob");
  std::string bytes = read_blob(first, last - first);
  Inflater inflater(bytes, first, index.gzip, from, display_name);
  TarSource source(inflater);
  // Each file straight into its own string, in archive order: the
  // directory's bytes are held once, not once more as the span they lie in.
  std::uint64_t at = from.out;
  std::string truncated = std::string(display_name) + ": truncated tar archive";
  for (const LayerFile& file : index.files) {
    if (!file.path.starts_with(prefix)) continue;
    if (file.offset < at)
      throw Error(std::string(display_name) + ": the layer index is not in archive order");
    source.skip(file.offset - at, display_name);
    std::string bytes = source.take(file.size, truncated);
    at = file.offset + file.size;
    files.emplace(file.path, std::move(bytes));
  }
  return files;
}

std::map<std::string, std::string> read_layer_dir(std::string_view blob, const LayerIndex& index,
                                                  std::string_view dir,
                                                  std::string_view display_name) {
  return read_layer_dir(
      [blob, display_name](std::uint64_t offset, std::uint64_t size) {
        if (offset > blob.size() || size > blob.size() - offset)
          throw Error(std::string(display_name) + ": truncated gzip stream");
        return std::string(blob.substr(offset, size));
      },
      index, dir, display_name);
}

BlobReader layer_blob_reader(const Layer& layer, std::string_view display_name) {
  BlobReader read = blob_file_reader(layer.path, display_name);
  if (layer.blob_checked) return read;
  auto checked = std::make_shared<bool>(false);
  return [read = std::move(read), checked, path = layer.path, digest = layer.index.blob_digest,
          on_damaged = layer.on_damaged,
          display = std::string(display_name)](std::uint64_t offset, std::uint64_t size) {
    if (!*checked) {
      std::string found;
      try {
        found = sha256_file(path);
      } catch (const Error&) {
        // Unreadable: as damaged as a changed byte.
      }
      if (found != digest) {
        if (on_damaged) on_damaged();
        throw Error(display + ": the cached layer " + path +
                    " is damaged (it does not have the digest " + digest +
                    "): removed from the cache, to be pulled again");
      }
      *checked = true;
    }
    return read(offset, size);
  };
}

BlobReader blob_file_reader(const std::string& path, std::string_view display_name) {
  return [path, display = std::string(display_name)](std::uint64_t offset, std::uint64_t size) {
    try {
      return InputFile(path, kMaxLayerBytes).read_at(offset, size);
    } catch (const Error& e) {
      throw Error(display + ": " + e.what());
    }
  };
}

}  // namespace fluxop::oci
