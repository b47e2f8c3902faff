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

struct ReaderFree {
  void operator()(archive* reader) const { archive_read_free(reader); }
};
struct WriterFree {
  void operator()(archive* writer) const { archive_write_free(writer); }
};
struct EntryFree {
  void operator()(archive_entry* entry) const { archive_entry_free(entry); }
};
using ArchiveReader = std::unique_ptr<archive, ReaderFree>;
using ArchiveWriter = std::unique_ptr<archive, WriterFree>;
using Entry = std::unique_ptr<archive_entry, EntryFree>;

std::string errno_message() { return std::strerror(errno); }

std::string archive_message(archive* handle) {
  const char* message = archive_error_string(handle);
  return message ? message : "unknown libarchive error";
}

// A name as it may stand in a one-line message: control bytes escaped, an
// empty name quoted.
std::string printable(std::string_view name) {
  if (name.empty()) return "\"\"";
  std::string out;
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
      continue;
    }
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
    out += escaped;
  }
  return out;
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

class Extractor {
 public:
  Extractor(archive* reader, std::string_view display_name, const ExtractLimits& limits, Fd root)
      : reader_(reader),
        display_name_(display_name),
        limits_(limits),
        root_(std::move(root)),
        buffer_(kBufferSize) {}

  void run() {
    for (;;) {
      archive_entry* entry = nullptr;
      int status = archive_read_next_header(reader_, &entry);
      if (status == ARCHIVE_EOF) return;
      // A warning (say, a malformed pax attribute) leaves a usable header.
      if (status != ARCHIVE_OK && status != ARCHIVE_WARN) {
        throw Error(std::string(display_name_) + ": " + archive_message(reader_));
      }
      extract(entry);
    }
  }

 private:
  void extract(archive_entry* entry) {
    const char* pathname = archive_entry_pathname(entry);
    std::string_view name = pathname ? pathname : "";
    // Counted before anything is written, so a flood of entries stops early.
    if (++entries_ > limits_.max_files) {
      refuse(name, "the archive has more than " + std::to_string(limits_.max_files) + " entries");
    }
    std::vector<std::string> parts = components(name);
    check_type(entry, name);
    std::string key;
    for (const std::string& part : parts) key += "/" + part;
    if (!seen_.insert(key).second) refuse(name, "duplicate entry");
    bool directory = archive_entry_filetype(entry) == AE_IFDIR;
    if (parts.empty()) {
      // The root entry ("." or "./") stands for dest_dir, which exists.
      if (!directory) refuse(name, "the root entry is not a directory");
      return;
    }
    if (directory) {
      open_directories(parts, parts.size(), name);
      return;
    }
    Fd parent = open_directories(parts, parts.size() - 1, name);
    write_file(entry, parent ? parent.get() : root_.get(), parts.back(), name);
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
      if (!part.empty() && part != ".") parts.emplace_back(part);
      start = end + 1;
    }
    return parts;
  }

  void check_type(archive_entry* entry, std::string_view name) const {
    // A hard link is typed as a regular file: only its target tells.
    if (const char* target = archive_entry_hardlink(entry)) {
      refuse(name, "hard link to " + printable(target));
    }
    switch (archive_entry_filetype(entry)) {
      case AE_IFREG:
      case AE_IFDIR:
        return;
      case AE_IFLNK: {
        const char* target = archive_entry_symlink(entry);
        refuse(name, "symbolic link to " + printable(target ? target : ""));
      }
      case AE_IFCHR:
        refuse(name, "character device");
      case AE_IFBLK:
        refuse(name, "block device");
      case AE_IFIFO:
        refuse(name, "FIFO");
      case AE_IFSOCK:
        refuse(name, "socket");
      default:
        refuse(name, "unsupported entry type");
    }
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

  void write_file(archive_entry* entry, int parent, const std::string& file,
                  std::string_view name) {
    // The declared size is checked first, so an oversized file is refused
    // before it is created; the bytes read are counted too, since that is
    // what lands on disk (a sparse entry reads as more than it stores).
    la_int64_t declared = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : 0;
    check_budget(static_cast<std::uint64_t>(std::max<la_int64_t>(declared, 0)), name);
    mode_t mode = (archive_entry_perm(entry) & 0111) ? 0755 : 0644;
    Fd out(
        ::openat(parent, file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!out) fail(name, errno_message());
    for (;;) {
      la_ssize_t read = archive_read_data(reader_, buffer_.data(), buffer_.size());
      if (read < 0) fail(name, archive_message(reader_));
      if (read == 0) break;
      auto size = static_cast<std::size_t>(read);
      check_budget(size, name);
      total_bytes_ += size;
      if (!write_all(out.get(), buffer_.data(), size)) fail(name, errno_message());
    }
    if (out.close() != 0) fail(name, errno_message());
  }

  void check_budget(std::uint64_t more, std::string_view name) const {
    // total_bytes_ never exceeds the limit, so the difference cannot wrap.
    if (more > limits_.max_total_bytes - total_bytes_) {
      refuse(name,
             "the archive's files exceed " + std::to_string(limits_.max_total_bytes) + " bytes");
    }
  }

  [[noreturn]] void fail(std::string_view name, const std::string& message) const {
    throw Error(std::string(display_name_) + ": entry " + printable(name) + ": " + message);
  }
  [[noreturn]] void refuse(std::string_view name, const std::string& reason) const {
    fail(name, "refused: " + reason);
  }

  archive* reader_;
  std::string_view display_name_;
  const ExtractLimits& limits_;
  Fd root_;
  std::vector<char> buffer_;
  std::set<std::string> seen_;  // entry names normalized ("/a/b"), the root as ""
  std::uint64_t entries_ = 0;
  std::uint64_t total_bytes_ = 0;
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

ArchiveReader open_reader(const std::string& path, std::string_view display_name) {
  ArchiveReader reader(archive_read_new());
  if (!reader) throw Error(std::string(display_name) + ": out of memory");
  // Data no filter claims passes through unfiltered: a plain tar reads too.
  archive_read_support_filter_gzip(reader.get());
  archive_read_support_format_tar(reader.get());
  if (archive_read_open_filename(reader.get(), path.c_str(), kBufferSize) != ARCHIVE_OK) {
    throw Error(std::string(display_name) + ": " + archive_message(reader.get()));
  }
  return reader;
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
  Fd root = open_empty_directory(dest_dir);
  ArchiveReader reader = open_reader(archive_path, display_name);
  Extractor(reader.get(), display_name, limits, std::move(root)).run();
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
