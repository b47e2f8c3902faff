#include "core/oci/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <set>
#include <system_error>
#include <utility>

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

struct WriterFree {
  void operator()(archive* writer) const { archive_write_free(writer); }
};
struct EntryFree {
  void operator()(archive_entry* entry) const { archive_entry_free(entry); }
};
using ArchiveWriter = std::unique_ptr<archive, WriterFree>;
using Entry = std::unique_ptr<archive_entry, EntryFree>;

std::string errno_message() { return std::strerror(errno); }

std::string archive_message(archive* handle) {
  const char* message = archive_error_string(handle);
  return message ? message : "unknown libarchive error";
}

// write(2) may write less than asked, or be interrupted.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return false;
    data += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

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
    mode_t mode = entry.executable ? 0755 : 0644;
    Fd out(
        ::openat(parent, file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!out) fail(entry.path, errno_message());
    if (!write_all(out.get(), bytes.data(), bytes.size())) fail(entry.path, errno_message());
    if (out.close() != 0) fail(entry.path, errno_message());
  }

  [[noreturn]] void fail(std::string_view name, const std::string& message) const {
    throw Error(std::string(display_name_) + ": entry " + printable_name(name) + ": " + message);
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

class Packer {
 public:
  Packer(const std::string& root_dir, archive* writer)
      : root_dir_(root_dir), writer_(writer), entry_(archive_entry_new()), buffer_(kBufferSize) {
    if (!entry_) throw Error(root_dir + ": out of memory");
  }

  // "." is written "./", as GNU tar and flux's artifacts have it.
  void add_root() { write_header(".", AE_IFDIR, 0755, 0, root_dir_); }

  // Adds `name` (relative to the root) and, for a directory, all below it.
  void add(const std::string& name) {
    std::string path = (fs::path(root_dir_) / name).string();
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) throw Error(path + ": " + errno_message());
    if (S_ISREG(info.st_mode)) return add_file(name, path);
    if (!S_ISDIR(info.st_mode)) throw Error(path + ": refused: " + kind(info.st_mode));
    write_header(name, AE_IFDIR, 0755, 0, path);
    for (const std::string& child : sorted_children(path)) add(name + "/" + child);
  }

 private:
  void add_file(const std::string& name, const std::string& path) {
    // O_NOFOLLOW and O_NONBLOCK in case the file was swapped for a link or a
    // FIFO after lstat; fstat then tells what was opened.
    Fd in(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!in) throw Error(path + ": " + errno_message());
    struct stat info {};
    if (::fstat(in.get(), &info) != 0) throw Error(path + ": " + errno_message());
    if (!S_ISREG(info.st_mode)) throw Error(path + ": refused: " + kind(info.st_mode));
    mode_t perm = (info.st_mode & 0111) ? 0755 : 0644;
    write_header(name, AE_IFREG, perm, info.st_size, path);
    copy_data(in.get(), static_cast<std::uint64_t>(info.st_size), path);
  }

  // Exactly the size the header announced, or an error.
  void copy_data(int fd, std::uint64_t size, const std::string& path) {
    while (size > 0) {
      ssize_t read = ::read(fd, buffer_.data(), std::min<std::uint64_t>(size, buffer_.size()));
      if (read < 0 && errno == EINTR) continue;
      if (read < 0) throw Error(path + ": " + errno_message());
      if (read == 0) throw Error(path + ": changed while being archived");
      if (archive_write_data(writer_, buffer_.data(), static_cast<std::size_t>(read)) != read) {
        throw Error(path + ": " + archive_message(writer_));
      }
      size -= static_cast<std::uint64_t>(read);
    }
  }

  // Only what `flux push artifact` keeps: no owner names, times or umask.
  void write_header(const std::string& name, mode_t type, mode_t perm, la_int64_t size,
                    const std::string& path) {
    archive_entry* entry = entry_.get();
    archive_entry_clear(entry);
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_filetype(entry, type);
    archive_entry_set_perm(entry, perm);
    archive_entry_set_size(entry, size);
    archive_entry_set_uid(entry, 0);
    archive_entry_set_gid(entry, 0);
    archive_entry_set_mtime(entry, 0, 0);
    if (archive_write_header(writer_, entry) != ARCHIVE_OK) {
      throw Error(path + ": " + archive_message(writer_));
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

  std::string root_dir_;
  archive* writer_;
  Entry entry_;
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

// libarchive's write callback: appends to the std::string `out`.
la_ssize_t append_to(archive* handle, void* out, const void* data, std::size_t size) {
  try {
    static_cast<std::string*>(out)->append(static_cast<const char*>(data), size);
  } catch (const std::bad_alloc&) {
    archive_set_error(handle, ENOMEM, "out of memory");
    return -1;
  }
  return static_cast<la_ssize_t>(size);
}

ArchiveWriter open_writer(std::string& out, const std::string& root_dir) {
  ArchiveWriter writer(archive_write_new());
  if (!writer) throw Error(root_dir + ": out of memory");
  archive* handle = writer.get();
  // pax_restricted writes plain ustar headers unless a name does not fit.
  bool ok = archive_write_set_format_pax_restricted(handle) == ARCHIVE_OK &&
            // A warning only says an external gzip program will run.
            archive_write_add_filter_gzip(handle) >= ARCHIVE_WARN &&
            // No timestamp in the gzip header (libarchive writes no name):
            // equal trees must give equal bytes.
            archive_write_set_filter_option(handle, "gzip", "timestamp", nullptr) == ARCHIVE_OK &&
            // The gzip stream ends where it ends, as archive_write_open_fd
            // leaves a regular file, instead of padded with zeros to a
            // 10240-byte block: the layer's bytes stay those of earlier pushes.
            archive_write_set_bytes_in_last_block(handle, 1) == ARCHIVE_OK &&
            archive_write_open2(handle, &out, nullptr, append_to, nullptr, nullptr) == ARCHIVE_OK;
  if (!ok) throw Error(root_dir + ": " + archive_message(handle));
  return writer;
}

}  // namespace

void extract_archive(const std::string& archive_path, const std::string& dest_dir,
                     std::string_view display_name, const ExtractLimits& limits) {
  open_empty_directory(dest_dir);  // checked before anything is read
  Layer layer;
  std::optional<std::string> blob = read_file_if_exists(archive_path);
  if (!blob) throw Error(std::string(display_name) + ": " + archive_path + ": cannot be read");
  layer.blob = std::move(*blob);
  layer.index = index_layer(layer.blob, display_name, limits);
  extract_layer(layer, dest_dir, display_name);
}

void extract_layer(const Layer& layer, const std::string& dest_dir, std::string_view display_name) {
  Fd root = open_empty_directory(dest_dir);
  Extractor(display_name, std::move(root))
      .run(layer.index, read_layer_dir(layer.blob, layer.index, "", display_name));
}

std::string create_archive(const std::string& root_dir, const std::vector<std::string>& entries) {
  check_entries(root_dir, entries);
  std::string out;
  // Declared after `out`, which it writes to until it is freed.
  ArchiveWriter writer = open_writer(out, root_dir);
  Packer packer(root_dir, writer.get());
  packer.add_root();
  for (const std::string& entry : entries) packer.add(entry);
  if (archive_write_close(writer.get()) != ARCHIVE_OK) {
    throw Error(root_dir + ": " + archive_message(writer.get()));
  }
  return out;
}

}  // namespace fluxop::oci
