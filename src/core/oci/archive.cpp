#include "core/oci/archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <set>
#include <system_error>
#include <utility>

#include "core/digest.h"
#include "core/error.h"
#include "core/file.h"
#include "core/oci/layer.h"

namespace fluxop::oci {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBufferSize = 64 * 1024;

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

  // Closes now and returns close(2)'s result: for a written file, the last
  // place a write error (e.g. on NFS) shows.
  int close() { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_ = -1;
};

std::string errno_message() { return std::strerror(errno); }

// ---------------------------------------------------------------- extract

// Writes the files of an indexed layer below a directory.
class Extractor {
 public:
  Extractor(std::string_view display_name, Fd root)
      : display_name_(display_name), root_(std::move(root)) {}

  void run(const LayerIndex& index, const std::map<std::string, std::string>& content) {
    for (const std::string& dir : index.dirs) {
      std::vector<std::string> parts = split(dir);
      open_directories(parts, parts.size(), dir);
    }
    for (const LayerFile& file : index.files) {
      std::vector<std::string> parts = split(file.path);
      Fd parent = open_directories(parts, parts.size() - 1, file.path);
      write_file(parent ? parent.get() : root_.get(), parts.back(), file, content.at(file.path));
    }
  }

 private:
  static std::vector<std::string> split(const std::string& path) {
    std::vector<std::string> parts;
    for (std::size_t start = 0; start <= path.size();) {
      std::size_t end = std::min(path.find('/', start), path.size());
      parts.push_back(path.substr(start, end - start));
      start = end + 1;
    }
    return parts;
  }

  // Opens the directory parts[0, count) below the root (an empty Fd for the
  // root itself), creating what is missing. Every step is O_NOFOLLOW from
  // the previous one, so no link, even one planted from outside meanwhile,
  // can lead the extraction out of dest_dir.
  Fd open_directories(const std::vector<std::string>& parts, std::size_t count,
                      std::string_view name) const {
    Fd current;
    for (std::size_t i = 0; i < count; ++i) {
      int at = current ? current.get() : root_.get();
      const char* part = parts[i].c_str();
      if (::mkdirat(at, part, 0755) != 0 && errno != EEXIST) fail(name, errno_message());
      // An existing file fails with ENOTDIR here, a link with ELOOP.
      Fd next(::openat(at, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!next) fail(name, errno_message());
      current = std::move(next);
    }
    return current;
  }

  void write_file(int parent, const std::string& file, const LayerFile& entry,
                  const std::string& bytes) const {
    FileWriter out;
    try {
      out.open(file, entry.executable ? 0777 : 0666, parent);
      out.write(bytes);
      out.close();
    } catch (const Error&) {
      fail(entry.path, std::strerror(out.error()));
    }
  }

  [[noreturn]] void fail(std::string_view name, const std::string& message) const {
    throw Error(std::string(display_name_) + ": entry " + quote(name, kQuotedPathCharacters) +
                ": " + message);
  }

  std::string_view display_name_;
  Fd root_;
};

Fd open_empty_directory(const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) throw Error(dir + ": not a directory");
  if (!fs::is_empty(dir, error)) {
    throw Error(dir + ": " + (error ? error.message() : "not an empty directory"));
  }
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) throw Error(dir + ": " + errno_message());
  return fd;
}

// ---------------------------------------------------------------- create

// A tar stream gzipped as it is written, into a string: ustar headers, a pax
// header only for a name ustar cannot hold, no owners or times.
class TarGzipWriter {
 public:
  explicit TarGzipWriter(std::string& out) : out_(out) {
    // Level 6, zlib's default; a gzip header without name or time.
    if (deflateInit2(&stream_, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw Error("gzip: cannot start");
  }
  ~TarGzipWriter() { deflateEnd(&stream_); }
  TarGzipWriter(const TarGzipWriter&) = delete;
  TarGzipWriter& operator=(const TarGzipWriter&) = delete;

  // `name` ends with "/" for a directory.
  void header(const std::string& name, bool directory, mode_t perm, std::uint64_t size) {
    char block[kBlock] = {};
    if (!fits_ustar(name, block)) {
      pax_path(name);
      std::memcpy(block, name.data(), std::min<std::size_t>(name.size(), 100));
    }
    octal(block + 100, 8, perm);
    octal(block + 108, 8, 0);  // uid
    octal(block + 116, 8, 0);  // gid
    octal(block + 124, 12, size);
    octal(block + 136, 12, 0);  // mtime
    block[156] = directory ? '5' : '0';
    std::memcpy(block + 257,
                "ustar\0"
                "00",
                8);
    finish(block);
    ++entries_;
  }

  // Entries written, counted as extraction counts them.
  std::uint64_t entries() const { return entries_; }
  std::uint64_t compressed_bytes() const { return out_.size(); }

  void data(const char* bytes, std::size_t size) {
    deflate_bytes(bytes, size, Z_NO_FLUSH);
    tar_hash_.update({bytes, size});
    written_ += size;
  }

  // Pads the entry's data to a whole block.
  void end_entry() {
    static const char zeros[kBlock] = {};
    if (std::size_t rest = written_ % kBlock) data(zeros, kBlock - rest);
  }

  // Two zero blocks end the archive; the gzip trailer ends the stream.
  void close() {
    static const char zeros[2 * kBlock] = {};
    deflate_bytes(zeros, sizeof zeros, Z_FINISH);
    tar_hash_.update({zeros, sizeof zeros});
  }

  // "sha256:<hex>" of the uncompressed tar, once closed.
  std::string tar_digest() { return tar_hash_.finish(); }

 private:
  static constexpr std::size_t kBlock = 512;

  // Puts `name` in the name field, or split at a slash into prefix and
  // name; false when neither fits.
  static bool fits_ustar(const std::string& name, char* block) {
    if (name.size() <= 100) {
      std::memcpy(block, name.data(), name.size());
      return true;
    }
    for (std::size_t slash = name.find('/'); slash != std::string::npos;
         slash = name.find('/', slash + 1)) {
      if (slash > 155) break;
      if (name.size() - slash - 1 <= 100 && slash + 1 < name.size()) {
        std::memcpy(block + 345, name.data(), slash);
        std::memcpy(block, name.data() + slash + 1, name.size() - slash - 1);
        return true;
      }
    }
    return false;
  }

  // A pax extended header whose "path" record names the next entry.
  void pax_path(const std::string& name) {
    std::string body = " path=" + name + "\n";
    std::size_t length = body.size();
    // The record's length counts its own digits.
    while (std::to_string(length).size() + body.size() != length)
      length = std::to_string(length).size() + body.size();
    std::string record = std::to_string(length) + body;
    char block[kBlock] = {};
    std::string pax_name = "PaxHeader/" + name.substr(name.size() > 80 ? name.size() - 80 : 0);
    std::memcpy(block, pax_name.data(), std::min<std::size_t>(pax_name.size(), 100));
    octal(block + 100, 8, 0644);
    octal(block + 108, 8, 0);
    octal(block + 116, 8, 0);
    octal(block + 124, 12, record.size());
    octal(block + 136, 12, 0);
    block[156] = 'x';
    std::memcpy(block + 257,
                "ustar\0"
                "00",
                8);
    finish(block);
    ++entries_;  // extraction counts a pax header as an entry
    data(record.data(), record.size());
    end_entry();
  }

  // Octal digits filling the field but its last byte, a NUL.
  static void octal(char* field, std::size_t size, std::uint64_t value) {
    for (std::size_t i = size - 1; i-- > 0; value >>= 3)
      field[i] = static_cast<char>('0' + (value & 7));
    field[size - 1] = '\0';
  }

  // The checksum: the sum of the header's bytes, its own field as spaces.
  void finish(char* block) {
    std::memset(block + 148, ' ', 8);
    unsigned sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i) sum += static_cast<unsigned char>(block[i]);
    std::snprintf(block + 148, 8, "%06o", sum);
    block[155] = ' ';
    data(block, kBlock);
  }

  void deflate_bytes(const char* bytes, std::size_t size, int flush) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes));
    stream_.avail_in = static_cast<uInt>(size);
    char buffer[64 * 1024];
    int status = Z_OK;
    do {
      stream_.next_out = reinterpret_cast<Bytef*>(buffer);
      stream_.avail_out = sizeof buffer;
      status = deflate(&stream_, flush);
      if (status == Z_STREAM_ERROR) throw Error("gzip: deflate failed");
      out_.append(buffer, sizeof buffer - stream_.avail_out);
    } while (stream_.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END));
  }

  std::string& out_;
  z_stream stream_{};
  Sha256 tar_hash_;
  std::uint64_t written_ = 0;
  std::uint64_t entries_ = 0;
};

class Packer {
 public:
  Packer(const std::string& root_dir, TarGzipWriter& writer, const ExtractLimits& limits)
      : root_dir_(root_dir), writer_(writer), limits_(limits), buffer_(kBufferSize) {}

  // "." is written "./", as GNU tar and flux's artifacts have it.
  void add_root() {
    writer_.header("./", true, 0755, 0);
    check_entries_limit(root_dir_);
  }

  // Checked as the layer grows, so that an artifact too large is refused
  // before it is all in memory.
  void check_layer_limit(const std::string& path) const {
    if (writer_.compressed_bytes() > limits_.max_layer_bytes) {
      throw Error(path + ": refused: the artifact's layer would exceed " +
                  std::to_string(limits_.max_layer_bytes) + " bytes, more than pull accepts");
    }
  }

  // Adds `name` (relative to the root) and, for a directory, all below it.
  void add(const std::string& name) {
    std::string path = (fs::path(root_dir_) / name).string();
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) throw Error(path + ": " + errno_message());
    if (S_ISREG(info.st_mode)) return add_file(name, path);
    if (!S_ISDIR(info.st_mode)) throw Error(path + ": refused: " + kind(info.st_mode));
    writer_.header(name + "/", true, 0755, 0);
    check_entries_limit(path);
    for (const std::string& child : sorted_children(path)) add(name + "/" + child);
  }

 private:
  void add_file(const std::string& name, const std::string& path) {
    // No link followed, in case the file was swapped for a link or a FIFO
    // after lstat: what was opened must be a regular file.
    InputFile in(path, std::numeric_limits<std::uint64_t>::max(), /*follow_links=*/false);
    mode_t perm = (in.mode() & 0111) ? 0755 : 0644;
    auto size = in.size();
    if (size > limits_.max_total_bytes - total_bytes_) {
      throw Error(path + ": refused: the artifact's files would exceed " +
                  std::to_string(limits_.max_total_bytes) + " bytes, more than pull accepts");
    }
    total_bytes_ += size;
    writer_.header(name, false, perm, size);
    check_entries_limit(path);
    copy_data(in, size, path);
    writer_.end_entry();
  }

  // Exactly the size the header announced, or an error.
  void copy_data(InputFile& in, std::uint64_t size, const std::string& path) {
    while (size > 0) {
      std::size_t read = in.read(buffer_.data(), std::min<std::uint64_t>(size, buffer_.size()));
      if (read == 0) throw Error(path + ": changed while being archived");
      writer_.data(buffer_.data(), static_cast<std::size_t>(read));
      size -= static_cast<std::uint64_t>(read);
      check_layer_limit(path);
    }
  }

  static std::vector<std::string> sorted_children(const std::string& path) {
    std::vector<std::string> names;
    std::error_code error;
    for (const fs::directory_entry& child : fs::directory_iterator(path, error)) {
      names.push_back(child.path().filename().string());
    }
    if (error) throw Error(path + ": " + error.message());
    // std::string compares as unsigned char: byte order, as GNU tar's --sort=name.
    std::sort(names.begin(), names.end());
    return names;
  }

  static std::string kind(mode_t mode) {
    if (S_ISLNK(mode)) return "symbolic link";
    if (S_ISFIFO(mode)) return "FIFO";
    if (S_ISSOCK(mode)) return "socket";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "device";
    return "not a regular file or directory";
  }

  void check_entries_limit(const std::string& path) const {
    if (writer_.entries() > limits_.max_files) {
      throw Error(path + ": refused: the artifact would have more than " +
                  std::to_string(limits_.max_files) + " entries, more than pull accepts");
    }
  }

  std::string root_dir_;
  TarGzipWriter& writer_;
  const ExtractLimits& limits_;
  std::uint64_t total_bytes_ = 0;  // of the regular files so far
  std::vector<char> buffer_;
};

// Entries are plain relative names ("flux", "flux/v2.9.4"), none inside
// another: anything else would put a name twice, or one outside root_dir, in
// the archive.
void check_entries(const std::string& root_dir, const std::vector<std::string>& entries) {
  for (const std::string& entry : entries) {
    std::string path = (fs::path(root_dir) / entry).string();
    bool plain = !entry.empty() && entry.front() != '/' && entry.back() != '/' &&
                 entry.find("//") == std::string::npos;
    for (const fs::path& part : fs::path(entry)) plain = plain && part != "." && part != "..";
    if (!plain) throw Error(path + ": refused: not a plain name relative to " + root_dir);
    for (const std::string& other : entries) {
      if (&other != &entry && (entry == other || entry.starts_with(other + "/"))) {
        throw Error(path + ": refused: already archived as part of " + other);
      }
    }
  }
}

}  // namespace

void extract_archive(const std::string& archive_path, const std::string& dest_dir,
                     std::string_view display_name, const ExtractLimits& limits) {
  open_empty_directory(dest_dir);  // checked before anything is read
  std::string blob;
  try {
    blob = read_input_file(archive_path, false, limits.max_layer_bytes);
  } catch (const Error& e) {
    throw Error(std::string(display_name) + ": " + e.what());
  }
  extract_layer(Layer{.path = archive_path, .index = index_layer(blob, display_name, limits)},
                dest_dir, display_name);
}

void extract_layer(const Layer& layer, const std::string& dest_dir, std::string_view display_name) {
  Fd root = open_empty_directory(dest_dir);
  Extractor(display_name, std::move(root))
      .run(layer.index,
           read_layer_dir(layer_blob_reader(layer, display_name), layer.index, "", display_name));
}

std::string create_archive(const std::string& root_dir, const std::vector<std::string>& entries,
                           std::string* tar_digest, const ExtractLimits& limits) {
  check_entries(root_dir, entries);
  std::string out;
  TarGzipWriter writer(out);
  Packer packer(root_dir, writer, limits);
  packer.add_root();
  for (const std::string& entry : entries) packer.add(entry);
  writer.close();
  packer.check_layer_limit(root_dir);
  if (tar_digest) *tar_digest = writer.tar_digest();
  return out;
}

}  // namespace fluxop::oci
