#include "core/oci/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../shared_distribution.h"
#include "../temp_dir.h"
#include "core/error.h"

namespace fluxop::oci {
namespace {

namespace fs = std::filesystem;

const char* const kBlob = "blob sha256:1234abcd";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Every path below root: "d" for a directory, else the file's mode ("x" when
// executable) and bytes.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    std::string name = fs::relative(entry.path(), root).string();
    if (entry.is_symlink()) {
      out[name] = "link";
    } else if (entry.is_directory()) {
      out[name] = "d";
    } else {
      bool exec = (entry.status().permissions() & fs::perms::owner_exec) != fs::perms::none;
      out[name] = (exec ? "x:" : "-:") + slurp(entry.path());
    }
  }
  return out;
}

// Writes an archive entry by entry: any name, any type, as an attacker would.
class TarBuilder {
 public:
  explicit TarBuilder(const fs::path& path, bool gzip = true) {
    REQUIRE(archive_write_set_format_pax_restricted(writer_) == ARCHIVE_OK);
    if (gzip) REQUIRE(archive_write_add_filter_gzip(writer_) == ARCHIVE_OK);
    REQUIRE(archive_write_open_filename(writer_, path.c_str()) == ARCHIVE_OK);
  }

  TarBuilder& file(const std::string& name, std::string_view data, mode_t perm = 0644) {
    return add(name, AE_IFREG, perm, data);
  }
  TarBuilder& directory(const std::string& name) { return add(name, AE_IFDIR, 0755); }
  TarBuilder& special(const std::string& name, mode_t type) { return add(name, type, 0644); }
  TarBuilder& symlink(const std::string& name, const std::string& target) {
    return add(name, AE_IFLNK, 0777, "", target.c_str());
  }
  TarBuilder& hardlink(const std::string& name, const std::string& target) {
    return add(name, AE_IFREG, 0644, "", nullptr, target.c_str());
  }

  void close() { REQUIRE(archive_write_close(writer_) == ARCHIVE_OK); }

 private:
  TarBuilder& add(const std::string& name, mode_t type, mode_t perm, std::string_view data = "",
                  const char* symlink = nullptr, const char* hardlink = nullptr) {
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(),
                                                                   archive_entry_free);
    archive_entry_set_pathname(entry.get(), name.c_str());
    archive_entry_set_filetype(entry.get(), type);
    archive_entry_set_perm(entry.get(), perm);
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(data.size()));
    if (symlink) archive_entry_set_symlink(entry.get(), symlink);
    if (hardlink) archive_entry_set_hardlink(entry.get(), hardlink);
    REQUIRE(archive_write_header(writer_, entry.get()) == ARCHIVE_OK);
    if (!data.empty()) {
      REQUIRE(archive_write_data(writer_, data.data(), data.size()) ==
              static_cast<la_ssize_t>(data.size()));
    }
    return *this;
  }

  std::unique_ptr<archive, int (*)(archive*)> owner_{archive_write_new(), archive_write_free};
  archive* writer_ = owner_.get();
};

struct TarEntry {
  std::string name;
  mode_t type;
  mode_t perm;
  la_int64_t uid, gid, mtime;
  std::string owner_names;  // uname and gname
  std::string data;
};

std::vector<TarEntry> read_entries(const fs::path& path) {
  std::unique_ptr<archive, int (*)(archive*)> owner(archive_read_new(), archive_read_free);
  archive* reader = owner.get();
  archive_read_support_filter_gzip(reader);
  archive_read_support_format_tar(reader);
  REQUIRE(archive_read_open_filename(reader, path.c_str(), 10240) == ARCHIVE_OK);
  std::vector<TarEntry> out;
  archive_entry* entry = nullptr;
  while (archive_read_next_header(reader, &entry) == ARCHIVE_OK) {
    std::string data(static_cast<std::size_t>(archive_entry_size(entry)), '\0');
    if (!data.empty()) archive_read_data(reader, data.data(), data.size());
    out.push_back({archive_entry_pathname(entry), archive_entry_filetype(entry),
                   archive_entry_perm(entry), archive_entry_uid(entry), archive_entry_gid(entry),
                   archive_entry_mtime(entry),
                   std::string(archive_entry_uname(entry) ? archive_entry_uname(entry) : "") +
                       (archive_entry_gname(entry) ? archive_entry_gname(entry) : ""),
                   data});
  }
  return out;
}

// The bytes of a gzip stream, decompressed.
std::string gunzip(const std::string& gzip) {
  std::unique_ptr<archive, int (*)(archive*)> owner(archive_read_new(), archive_read_free);
  archive* reader = owner.get();
  archive_read_support_filter_gzip(reader);
  archive_read_support_format_raw(reader);
  archive_entry* entry = nullptr;
  REQUIRE(archive_read_open_memory(reader, gzip.data(), gzip.size()) == ARCHIVE_OK);
  REQUIRE(archive_read_next_header(reader, &entry) == ARCHIVE_OK);
  std::string out;
  char buffer[1 << 16];
  for (la_ssize_t n; (n = archive_read_data(reader, buffer, sizeof buffer)) > 0;) {
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

// A workspace: dest is two levels down, so that "../x" and "a/../../x" both
// aim at outside/x, which must never appear.
struct Sandbox {
  testing::TempDir dir;
  fs::path layer = dir.path() / "layer.tgz";
  fs::path outside = dir.path() / "work";
  fs::path dest = outside / "dest";

  Sandbox() { fs::create_directories(dest); }

  // The layer create_archive makes of `root`'s entries.
  void pack(const std::string& root, const std::vector<std::string>& entries) const {
    spit(layer, create_archive(root, entries));
  }
  void extract(const ExtractLimits& limits = {}) const {
    extract_archive(layer.string(), dest.string(), kBlob, limits);
  }
  std::string refusal(std::string_view entry, std::string_view reason) const {
    return std::string(kBlob) + ": entry \"" + std::string(entry) +
           "\": refused: " + std::string(reason);
  }
};

// A small distribution-like tree: byte order puts "B.yaml" before "a.yaml"
// and "flux-images" after "flux".
void write_tree(const testing::TempDir& src) {
  src.write("flux/v2.9.4/a.yaml", "kind: A\n");
  src.write("flux/v2.9.4/B.yaml", "kind: B\n");
  src.write("flux/v2.9.4/run.sh", "#!/bin/sh\n");
  fs::permissions(src.path() / "flux/v2.9.4/run.sh", fs::perms::owner_exec, fs::perm_options::add);
  src.write("flux/v2.10.0/empty.yaml", "");
  fs::create_directories(src.path() / "flux/v2.10.0/empty-dir");
  src.write("flux-images/v2.9.4/upstream-alpine.yaml", "images: []\n");
  src.write("not-archived.txt", "left out\n");
}

TEST_CASE("archive: create then extract gives the tree back") {
  testing::TempDir src;
  write_tree(src);
  Sandbox box;
  box.pack(src.str(), {"flux", "flux-images"});
  box.extract();
  fs::remove(src.path() / "not-archived.txt");
  CHECK(tree(box.dest) == tree(src.path()));
  CHECK(tree(box.dest)["flux/v2.9.4/run.sh"] == "x:#!/bin/sh\n");
  CHECK(tree(box.dest)["flux/v2.9.4/a.yaml"] == "-:kind: A\n");
}

TEST_CASE("archive: create_archive is reproducible byte for byte") {
  testing::TempDir src;
  write_tree(src);
  std::string first_bytes = create_archive(src.str(), {"flux", "flux-images"});
  // Times and permissions beyond the x bit do not reach the archive.
  fs::last_write_time(src.path() / "flux/v2.9.4/a.yaml", fs::file_time_type::clock::now());
  fs::permissions(src.path() / "flux/v2.9.4/B.yaml", fs::perms::owner_read);
  CHECK(first_bytes == create_archive(src.str(), {"flux", "flux-images"}));
  // A gzip header with no flags (so no file name) and no timestamp.
  REQUIRE(first_bytes.size() > 10);
  CHECK(first_bytes.substr(0, 3) == "\x1f\x8b\x08");
  CHECK(first_bytes.substr(3, 5) == std::string(5, '\0'));
  // The stream ends with the gzip trailer's size of the tar (not with zeros
  // padding it to a block), as the layers of earlier pushes did.
  std::uint32_t tar_size = 0;
  for (int i = 1; i <= 4; ++i) {
    tar_size = (tar_size << 8) | static_cast<unsigned char>(first_bytes[first_bytes.size() - i]);
  }
  CHECK(tar_size == gunzip(first_bytes).size());
}

TEST_CASE("archive: the layout is flux's: a root entry, byte order, no owners or times") {
  testing::TempDir src;
  write_tree(src);
  Sandbox box;
  box.pack(src.str(), {"flux", "flux-images"});
  std::vector<TarEntry> entries = read_entries(box.layer);
  std::vector<std::string> names;
  for (const TarEntry& entry : entries) {
    CAPTURE(entry.name);
    names.push_back(entry.name);
    CHECK(entry.uid == 0);
    CHECK(entry.gid == 0);
    CHECK(entry.mtime == 0);
    CHECK(entry.owner_names.empty());
    CHECK(entry.perm == (entry.type == AE_IFDIR || entry.name.ends_with(".sh") ? 0755 : 0644));
  }
  CHECK(names ==
        std::vector<std::string>{"./", "flux/", "flux/v2.10.0/", "flux/v2.10.0/empty-dir/",
                                 "flux/v2.10.0/empty.yaml", "flux/v2.9.4/", "flux/v2.9.4/B.yaml",
                                 "flux/v2.9.4/a.yaml", "flux/v2.9.4/run.sh", "flux-images/",
                                 "flux-images/v2.9.4/", "flux-images/v2.9.4/upstream-alpine.yaml"});
  CHECK(entries[0].type == AE_IFDIR);
  CHECK(entries[6].data == "kind: B\n");
}

TEST_CASE("archive: extract accepts the root entry, ./ prefixes and a plain tar") {
  Sandbox box;
  {
    TarBuilder tar(box.layer, /*gzip=*/false);
    tar.directory(".").file("./flux/v1/a.yaml", "a").file("flux//v1/./b.yaml", "b");
    tar.file("./run", "x", 0700).directory("flux/v1/").close();
  }
  box.extract();
  CHECK(tree(box.dest) == std::map<std::string, std::string>{{"flux", "d"},
                                                             {"flux/v1", "d"},
                                                             {"flux/v1/a.yaml", "-:a"},
                                                             {"flux/v1/b.yaml", "-:b"},
                                                             {"run", "x:x"}});
  fs::perms run = fs::status(box.dest / "run").permissions();
  CHECK((run & fs::perms::others_write) == fs::perms::none);
}

TEST_CASE("archive: extract refuses names leaving the root") {
  Sandbox box;
  std::string absolute = (box.outside / "x").string();
  SUBCASE("../x") {
    TarBuilder(box.layer).file("../x", "evil").close();
    CHECK_THROWS_WITH_AS(box.extract(), box.refusal("../x", "path leaves the archive root").c_str(),
                         Error);
  }
  SUBCASE("a/../../x") {
    TarBuilder(box.layer).file("a/../../x", "evil").close();
    CHECK_THROWS_WITH_AS(box.extract(),
                         box.refusal("a/../../x", "path leaves the archive root").c_str(), Error);
  }
  SUBCASE("an absolute path") {
    TarBuilder(box.layer).file(absolute, "evil").close();
    CHECK_THROWS_WITH_AS(box.extract(), box.refusal(absolute, "absolute path").c_str(), Error);
  }
  CHECK_FALSE(fs::exists(box.outside / "x"));
  CHECK(fs::is_empty(box.dest));
}

TEST_CASE("archive: extract refuses links, devices and FIFOs") {
  Sandbox box;
  box.dir.write("secret", "secret");
  SUBCASE("a symlink, and a file written through it") {
    TarBuilder(box.layer).symlink("link", box.outside.string()).file("link/x", "evil").close();
    CHECK_THROWS_WITH_AS(
        box.extract(),
        box.refusal("link", "symbolic link to \"" + box.outside.string() + "\"").c_str(), Error);
    CHECK_FALSE(fs::exists(fs::symlink_status(box.dest / "link")));
  }
  SUBCASE("a hard link") {
    std::string target = (box.dir.path() / "secret").string();
    TarBuilder(box.layer).hardlink("hard", target).close();
    CHECK_THROWS_WITH_AS(box.extract(),
                         box.refusal("hard", "hard link to \"" + target + "\"").c_str(), Error);
    CHECK(fs::hard_link_count(target) == 1);
  }
  SUBCASE("a FIFO") {
    TarBuilder(box.layer).special("fifo", AE_IFIFO).close();
    CHECK_THROWS_WITH_AS(box.extract(), box.refusal("fifo", "FIFO").c_str(), Error);
  }
  SUBCASE("a character device") {
    TarBuilder(box.layer).special("null", AE_IFCHR).close();
    CHECK_THROWS_WITH_AS(box.extract(), box.refusal("null", "character device").c_str(), Error);
  }
  SUBCASE("a block device") {
    TarBuilder(box.layer).special("disk", AE_IFBLK).close();
    CHECK_THROWS_WITH_AS(box.extract(), box.refusal("disk", "block device").c_str(), Error);
  }
  CHECK_FALSE(fs::exists(box.outside / "x"));
  CHECK(fs::is_empty(box.dest));
}

// The whole archive is read before anything is written: a refused archive
// leaves dest_dir empty.
TEST_CASE("archive: extract refuses duplicate entries, writing nothing") {
  Sandbox box;
  SUBCASE("a file") {
    TarBuilder(box.layer).file("a.yaml", "first").file("./a.yaml", "second").close();
    CHECK_THROWS_WITH_AS(box.extract(), box.refusal("./a.yaml", "duplicate entry").c_str(), Error);
    CHECK(fs::is_empty(box.dest));
  }
  SUBCASE("a directory") {
    TarBuilder(box.layer).directory("flux").directory("flux/").close();
    CHECK_THROWS_WITH_AS(box.extract(), box.refusal("flux/", "duplicate entry").c_str(), Error);
  }
}

// A layer the index takes is one pull can extract: build (which reads the
// index) and pull (which extracts) take the same layers.
TEST_CASE("archive: a file and a directory at one path are refused before anything is written") {
  Sandbox box;
  SUBCASE("a file where a directory is") {
    TarBuilder(box.layer).file("flux/a", "a").file("flux", "b").close();
    CHECK_THROWS_WITH_AS(box.extract(),
                         box.refusal("flux", "a file and a directory at one path").c_str(), Error);
  }
  SUBCASE("a directory where a file is") {
    TarBuilder(box.layer).file("flux", "b").file("flux/v2.9.4/a", "a").close();
    CHECK_THROWS_WITH_AS(box.extract(),
                         box.refusal("flux", "a file and a directory at one path").c_str(), Error);
  }
  CHECK(fs::is_empty(box.dest));
}

TEST_CASE("archive: a name component over 255 bytes is refused, as a file system would") {
  Sandbox box;
  const std::string longest(255, 'n');
  TarBuilder(box.layer).file("flux/" + longest, "a").directory("d/" + longest).close();
  box.extract();
  CHECK(slurp(box.dest / "flux" / longest) == "a");
  fs::remove_all(box.dest);
  fs::create_directories(box.dest);
  const std::string too_long = "flux/" + longest + "n";
  for (const std::string& name : {too_long, too_long + "/a"}) {  // a file, a directory
    CAPTURE(name);
    TarBuilder(box.layer).file(name, "a").close();
    CHECK_THROWS_WITH_AS(box.extract(),
                         box.refusal(too_long, "a name component longer than 255 bytes").c_str(),
                         Error);
    CHECK(fs::is_empty(box.dest));
  }
}

TEST_CASE("archive: extract stops at the limits while reading") {
  Sandbox box;
  ExtractLimits limits;
  SUBCASE("one file beyond max_total_bytes") {
    limits.max_total_bytes = 10;
    TarBuilder(box.layer).file("big", std::string(11, 'x')).close();
    CHECK_THROWS_WITH_AS(box.extract(limits),
                         box.refusal("big", "the archive's files exceed 10 bytes").c_str(), Error);
    CHECK_FALSE(fs::exists(box.dest / "big"));
  }
  SUBCASE("files summing beyond max_total_bytes") {
    limits.max_total_bytes = 10;
    TarBuilder(box.layer).file("a", "123456").file("b", "123456").close();
    CHECK_THROWS_WITH_AS(box.extract(limits),
                         box.refusal("b", "the archive's files exceed 10 bytes").c_str(), Error);
    CHECK(fs::is_empty(box.dest));
  }
  SUBCASE("exactly at the limits") {
    limits.max_total_bytes = 12;
    limits.max_files = 3;
    TarBuilder(box.layer).directory(".").file("a", "123456").file("b", "123456").close();
    box.extract(limits);
    CHECK(slurp(box.dest / "b") == "123456");
  }
  SUBCASE("more entries than max_files") {
    limits.max_files = 3;
    TarBuilder(box.layer).directory(".").directory("d").file("d/a", "").file("d/b", "").close();
    CHECK_THROWS_WITH_AS(box.extract(limits),
                         box.refusal("d/b", "the archive has more than 3 entries").c_str(), Error);
    CHECK(fs::is_empty(box.dest));
  }
}

TEST_CASE("archive: extract refuses truncated, corrupt and non-archive files") {
  Sandbox box;
  // Text deflate cannot store verbatim: a broken stream fails to inflate.
  std::string big;
  for (int i = 0; big.size() < 300000; ++i) big += "line " + std::to_string(i * 7919) + "\n";
  TarBuilder(box.layer).file("first.yaml", "ok").file("big.yaml", big).close();
  std::string bytes = slurp(box.layer);
  auto fails_with = [&](const std::string& message) {
    CHECK_THROWS_WITH_AS(box.extract(), (std::string(kBlob) + ": " + message).c_str(), Error);
  };
  SUBCASE("truncated in a file's data") {
    spit(box.layer, bytes.substr(0, bytes.size() / 2));
    fails_with("truncated gzip stream");
    CHECK(fs::is_empty(box.dest));
  }
  SUBCASE("truncated in the gzip header") {
    spit(box.layer, bytes.substr(0, 5));
    fails_with("truncated gzip stream");
  }
  SUBCASE("an invalid deflate block") {
    bytes[10] = static_cast<char>(bytes[10] | 0x06);  // block type 3 does not exist
    spit(box.layer, bytes);
    fails_with("gzip: invalid deflate block");
  }
  SUBCASE("not an archive") {
    spit(box.layer, "{\"schemaVersion\": 2}\n");
    fails_with("not a tar archive");
  }
  SUBCASE("an empty file") {
    spit(box.layer, "");
    fails_with("not a tar archive");
  }
  SUBCASE("no file") {
    fs::remove(box.layer);
    CHECK_THROWS_WITH_AS(box.extract(), doctest::Contains(kBlob), Error);
  }
  CHECK_FALSE(fs::exists(box.outside / "x"));
}

TEST_CASE("archive: extract needs an existing empty directory") {
  Sandbox box;
  TarBuilder(box.layer).file("a", "a").close();
  std::string missing = (box.outside / "missing").string();
  CHECK_THROWS_WITH_AS(extract_archive(box.layer.string(), missing, kBlob),
                       (missing + ": not a directory").c_str(), Error);
  box.dir.write("work/dest/old", "");
  CHECK_THROWS_WITH_AS(box.extract(), (box.dest.string() + ": not an empty directory").c_str(),
                       Error);
}

TEST_CASE("archive: create_archive refuses links, special files and odd entries") {
  testing::TempDir src;
  write_tree(src);
  std::string flux = (src.path() / "flux").string();
  SUBCASE("a missing entry") {
    CHECK_THROWS_WITH_AS(create_archive(src.str(), {"flux", "nope"}),
                         (src.str() + "/nope: No such file or directory").c_str(), Error);
  }
  SUBCASE("a symlink") {
    fs::create_symlink("/etc", src.path() / "flux/v2.9.4/etc");
    CHECK_THROWS_WITH_AS(create_archive(src.str(), {"flux"}),
                         (flux + "/v2.9.4/etc: refused: symbolic link").c_str(), Error);
  }
  SUBCASE("a FIFO") {
    REQUIRE(mkfifo((src.path() / "flux/fifo").c_str(), 0644) == 0);
    CHECK_THROWS_WITH_AS(create_archive(src.str(), {"flux"}),
                         (flux + "/fifo: refused: FIFO").c_str(), Error);
  }
  SUBCASE("entries that are not plain relative names, or repeat") {
    for (std::string entry : {"../flux", "/flux", "./flux", "flux/", ""}) {
      CAPTURE(entry);
      CHECK_THROWS_AS(create_archive(src.str(), {entry}), Error);
    }
    CHECK_THROWS_WITH_AS(create_archive(src.str(), {"flux", "flux/v2.9.4"}),
                         (flux + "/v2.9.4: refused: already archived as part of flux").c_str(),
                         Error);
  }
}

TEST_CASE("archive: create_archive refuses what extraction would, naming the file") {
  testing::TempDir root;
  // A name ustar cannot hold: a pax header, which extraction counts too.
  const std::string long_name = "flux/" + std::string(120, 'n');
  root.write("flux/a", "123456");
  root.write(long_name, "123456");
  // "./", "flux/", "flux/a", the pax header, the long name.
  const ExtractLimits exact{.max_total_bytes = 12, .max_files = 5};
  std::string blob = create_archive(root.str(), {"flux"}, nullptr, exact);
  CHECK(index_layer(blob, kBlob, exact).files.size() == 2);

  const std::string refused = root.str() + "/" + long_name + ": refused: the artifact";
  CHECK_THROWS_WITH_AS(create_archive(root.str(), {"flux"}, nullptr, {.max_total_bytes = 11}),
                       (refused + "'s files would exceed 11 bytes, more than pull accepts").c_str(),
                       Error);
  CHECK_THROWS_WITH_AS(
      create_archive(root.str(), {"flux"}, nullptr, {.max_files = 4}),
      (refused + " would have more than 4 entries, more than pull accepts").c_str(), Error);
}

TEST_CASE("archive: create_archive refuses a layer larger than pull accepts, as it grows") {
  testing::TempDir root;
  // Bytes deflate cannot shrink, so that the layer grows with the file.
  std::mt19937 random(28);
  std::string noise(1 << 20, '\0');
  for (char& byte : noise) byte = static_cast<char>(random());
  root.write("flux/noise", noise);
  std::string blob = create_archive(root.str(), {"flux"});
  CHECK(index_layer(blob, kBlob, {.max_layer_bytes = blob.size()}).files.size() == 1);
  CHECK_THROWS_WITH_AS(
      index_layer(blob, kBlob, {.max_layer_bytes = blob.size() - 1}),
      (std::string(kBlob) + ": refused: larger than " + std::to_string(blob.size() - 1) + " bytes")
          .c_str(),
      Error);
  // Refused while the file is read, long before the whole layer is made.
  CHECK_THROWS_WITH_AS(create_archive(root.str(), {"flux"}, nullptr, {.max_layer_bytes = 65536}),
                       (root.str() + "/flux/noise: refused: the artifact's layer would exceed " +
                        "65536 bytes, more than pull accepts")
                           .c_str(),
                       Error);
  // At the end, when only the closing blocks take it past the bound.
  CHECK_THROWS_WITH_AS(
      create_archive(root.str(), {"flux"}, nullptr, {.max_layer_bytes = blob.size() - 1}),
      (root.str() + ": refused: the artifact's layer would exceed " +
       std::to_string(blob.size() - 1) + " bytes, more than pull accepts")
          .c_str(),
      Error);
}

// The real Flux distribution beside the repository (shared_distribution.h).
TEST_CASE("archive: the real distribution survives a round trip byte for byte") {
  if (!testing::have_shared_distribution()) return;
  const std::string& real = testing::kSharedDistribution;
  Sandbox box;
  box.pack(real, {"flux", "flux-images"});
  box.extract();
  std::map<std::string, std::string> extracted = tree(box.dest);
  std::size_t files = 0;
  for (const std::string entry : {"flux", "flux-images"}) {
    CHECK(extracted[entry] == "d");
    extracted.erase(entry);
    for (const fs::directory_entry& item : fs::recursive_directory_iterator(real + "/" + entry)) {
      std::string name = fs::relative(item.path(), real).string();
      CAPTURE(name);
      REQUIRE(extracted.count(name) == 1);
      if (item.is_directory()) {
        CHECK(extracted[name] == "d");
      } else {
        CHECK(extracted[name] == "-:" + slurp(item.path()));
        ++files;
      }
      extracted.erase(name);
    }
  }
  CHECK(extracted.empty());
  CHECK(files > 100);
}

}  // namespace
}  // namespace fluxop::oci
