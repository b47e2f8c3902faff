// The one place fluxopctl reads and writes local files: every file it reads
// (an input, a cache entry, an index it wrote, /proc) goes through a bounded
// reader here, and every file it writes through the exclusive writer here.
// tests/cli/local_files_test.sh fails the build when another read or write
// appears elsewhere in src/.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace fluxop {

// The most an input (a FluxInstance, a manifest, a distribution file) may
// hold: a larger one is refused once that much is read, never read whole.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// How long a pipe given as an input may give nothing (no byte, not its
// end) before it is refused: a FIFO whose writer never comes would
// otherwise be read as empty, or waited on forever.
inline constexpr std::chrono::milliseconds kPipeStall{30'000};

// An input file's bytes. It must be a regular file (symlinks followed), or
// a pipe when `pipes` (`<(...)`, a FIFO, /dev/stdin), read to its writer's
// end while it gives something at least every kPipeStall; a device, a
// socket or a directory is refused, as is more than `max_bytes`. Throws
// fluxop::Error naming the path.
std::string read_input_file(const std::string& path, bool pipes = false,
                            std::size_t max_bytes = kMaxInputBytes);

// The bytes of a stream (standard input), at most `max_bytes`; `name`
// names it in the error.
std::string read_input_stream(std::istream& in, const std::string& name,
                              std::size_t max_bytes = kMaxInputBytes);

// A file fluxopctl wrote and reads back (a cache entry, an index, a lock's
// holder, /proc), given in parts to `take`: true when it is a regular file
// (links followed) of at most `max_bytes`, read whole; false when it is
// missing or anything else (a FIFO, a device, a socket, a directory, a
// larger file), which the caller treats as absent. Never waits on what
// replaced the file.
bool read_kept_file(const std::string& path, std::uint64_t max_bytes,
                    const std::function<void(std::string_view)>& take);
// The same, whole.
std::optional<std::string> read_kept_file(const std::string& path, std::uint64_t max_bytes);

// A regular file of at most `max_bytes`, open to be read in parts (a blob
// read by offsets, an upload's body). Throws fluxop::Error naming the path
// when it is anything else.
class InputFile {
 public:
  // Without `follow_links`, a link at `path` is refused (an archive of a
  // tree whose file was swapped for a link after it was listed).
  InputFile(const std::string& path, std::uint64_t max_bytes, bool follow_links = true);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  std::uint64_t size() const { return size_; }
  mode_t mode() const { return mode_; }
  // `size` bytes at `offset`; throws naming the path when fewer are there.
  std::string read_at(std::uint64_t offset, std::uint64_t size) const;
  // The next bytes, at most `size` of them, into `buffer`: 0 at the end.
  std::size_t read(char* buffer, std::size_t size);
  // The file as a stdio stream (libcurl reads an upload through one); this
  // object no longer owns it.
  std::FILE* release();

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  mode_t mode_ = 0;
};

// Creates `dir` and its missing parents. Throws fluxop::Error naming the
// directory and the system's reason ("Read-only file system"), which the
// next step (a file in it) would hide behind "No such file or directory".
void create_directories(const std::string& dir);

// A new directory named `prefix` and a unique suffix, created exclusively,
// with the permissions the umask gives (mkdtemp's 0700 would hide a shared
// cache's entries from the users the umask lets in).
// `mode` 0700 for a private one (a scratch directory in /tmp).
std::string create_unique_directory(const std::string& prefix, mode_t mode = 0777);

// A new file written in parts (a download): created exclusively, never
// through a link or over a file already there, with the permissions the
// umask gives. Every failure throws fluxop::Error naming the path and the
// system's reason: "No space left on device" says what a bare "cannot
// write" does not.
class FileWriter {
 public:
  FileWriter() = default;
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // Creates `path` (relative to the directory `dir` when given: an
  // extraction that follows no link), which must not exist; closes the
  // file open before, if any.
  void open(const std::string& path, mode_t mode = 0666, int dir = -100 /* AT_FDCWD */);
  void write(std::string_view bytes);
  // Empties the file to write it again (a retried download).
  void restart();
  // Some file systems report a failed write only here.
  void close();
  // The errno of the last failure (EEXIST: the path was taken).
  int error() const { return error_; }

 private:
  [[noreturn]] void fail(int error);

  std::string path_;
  int fd_ = -1;
  int error_ = 0;
};

// Writes `text` to the new file `path` (see FileWriter).
void write_new_file(const std::string& path, std::string_view text);

// Writes `text` to a temporary file next to `path`, created exclusively
// (never a link or a file planted at its name), and renames it into place
// (creating parent directories), so readers see the old or the new content,
// never a part, and nothing is written through a link.
void write_file_atomically(const std::string& path, std::string_view text, mode_t mode = 0666);

// The same, unless `path` exists: false then, and the file there is kept
// (two processes creating a key: both read the one that won).
bool create_file_atomically(const std::string& path, std::string_view text, mode_t mode = 0666);

// A lock on a file (flock), released when destroyed. The file is created
// when missing, never through a link.
class FileLock {
 public:
  // Waits up to `timeout` for the lock (exclusive, or shared); `waiting` is
  // called once when it must wait, with the process holding it as its file
  // says ("pid N"; empty when unknown). Null when the lock was not had in
  // time, or at once when its holder is a stopped process (SIGSTOP, ^Z),
  // which may never let go: `stopped` says which. Throws fluxop::Error
  // naming the path when the file cannot be opened.
  static std::unique_ptr<FileLock> acquire(
      const std::string& path, bool exclusive, std::chrono::milliseconds timeout,
      const std::function<void(const std::string& holder)>& waiting = {}, bool* stopped = nullptr);
  explicit FileLock(int fd) : fd_(fd) {}
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace fluxop
