// Whole-file reads and writes for caches and scratch files.
#pragma once

#include <cstddef>
#include <ctime>
#include <istream>
#include <optional>
#include <string>
#include <string_view>

namespace fluxop {

// The most an input (a FluxInstance, a manifest, a distribution file) may
// hold: a larger one is refused once that much is read, never read whole.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// An input file's bytes. It must be a regular file (symlinks followed), or
// a pipe when `pipes` (`<(...)`, /dev/stdin); a device, a socket or a
// directory is refused, as is more than `max_bytes`. Throws fluxop::Error
// naming the path.
std::string read_input_file(const std::string& path, bool pipes = false,
                            std::size_t max_bytes = kMaxInputBytes);

// The bytes of a stream (standard input), at most `max_bytes`; `name`
// names it in the error.
std::string read_input_stream(std::istream& in, const std::string& name,
                              std::size_t max_bytes = kMaxInputBytes);

// The file's bytes; nullopt when it cannot be opened.
std::optional<std::string> read_file_if_exists(const std::string& path);

// Creates `dir` and its missing parents. Throws fluxop::Error naming the
// directory and the system's reason ("Read-only file system"), which the
// next step (a file in it) would hide behind "No such file or directory".
void create_directories(const std::string& dir);

// A file written in parts (a download). Every failure throws fluxop::Error
// naming the path and the system's reason: "No space left on device" says
// what a bare "cannot write" does not.
class FileWriter {
 public:
  FileWriter() = default;
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // Creates or truncates `path` (closing the file open before, if any).
  void open(const std::string& path);
  void write(std::string_view bytes);
  // Some file systems report a failed write only here.
  void close();

 private:
  [[noreturn]] void fail(int error);

  std::string path_;
  int fd_ = -1;
};

// Writes (truncating) `text`; throws fluxop::Error naming the path and the
// system's reason on failure.
void write_file(const std::string& path, const std::string& text);

// Writes `text` next to `path` and renames it into place (creating parent
// directories), so readers see the old or the new content, never a part.
void write_file_atomically(const std::string& path, const std::string& text);

// "2026-11-22T07:37:16Z".
std::string utc_rfc3339(std::time_t seconds);

}  // namespace fluxop
