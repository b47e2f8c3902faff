// Inputs are bounded: regular files (pipes where asked for) of at most
// kMaxInputBytes, refused otherwise before they are read whole.
#include "core/file.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "private_mount.h"
#include "temp_dir.h"

namespace fluxop {
namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("input files: regular files are read, through symlinks too") {
  testing::TempDir dir;
  dir.write("a.yaml", "kind: A\n");
  std::filesystem::create_symlink(dir.path() / "a.yaml", dir.path() / "link.yaml");
  CHECK(read_input_file(dir.str() + "/a.yaml") == "kind: A\n");
  CHECK(read_input_file(dir.str() + "/link.yaml") == "kind: A\n");
  CHECK(error_of([&] { read_input_file(dir.str() + "/none.yaml"); }) ==
        dir.str() + "/none.yaml: No such file or directory");
  CHECK(error_of([&] { read_input_file(dir.str()); }) == dir.str() + ": is a directory");
}

TEST_CASE("input files: devices, and FIFOs unless pipes are accepted, are refused unread") {
  testing::TempDir dir;
  std::filesystem::create_symlink("/dev/zero", dir.path() / "zero.yaml");
  CHECK(error_of([&] { read_input_file(dir.str() + "/zero.yaml"); }) ==
        dir.str() + "/zero.yaml: not a regular file");
  CHECK(error_of([&] { read_input_file("/dev/zero", /*pipes=*/true); }) ==
        "/dev/zero: not a regular file");
  std::string fifo = dir.str() + "/fifo.yaml";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of([&] { read_input_file(fifo); }) == fifo + ": not a regular file");
}

TEST_CASE("input files: a FIFO is read to its writer's end, the writer coming once it is open") {
  testing::TempDir dir;
  std::string fifo = dir.str() + "/fifo.yaml";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // The writer opens only once the reader holds the FIFO (before that a
  // non-blocking open for writing fails with ENXIO), and writes in two parts.
  std::thread writer([&] {
    int fd = -1;
    while ((fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 && errno == ENXIO)
      std::this_thread::yield();
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(::write(fd, "kind: ", 6) == 6);
    std::this_thread::yield();
    CHECK(::write(fd, "A\n", 2) == 2);
    ::close(fd);
  });
  CHECK(read_input_file(fifo, /*pipes=*/true) == "kind: A\n");
  writer.join();
}

TEST_CASE("input files: more than the limit is refused, a file by its size") {
  testing::TempDir dir;
  std::string big = dir.str() + "/big.yaml";
  dir.write("big.yaml", "");
  REQUIRE(truncate(big.c_str(), static_cast<off_t>(kMaxInputBytes + 1)) == 0);
  CHECK(error_of([&] { read_input_file(big); }) ==
        big + ": larger than 64 MiB, the most an input may be");
  std::istringstream endless(std::string(kMaxInputBytes + 1, 'x'));
  CHECK(error_of([&] { read_input_stream(endless, "-"); }) ==
        "-: larger than 64 MiB, the most an input may be");
  std::istringstream small("kind: A\n");
  CHECK(read_input_stream(small, "-") == "kind: A\n");
}

// A write error says the system's reason and the path: a read-only cache is
// not "No such file or directory", a full one not a bare "cannot write".
TEST_CASE("writes: a read-only or full file system is named as such, with the path") {
  testing::TempDir dir;
  std::string unavailable;
  std::string record = dir.str() + "/fluxopctl/oci/refs/r.json";
  std::optional<std::string> read_only = testing::error_on_private_mount(
      dir.str(), MS_RDONLY, nullptr, [&] { write_file_atomically(record, "{}"); }, unavailable);
  if (!read_only) {
    MESSAGE("skipped: no private mount here: " << unavailable);
    return;
  }
  CHECK(*read_only ==
        dir.str() + "/fluxopctl/oci/refs: cannot create the directory: Read-only file system");

  std::string big(1 << 20, 'x');
  std::string layer = dir.str() + "/layer";
  CHECK(testing::error_on_private_mount(
            dir.str(), 0, "size=64k", [&] { write_new_file(layer, big); }, unavailable) ==
        layer + ": cannot write: No space left on device");
  CHECK(testing::error_on_private_mount(
            dir.str(), 0, "size=64k",
            [&] {
              FileWriter writer;
              writer.open(layer);
              for (int part = 0; part < 16; ++part) writer.write(big.substr(0, 64 * 1024));
              writer.close();
            },
            unavailable) == layer + ": cannot write: No space left on device");
  std::optional<std::string> full_rename = testing::error_on_private_mount(
      dir.str(), 0, "size=64k", [&] { write_file_atomically(layer, big); }, unavailable);
  REQUIRE(full_rename);
  CHECK(full_rename->starts_with(layer + ".tmp"));
  CHECK(full_rename->ends_with(": cannot write: No space left on device"));
}

// The one reader, whatever stands at a path: every kind of file is read
// when it is a regular file within its bound (links followed) and refused
// otherwise, at once, by each form of the reader. Nothing blocks (a FIFO
// nobody writes to) or reads without end (a link to /dev/zero).
TEST_CASE("the bounded reader: every file type, every form of the reader") {
  testing::TempDir dir;
  const std::string d = dir.str();
  dir.write("regular", "kind: A\n");
  std::filesystem::create_symlink(d + "/regular", d + "/link");
  std::filesystem::create_symlink("/dev/zero", d + "/zero");
  std::filesystem::create_symlink("/dev/null", d + "/null");
  std::filesystem::create_symlink(d + "/nothing", d + "/dangling");
  std::filesystem::create_symlink(d + "/loop", d + "/loop");
  std::filesystem::create_directory(d + "/directory");
  REQUIRE(mkfifo((d + "/fifo").c_str(), 0600) == 0);
  int server = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::string socket_path = d + "/socket";
  REQUIRE(socket_path.size() < sizeof address.sun_path);
  std::copy(socket_path.begin(), socket_path.end(), address.sun_path);
  REQUIRE(bind(server, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(listen(server, 1) == 0);
  dir.write("big", "");
  REQUIRE(truncate((d + "/big").c_str(), 4096) == 0);

  struct Case {
    std::string name;
    bool read;  // its bytes are read, "kind: A\n"
  };
  for (const Case& file :
       {Case{"regular", true}, Case{"link", true}, Case{"zero", false}, Case{"null", false},
        Case{"dangling", false}, Case{"loop", false}, Case{"directory", false}, Case{"fifo", false},
        Case{"socket", false}, Case{"big", false}, Case{"absent", false}}) {
    CAPTURE(file.name);
    std::string path = d + "/" + file.name;
    std::optional<std::string> kept = read_kept_file(path, 1024);
    CHECK(kept.has_value() == file.read);
    if (kept) CHECK(*kept == "kind: A\n");
    std::string bytes;
    std::string error = error_of([&] { bytes = read_input_file(path, false, 1024); });
    CHECK(error.empty() == file.read);
    if (file.read) CHECK(bytes == "kind: A\n");
    if (!file.read) CHECK(error.starts_with(path + ": "));
    error = error_of([&] { bytes = InputFile(path, 1024).read_at(0, 8); });
    CHECK(error.empty() == file.read);
    if (file.read) CHECK(bytes == "kind: A\n");
    if (!file.read) CHECK(error.starts_with(path + ": "));
  }
  // A link is refused where links are not followed.
  CHECK(error_of([&] { InputFile(d + "/link", 1024, /*follow_links=*/false); }) ==
        d + "/link: Too many levels of symbolic links");
  close(server);
}

// The one writer: every file is created anew, never through a link or over
// a file someone planted, and replaces its target by a rename.
TEST_CASE("the exclusive writer: no link followed, no planted file reused, the umask honoured") {
  testing::TempDir dir;
  const std::string d = dir.str();
  dir.write("victim", "precious\n");
  // A link planted where a new file goes: refused, the victim untouched.
  std::filesystem::create_symlink(d + "/victim", d + "/new");
  CHECK(error_of([&] { write_new_file(d + "/new", "x"); }) ==
        d + "/new: cannot write: File exists");
  CHECK(read_input_file(d + "/victim") == "precious\n");
  // A link in place of the target itself: replaced by the file, not followed.
  std::filesystem::create_symlink(d + "/victim", d + "/target");
  write_file_atomically(d + "/target", "new\n");
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(d + "/target")) == false);
  CHECK(read_input_file(d + "/target") == "new\n");
  CHECK(read_input_file(d + "/victim") == "precious\n");
  // Created once: the second finds the first's file and keeps it.
  CHECK(create_file_atomically(d + "/key", "first", 0600));
  CHECK_FALSE(create_file_atomically(d + "/key", "second", 0600));
  CHECK(read_input_file(d + "/key") == "first");
  CHECK((std::filesystem::status(d + "/key").permissions() & std::filesystem::perms::all) ==
        static_cast<std::filesystem::perms>(0600));
  // Nothing left behind next to the targets.
  for (const auto& entry : std::filesystem::directory_iterator(d))
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);

  // The umask decides the permissions, for files and directories alike.
  mode_t previous = umask(027);
  write_file_atomically(d + "/shared", "x");
  std::string made = create_unique_directory(d + "/entry-");
  umask(previous);
  CHECK((std::filesystem::status(d + "/shared").permissions() & std::filesystem::perms::all) ==
        static_cast<std::filesystem::perms>(0640));
  CHECK((std::filesystem::status(made).permissions() & std::filesystem::perms::all) ==
        static_cast<std::filesystem::perms>(0750));
}

TEST_CASE("file locks: exclusive, named holder, bounded wait") {
  testing::TempDir dir;
  std::string path = dir.str() + "/lock";
  auto held = FileLock::acquire(path, true, std::chrono::milliseconds(0));
  REQUIRE(held);
  std::string heard;
  CHECK(FileLock::acquire(path, true, std::chrono::milliseconds(100),
                          [&](const std::string& holder) { heard = holder; }) == nullptr);
  CHECK(heard == "pid " + std::to_string(getpid()));
  CHECK(FileLock::acquire(path, false, std::chrono::milliseconds(0)) == nullptr);
  held.reset();
  CHECK(FileLock::acquire(path, false, std::chrono::milliseconds(0)) != nullptr);
  // A link planted at a lock's name is not followed.
  std::filesystem::create_symlink(dir.str() + "/elsewhere", dir.str() + "/planted");
  CHECK(error_of([&] {
          FileLock::acquire(dir.str() + "/planted", true, {});
        }).ends_with(": Too many levels of symbolic links"));
  CHECK_FALSE(std::filesystem::exists(dir.str() + "/elsewhere"));
}

}  // namespace
}  // namespace fluxop
