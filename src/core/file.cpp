#include "core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace fluxop {

namespace fs = std::filesystem;

namespace {

std::string too_large(const std::string& name) {
  return name + ": larger than " + std::to_string(kMaxInputBytes >> 20) +
         " MiB, the most an input may be";
}

}  // namespace

std::string read_input_file(const std::string& path, bool pipes) {
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
  if (S_ISREG(info.st_mode) && static_cast<std::size_t>(info.st_size) > kMaxInputBytes) {
    close(fd);
    throw Error(too_large(path));
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
    if (bytes.size() + static_cast<std::size_t>(n) > kMaxInputBytes) {
      close(fd);
      throw Error(too_large(path));
    }
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  return bytes;
}

std::string read_input_stream(std::istream& in, const std::string& name) {
  std::string bytes;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    if (bytes.size() + static_cast<std::size_t>(in.gcount()) > kMaxInputBytes)
      throw Error(too_large(name));
    bytes.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(name + ": read error");
  return bytes;
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  if (!file.flush()) throw Error(path + ": cannot write");
}

void write_file_atomically(const std::string& path, const std::string& text) {
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  std::string temporary = path + ".tmp" + std::to_string(getpid());
  try {
    write_file(temporary, text);
  } catch (const Error&) {
    fs::remove(temporary, error);
    throw;
  }
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    throw Error(path + ": cannot write: " + error.message());
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
