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

}  // namespace
}  // namespace fluxop
