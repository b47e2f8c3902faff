#include "core/file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "core/error.h"

namespace fluxop {

namespace fs = std::filesystem;

namespace {

std::string too_large(const std::string& name, std::size_t max_bytes = kMaxInputBytes) {
  return name + ": larger than " + std::to_string(max_bytes >> 20) +
         " MiB, the most an input may be";
}

// Opens `path` for reading without waiting on a FIFO nobody writes to (reads
// block again afterwards); -1 and errno on failure. `info` is what was opened.
int open_for_reading(const std::string& path, struct stat& info, bool follow_links = true) {
  int fd =
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_links ? 0 : O_NOFOLLOW));
  if (fd < 0) return -1;
  if (fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// Reads `fd` to its end in parts given to `take`, at most `max_bytes` in
// all: 0, or -1 past the bound, or the errno of a failed read (ETIME: a
// pipe gave neither bytes nor its end for `stall`, when given).
int read_all(int fd, std::uint64_t max_bytes, const std::function<void(std::string_view)>& take,
             std::optional<std::chrono::milliseconds> stall = std::nullopt) {
  char buffer[65536];
  std::uint64_t total = 0;
  for (;;) {
    if (stall) {
      // A FIFO no process has opened for writing yet reads as its end (it
      // was opened without waiting): poll first, which waits for a byte or a
      // writer's close. Linux reports no hang-up before a writer came.
      pollfd ready{fd, POLLIN, 0};
      int events = ::poll(&ready, 1, static_cast<int>(stall->count()));
      if (events < 0 && errno == EINTR) continue;
      if (events < 0) return errno;
      if (events == 0) return ETIME;
    }
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    total += static_cast<std::uint64_t>(n);
    if (total > max_bytes) return -1;  // it may have grown since fstat
    take({buffer, static_cast<std::size_t>(n)});
  }
}

// A name no process has used next to `path`: "<path>.tmp-<16 hex digits>".
std::string unique_name(const std::string& path) {
  std::uint64_t random = 0;
  if (getrandom(&random, sizeof random, 0) != sizeof random) {
    static std::atomic<std::uint64_t> counter{0};
    random =
        (static_cast<std::uint64_t>(getpid()) << 32) ^ ++counter ^
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random));
  return path + suffix;
}

// Writes `text` to a new temporary file next to `path`; returns its name.
std::string write_temporary(const std::string& path, std::string_view text, mode_t mode) {
  if (fs::path parent = fs::path(path).parent_path(); !parent.empty())
    create_directories(parent.string());
  FileWriter file;
  std::string temporary;
  for (int attempt = 0;; ++attempt) {
    temporary = unique_name(path + ".tmp-");
    try {
      file.open(temporary, mode);
      break;
    } catch (const Error&) {
      // Taken by a file planted under that name: another name. Any other
      // failure is the directory's, and says so.
      if (file.error() != EEXIST || attempt == 8) throw;
    }
  }
  try {
    file.write(text);
    file.close();
  } catch (const Error&) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
  return temporary;
}

}  // namespace

std::string read_input_file(const std::string& path, bool pipes, std::size_t max_bytes) {
  struct stat info {};
  int fd = open_for_reading(path, info);
  if (fd < 0) throw Error(path + ": " + std::strerror(errno));
  bool accepted = S_ISREG(info.st_mode) || (pipes && S_ISFIFO(info.st_mode));
  if (!accepted) {
    ::close(fd);
    throw Error(path + (S_ISDIR(info.st_mode) ? ": is a directory" : ": not a regular file"));
  }
  if (S_ISREG(info.st_mode) && static_cast<std::size_t>(info.st_size) > max_bytes) {
    ::close(fd);
    throw Error(too_large(path, max_bytes));
  }
  std::string bytes;
  std::optional<std::chrono::milliseconds> stall;
  if (S_ISFIFO(info.st_mode)) stall = kPipeStall;
  int result = read_all(
      fd, max_bytes, [&](std::string_view part) { bytes.append(part); }, stall);
  ::close(fd);
  if (result < 0) throw Error(too_large(path, max_bytes));
  if (result == ETIME)
    throw Error(
        path + ": a pipe that gave nothing for " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kPipeStall).count()) +
        " s (no process writes to it)");
  if (result > 0) throw Error(path + ": " + std::strerror(result));
  return bytes;
}

std::string read_input_stream(std::istream& in, const std::string& name, std::size_t max_bytes) {
  std::string bytes;
  char buffer[65536];
  errno = 0;  // what a failed read sets, for the message
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    if (bytes.size() + static_cast<std::size_t>(in.gcount()) > max_bytes)
      throw Error(too_large(name, max_bytes));
    bytes.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  int error = errno;
  // std::cin reads through C's stdin, which keeps a failed read (stdin a
  // directory, an I/O error) to itself: the istream sees an end of input.
  if (in.bad() || (&in == &std::cin && std::ferror(stdin))) {
    throw Error(name + ": read error" + (error ? ": " + std::string(std::strerror(error)) : ""));
  }
  return bytes;
}

namespace {

// read_kept_file's, with `opened` told the file's size before its bytes come.
bool read_sized_file(const std::string& path, std::uint64_t max_bytes,
                     const std::function<void(std::uint64_t size)>& opened,
                     const std::function<void(std::string_view)>& take) {
  struct stat info {};
  int fd = open_for_reading(path, info);
  if (fd < 0) return false;
  bool ok = S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) <= max_bytes;
  if (ok && opened) opened(static_cast<std::uint64_t>(info.st_size));
  ok = ok && read_all(fd, max_bytes, take) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

bool read_kept_file(const std::string& path, std::uint64_t max_bytes,
                    const std::function<void(std::string_view)>& take) {
  return read_sized_file(path, max_bytes, nullptr, take);
}

std::optional<std::string> read_kept_file(const std::string& path, std::uint64_t max_bytes) {
  std::string bytes;
  // Allocated once at its size: grown by doubling, a 300 KB file took twice
  // its pages, each a page fault.
  if (!read_sized_file(
          path, max_bytes, [&](std::uint64_t size) { bytes.reserve(size); },
          [&](std::string_view part) { bytes.append(part); }))
    return std::nullopt;
  return bytes;
}

InputFile::InputFile(const std::string& path, std::uint64_t max_bytes, bool follow_links)
    : path_(path) {
  struct stat info {};
  fd_ = open_for_reading(path, info, follow_links);
  if (fd_ < 0) throw Error(path + ": " + std::strerror(errno));
  std::string problem = S_ISDIR(info.st_mode)    ? "is a directory"
                        : !S_ISREG(info.st_mode) ? "not a regular file"
                        : static_cast<std::uint64_t>(info.st_size) > max_bytes
                            ? "larger than " + std::to_string(max_bytes) + " bytes"
                            : "";
  if (!problem.empty()) {
    ::close(fd_);
    throw Error(path + ": " + problem);
  }
  size_ = static_cast<std::uint64_t>(info.st_size);
  mode_ = info.st_mode;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFile::read_at(std::uint64_t offset, std::uint64_t size) const {
  std::string bytes(size, '\0');
  std::uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, bytes.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path_ + ": " + std::strerror(errno));
    if (n == 0) throw Error(path_ + ": shorter than its index says");
    done += static_cast<std::uint64_t>(n);
  }
  return bytes;
}

std::size_t InputFile::read(char* buffer, std::size_t size) {
  for (;;) {
    ssize_t n = ::read(fd_, buffer, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path_ + ": " + std::strerror(errno));
    return static_cast<std::size_t>(n);
  }
}

std::FILE* InputFile::release() {
  std::FILE* file = fdopen(fd_, "rb");
  if (!file) throw Error(path_ + ": " + std::strerror(errno));
  fd_ = -1;
  return file;
}

void create_directories(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw Error(dir + ": cannot create the directory: " + error.message());
}

std::string create_unique_directory(const std::string& prefix, mode_t mode) {
  for (int attempt = 0;; ++attempt) {
    std::string dir = unique_name(prefix);
    if (mkdir(dir.c_str(), mode) == 0) return dir;
    if (errno != EEXIST || attempt == 8)
      throw Error(dir + ": cannot create the directory: " + std::strerror(errno));
  }
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void FileWriter::fail(int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  error_ = error;
  throw Error(path_ + ": cannot write: " + std::strerror(error));
}

void FileWriter::open(const std::string& path, mode_t mode, int dir) {
  static_assert(AT_FDCWD == -100);
  if (fd_ >= 0) ::close(fd_);
  path_ = path;
  fd_ = ::openat(dir, path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd_ < 0) fail(errno);
}

void FileWriter::write(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) fail(errno);
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

void FileWriter::restart() {
  if (ftruncate(fd_, 0) != 0 || lseek(fd_, 0, SEEK_SET) != 0) fail(errno);
}

void FileWriter::close() {
  int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) fail(errno);
}

void write_new_file(const std::string& path, std::string_view text) {
  FileWriter file;
  file.open(path);
  file.write(text);
  file.close();
}

void write_file_atomically(const std::string& path, std::string_view text, mode_t mode) {
  std::string temporary = write_temporary(path, text, mode);
  std::error_code error;
  // rename() replaces a link at `path` itself, never what it points to.
  fs::rename(temporary, path, error);
  if (error) {
    std::string reason = error.message();
    fs::remove(temporary, error);
    throw Error(path + ": cannot write: " + reason);
  }
}

bool create_file_atomically(const std::string& path, std::string_view text, mode_t mode) {
  std::string temporary = write_temporary(path, text, mode);
  // link() creates `path` whole or not at all, and never over what is there.
  int result = ::link(temporary.c_str(), path.c_str());
  int error = errno;
  ::unlink(temporary.c_str());
  if (result == 0) return true;
  if (error == EEXIST) return false;
  throw Error(path + ": cannot write: " + std::strerror(error));
}

namespace {

// Whether the process a lock file names ("pid N") is stopped: state T or t
// in /proc/N/stat, after the command's name in parentheses.
bool holder_is_stopped(const std::string& holder) {
  if (!holder.starts_with("pid ")) return false;
  std::optional<std::string> stat = read_kept_file("/proc/" + holder.substr(4) + "/stat", 4096);
  std::size_t close = stat ? stat->rfind(')') : std::string::npos;
  if (close == std::string::npos || close + 2 >= stat->size()) return false;
  char state = (*stat)[close + 2];
  return state == 'T' || state == 't';
}

}  // namespace

std::unique_ptr<FileLock> FileLock::acquire(
    const std::string& path, bool exclusive, std::chrono::milliseconds timeout,
    const std::function<void(const std::string& holder)>& waiting, bool* stopped) {
  if (stopped) *stopped = false;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  // Another user's, in a shared cache: a lock all the same.
  if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  auto lock = std::make_unique<FileLock>(fd);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool said = false;
  std::string holder;
  for (int round = 0; flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0; ++round) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      throw Error(path + ": cannot lock: " + std::strerror(errno));
    // Who holds it, read again now and then: another may have taken it.
    if (round % 20 == 0) {
      holder = read_kept_file(path, 64).value_or("");
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    }
    if (!said && waiting) waiting(holder);
    said = true;
    if (holder_is_stopped(holder)) {
      if (stopped) *stopped = true;
      return nullptr;
    }
    if (std::chrono::steady_clock::now() >= deadline) return nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Who holds it, for those who wait: the lock file is the holder's to write.
  if (exclusive) {
    std::string holder = "pid " + std::to_string(getpid()) + "\n";
    if (ftruncate(fd, 0) == 0 && pwrite(fd, holder.data(), holder.size(), 0) < 0) {
      // Unsaid: the waiters say they wait for an unknown process.
    }
  }
  return lock;
}

FileLock::~FileLock() {
  flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace fluxop
