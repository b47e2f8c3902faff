#include "core/file_system.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/file.h"

namespace fluxop {
namespace {

using Names = std::vector<std::string>;
using Kind = FileSystem::Kind;

TEST_CASE("file system in memory: directories are the parents of its files") {
  MemoryFileSystem files;
  files.add("/d/flux/v2.7.1/rbac.yaml", "rbac");
  files.add("d/flux/v2.7.1/../v2.6.0/./rbac.yaml", "old");
  files.add("/d/flux/README", "readme");
  CHECK(files.kind("/d/flux") == Kind::Directory);
  CHECK(files.kind("/d/flux/") == Kind::Directory);
  CHECK(files.kind("/d/flux/README") == Kind::File);
  CHECK(files.kind("/d/fl") == Kind::Missing);
  CHECK(files.kind("/") == Kind::Directory);
  CHECK(files.read("/d/flux/v2.6.0/rbac.yaml") == "old");
  CHECK(files.list("/d/flux", Kind::Directory) == Names{"v2.6.0", "v2.7.1"});
  CHECK(files.list("/d/flux", Kind::File) == Names{"README"});
  CHECK(files.list("/", Kind::Directory) == Names{"d"});
  CHECK_THROWS_WITH_AS(files.list("/d/flux/README", Kind::File), "/d/flux/README: not a directory",
                       Error);
  CHECK_THROWS_WITH_AS(files.list("/e", Kind::File), "/e: no such directory", Error);
  CHECK_THROWS_WITH_AS(files.read("/d/flux"), "/d/flux: is a directory", Error);
  CHECK_THROWS_WITH_AS(files.read("/d/missing"), "/d/missing: no such file", Error);
  CHECK(files.resolve("d/./flux/../flux/") == "/d/flux");
}

TEST_CASE("file system: a subtree reads below its root and names root/path in errors") {
  auto files = std::make_shared<MemoryFileSystem>();
  files->add("/d/flux/v2.7.1/rbac.yaml", "rbac");
  std::shared_ptr<const FileSystem> d = subtree(files, "/d");
  CHECK(d->kind("flux") == Kind::Directory);
  CHECK(d->list("flux", Kind::Directory) == Names{"v2.7.1"});
  CHECK(d->read("flux/v2.7.1/rbac.yaml") == "rbac");
  CHECK(d->resolve("flux/../flux") == "/d/flux");
  CHECK_THROWS_WITH_AS(d->read("flux/v2.7.1/x.yaml"), "/d/flux/v2.7.1/x.yaml: no such file", Error);
}

TEST_CASE("file system on disk: lists directories and regular files apart, sorted") {
  std::shared_ptr<const FileSystem> fake =
      subtree(shared_disk(), FLUXOPCTL_TEST_DATA "/distribution/fake");
  CHECK(fake->kind("flux") == Kind::Directory);
  CHECK(fake->kind("flux/none") == Kind::Missing);
  CHECK(fake->list("flux", Kind::Directory) ==
        Names{"latest", "v2.6.0", "v2.7.0", "v2.7.1", "v2.8.0-rc.1", "v2.9.4"});
  CHECK(fake->list("flux", Kind::File) == Names{"v9.9.9"});
  CHECK(fake->list("", Kind::File) == Names{"README.md"});
  CHECK(
      fake->read("flux/v2.7.1/source-controller.yaml") ==
      read_input_file(FLUXOPCTL_TEST_DATA "/distribution/fake/flux/v2.7.1/source-controller.yaml"));
  CHECK_THROWS_WITH_AS(fake->list("flux/none", Kind::File),
                       doctest::Contains("/distribution/fake/flux/none: No such file"), Error);
}

}  // namespace
}  // namespace fluxop
