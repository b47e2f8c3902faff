// Inputs are bounded: regular files (pipes where asked for) of at most
// kMaxInputBytes, refused otherwise before they are read whole.
#include "core/file.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <sstream>

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
  // Nobody writes to it: refused, or read as empty, without waiting.
  CHECK(error_of([&] { read_input_file(fifo); }) == fifo + ": not a regular file");
  CHECK(read_input_file(fifo, /*pipes=*/true).empty());
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
            dir.str(), 0, "size=64k", [&] { write_file(layer, big); }, unavailable) ==
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

}  // namespace
}  // namespace fluxop
