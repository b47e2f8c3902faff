#include "core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/error.h"

namespace fluxop {

namespace fs = std::filesystem;

namespace {

std::string too_large(const std::string& name, std::size_t max_bytes = kMaxInputBytes) {
  return name + ": larger than " + std::to_string(max_bytes >> 20) +
         " MiB, the most an input may be";
}

}  // namespace

std::string read_input_file(const std::string& path, bool pipes, std::size_t max_bytes) {
  // Non-blocking, so that opening a FIFO nobody writes to does not wait;
  // reads block again below.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(path + ": " + std::strerror(errno));
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    int error = errno;
    close(fd);
    throw Error(path + ": " + std::strerror(error));
  }
  bool accepted = S_ISREG(info.st_mode) || (pipes && S_ISFIFO(info.st_mode));
  if (!accepted) {
    close(fd);
    throw Error(path + (S_ISDIR(info.st_mode) ? ": is a directory" : ": not a regular file"));
  }
  if (S_ISREG(info.st_mode) && static_cast<std::size_t>(info.st_size) > max_bytes) {
    close(fd);
    throw Error(too_large(path, max_bytes));
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string bytes;
  char buffer[65536];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      close(fd);
      throw Error(path + ": " + std::strerror(error));
    }
    if (n == 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > max_bytes) {
      close(fd);
      throw Error(too_large(path, max_bytes));
    }
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
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

std::optional<std::string> read_file_if_exists(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void create_directories(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw Error(dir + ": cannot create the directory: " + error.message());
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void FileWriter::fail(int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  throw Error(path_ + ": cannot write: " + std::strerror(error));
}

void FileWriter::open(const std::string& path) {
  if (fd_ >= 0) ::close(fd_);
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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

void FileWriter::close() {
  int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) fail(errno);
}

void write_file(const std::string& path, const std::string& text) {
  FileWriter file;
  file.open(path);
  file.write(text);
  file.close();
}

void write_file_atomically(const std::string& path, const std::string& text) {
  if (fs::path parent = fs::path(path).parent_path(); !parent.empty())
    create_directories(parent.string());
  std::string temporary = path + ".tmp" + std::to_string(getpid());
  std::error_code error;
  try {
    write_file(temporary, text);
  } catch (const Error&) {
    fs::remove(temporary, error);
    throw;
  }
  fs::rename(temporary, path, error);
  if (error) {
    std::string reason = error.message();
    fs::remove(temporary, error);
    throw Error(path + ": cannot write: " + reason);
  }
}

std::string utc_rfc3339(std::time_t seconds) {
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace fluxop
