#include "core/oci/layer.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "../shared_distribution.h"
#include "../temp_dir.h"
#include "core/digest.h"
#include "core/distribution/distribution.h"
#include "core/error.h"
#include "core/oci/archive.h"
#include "core/oci/layer_files.h"

namespace fluxop::oci {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `data` as one gzip member.
std::string gzip(std::string_view data) {
  z_stream stream{};
  REQUIRE(deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// The uncompressed tar of a tar+gzip blob.
std::string gunzip(std::string_view blob) {
  z_stream stream{};
  REQUIRE(inflateInit2(&stream, 15 + 16) == Z_OK);
  std::string out;
  char buffer[65536];
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(blob.data()));
  stream.avail_in = static_cast<uInt>(blob.size());
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  REQUIRE(status == Z_STREAM_END);
  inflateEnd(&stream);
  return out;
}

// `index` as fluxopctl wrote it before version 3 (unsealed): each point with
// zlib's bits and window, and one more point within the member.
std::string encode_version2(const LayerIndex& index) {
  std::string out = "fluxopctl layer index 2\n";
  auto number = [&out](std::uint64_t value) {
    for (; value >= 0x80; value >>= 7) out += static_cast<char>((value & 0x7f) | 0x80);
    out += static_cast<char>(value);
  };
  auto bytes = [&](std::string_view data) {
    number(data.size());
    out += data;
  };
  bytes(index.blob_digest);
  number(index.blob_size);
  number(index.gzip ? 1 : 0);
  number(index.dirs.size());
  for (const std::string& dir : index.dirs) bytes(dir);
  number(index.files.size());
  for (const LayerFile& file : index.files) {
    bytes(file.path);
    number(file.offset);
    number(file.size);
    number(file.executable ? 1 : 0);
  }
  number(index.points.size() + 1);
  for (const ResumePoint& point : index.points) {
    number(point.in);
    number(point.out);
    number(0);
    number(point.member_start ? 1 : 0);
    bytes("");
  }
  number(100);  // within the member: in, out, bits, not a member's start, window
  number(2048);
  number(3);
  number(0);
  bytes(std::string(1000, 'w'));
  return out + "hmac-sha256:" + std::string(64, '0');
}

// Every file below `root`'s `dir`, by its path relative to `root`.
std::map<std::string, std::string> files_on_disk(const std::string& root, const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const fs::directory_entry& item : fs::recursive_directory_iterator(root + "/" + dir)) {
    if (item.is_regular_file()) out[fs::relative(item.path(), root).string()] = slurp(item.path());
  }
  return out;
}

TEST_CASE("layer: the real distribution is read back by directory") {
  if (!testing::have_shared_distribution()) return;
  const std::string& real = testing::kSharedDistribution;
  const std::string blob = create_archive(real, {"flux", "flux-images"});
  LayerIndex index = index_layer(blob, "blob");
  CHECK(index.gzip);
  CHECK(index.files.size() > 100);
  // One gzip member: one point, at its start.
  REQUIRE(index.points.size() == 1);
  CHECK(index.points[0].member_start);

  const CacheSeal seal(std::string(32, 'k'));
  std::optional<LayerIndex> decoded = LayerIndex::decode(index.encode(seal), &seal);
  REQUIRE(decoded);
  CHECK(decoded->files.size() == index.files.size());
  CHECK(decoded->points.size() == index.points.size());
  CHECK(decoded->dirs == index.dirs);

  distribution::Distribution on_disk(real);
  const distribution::Version& newest = on_disk.versions().back();
  // Every version's directory, each from its own slice of the blob (the
  // file's, as the cache keeps it): wherever a directory ends, its slice
  // must hold it whole.
  testing::TempDir cache;
  cache.write("layer", blob);
  BlobReader from_file = blob_file_reader(cache.str() + "/layer", "blob");
  std::size_t dirs = 0;
  for (const std::string& dir : decoded->dirs) {
    if (std::count(dir.begin(), dir.end(), '/') != 1) continue;
    CAPTURE(dir);
    CHECK(read_layer_dir(from_file, *decoded, dir, "blob") == files_on_disk(real, dir));
    ++dirs;
  }
  CHECK(dirs >= 2 * on_disk.versions().size());

  // The file is read once for a directory.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reads;
  auto counted = [&](std::uint64_t offset, std::uint64_t size) {
    reads.emplace_back(offset, size);
    return from_file(offset, size);
  };
  const std::string newest_dir = on_disk.manifests_dir(newest);
  CHECK(read_layer_dir(counted, *decoded, newest_dir, "blob") == files_on_disk(real, newest_dir));
  CHECK(reads.size() == 1);
  auto layer = std::make_shared<Layer>(Layer{.path = cache.str() + "/layer", .index = *decoded});
  distribution::Distribution in_layer = layer_distribution(layer, "oci://r/x@sha256:0");
  REQUIRE(in_layer.versions().size() == on_disk.versions().size());
  CHECK(in_layer.versions().back().original == newest.original);
  CHECK(in_layer.files(on_disk.manifests_dir(newest)) ==
        on_disk.files(on_disk.manifests_dir(newest)));
  std::string rbac = on_disk.manifests_dir(newest) + "/rbac.yaml";
  CHECK(in_layer.read(rbac) == on_disk.read(rbac));
  CHECK(in_layer.label(rbac) == "oci://r/x@sha256:0/" + rbac);
  CHECK_THROWS_WITH_AS(in_layer.read("flux/none.yaml"),
                       "oci://r/x@sha256:0/flux/none.yaml: not in the artifact", Error);
  // What kustomize asks of a file system, as the index answers it.
  LayerFiles files(layer, "oci://r/x@sha256:0");
  CHECK(files.kind("") == FileSystem::Kind::Directory);
  CHECK(files.kind("flux/") == FileSystem::Kind::Directory);
  CHECK(files.kind("./flux/x/../" + newest.original + "/rbac.yaml") == FileSystem::Kind::File);
  CHECK(files.kind("flux/none.yaml") == FileSystem::Kind::Missing);
  CHECK(files.list("", FileSystem::Kind::Directory) ==
        std::vector<std::string>{"flux", "flux-images"});
  CHECK(files.resolve("flux/./x/..") == "flux");
}

TEST_CASE("layer: gzip members, plain tars and long names") {
  testing::TempDir tree;
  const std::string long_name = "flux/v2.9.4/" + std::string(150, 'n') + ".yaml";
  tree.write("flux/v2.9.4/rbac.yaml", "kind: ClusterRole\n");
  tree.write(long_name, "kind: Deployment\n");
  tree.write("flux-images/v2.9.4/upstream-alpine.yaml", "images: []\n");
  const std::string tar = gunzip(create_archive(tree.str(), {"flux", "flux-images"}));
  const std::map<std::string, std::string> want = files_on_disk(tree.str(), "flux");

  SUBCASE("a plain tar") {
    LayerIndex index = index_layer(tar, "blob");
    CHECK_FALSE(index.gzip);
    CHECK(read_layer_dir(tar, index, "flux", "blob") == want);
    // Cut within a file's data.
    const LayerFile& file = index.files.front();
    CHECK_THROWS_WITH_AS(index_layer(tar.substr(0, file.offset + 1), "blob"),
                         ("blob: entry \"" + file.path + "\": the archive ends within it").c_str(),
                         Error);
  }
  SUBCASE("the tar split across gzip members, each a resume point") {
    const std::string blob =
        gzip(tar.substr(0, 1000)) + gzip(tar.substr(1000, 1500)) + gzip(tar.substr(2500));
    LayerIndex index = index_layer(blob, "blob");
    CHECK(std::count_if(index.points.begin(), index.points.end(),
                        [](const ResumePoint& point) { return point.member_start; }) >= 2);
    CHECK(read_layer_dir(blob, index, "flux", "blob") == want);
    CHECK(read_layer_dir(blob, index, "flux-images", "blob").size() == 1);
  }
  SUBCASE("an index that is not the blob's fails") {
    const std::string blob = gzip(tar);
    LayerIndex index = index_layer(blob, "blob");
    CHECK_THROWS_AS(read_layer_dir(blob.substr(0, blob.size() / 2), index, "flux-images", "blob"),
                    Error);
    testing::TempDir cache;
    cache.write("layer", blob.substr(0, blob.size() / 2));
    CHECK_THROWS_WITH_AS(read_layer_dir(blob_file_reader(cache.str() + "/layer", "blob"), index,
                                        "flux-images", "blob"),
                         ("blob: " + cache.str() + "/layer: shorter than its index says").c_str(),
                         Error);
  }
}

// A release a newer one replaced is let go: its files' strings are offered
// for the next files kept, in archive order.
TEST_CASE("layer: the keeper offers back the files of the release it let go") {
  NewestReleaseFiles keeper;
  CHECK(keeper.spare().empty());
  for (const char* name : {"a", "b"}) {
    std::string path = std::string("flux/v2.8.0/") + name + ".yaml";
    REQUIRE(keeper.wants(path));
    keeper.take(path, std::string(name) + "-old");
  }
  REQUIRE(keeper.wants("flux/v2.9.0/a.yaml"));
  CHECK(keeper.spare() == "a-old");
  keeper.take("flux/v2.9.0/a.yaml", "a-new");
  CHECK(keeper.spare() == "b-old");
  CHECK(keeper.spare().empty());
  CHECK_FALSE(keeper.wants("flux/v2.8.0/c.yaml"));
  CHECK(std::move(keeper).files() == KeptFiles{{"flux/v2.9.0/a.yaml", "a-new"}});
}

TEST_CASE("layer: the index pass keeps the newest release's files, read back from the cache") {
  testing::TempDir tree;
  tree.write("flux/v2.8.0/rbac.yaml", "old\n");
  tree.write("flux/v2.9.0/rbac.yaml", "rbac\n");
  tree.write("flux/v2.9.0/crds/source.yaml", "crd\n");
  tree.write("flux/v2.10.0-rc.1/rbac.yaml", "a pre-release\n");
  tree.write("flux/v2.1.0/rbac.yaml", "older, after the newest in archive order\n");
  tree.write("flux-images/v2.9.0/upstream-alpine.yaml", "images\n");
  tree.write("flux-images/v2.8.0/upstream-alpine.yaml", "old images\n");
  tree.write("other/v9.0.0/x.yaml", "not a distribution's\n");
  const std::string blob = create_archive(tree.str(), {"flux", "flux-images", "other"});
  NewestReleaseFiles keeper;
  LayerIndex index = index_layer(blob, "blob", {}, &keeper);
  CHECK(keeper.dirs() == std::vector<std::string>{"flux/v2.9.0", "flux-images/v2.9.0"});
  const KeptFiles kept = std::move(keeper).files();
  CHECK(kept == KeptFiles{{"flux/v2.9.0/rbac.yaml", "rbac\n"},
                          {"flux/v2.9.0/crds/source.yaml", "crd\n"},
                          {"flux-images/v2.9.0/upstream-alpine.yaml", "images\n"}});
  // Keeping them takes nothing from the index.
  CHECK(index.files.size() == index_layer(blob, "blob").files.size());

  // In the cache: the kept files beside the blob, named by their digest in
  // the index; read from there, the rest inflated from the blob.
  const std::string encoded = encode_kept_files(kept);
  CHECK(decode_kept_files(encoded) == kept);
  CHECK_FALSE(decode_kept_files(encoded.substr(0, encoded.size() - 1)));
  index.kept_dirs = {"flux/v2.9.0", "flux-images/v2.9.0"};
  index.kept_digest = sha256_digest(encoded);
  const CacheSeal seal(std::string(32, 'k'));
  std::optional<LayerIndex> decoded = LayerIndex::decode(index.encode(seal), &seal);
  REQUIRE(decoded);
  CHECK(decoded->kept_dirs == index.kept_dirs);
  CHECK(decoded->kept_digest == index.kept_digest);
  // Read from what was kept, or, without it, inflated from the blob: the same.
  testing::TempDir cache;
  cache.write("layer", blob);
  for (bool in_memory : {true, false}) {
    CAPTURE(in_memory);
    auto layer = std::make_shared<Layer>(
        Layer{.path = cache.str() + "/layer",
              .index = *decoded,
              .kept = in_memory ? std::make_shared<KeptFiles>(kept) : nullptr});
    CHECK(LayerFiles(layer, "oci://r/x").read("flux/v2.9.0/crds/source.yaml") == "crd\n");
    CHECK(LayerFiles(layer, "oci://r/x").read("flux/v2.8.0/rbac.yaml") == "old\n");
    CHECK_THROWS_WITH_AS(LayerFiles(layer, "oci://r/x").read("flux/v2.9.0/none.yaml"),
                         "oci://r/x/flux/v2.9.0/none.yaml: not in the artifact", Error);
  }
  // An index of version 2 (an older fluxopctl's) decodes, keeping nothing,
  // its point within the gzip member (zlib's state there) left out.
  std::optional<LayerIndex> old = LayerIndex::decode(encode_version2(index), nullptr);
  REQUIRE(old);
  CHECK(old->files.size() == index.files.size());
  CHECK(old->kept_dirs.empty());
  REQUIRE(old->points.size() == 1);
  CHECK(old->points[0].member_start);
  CHECK(LayerFiles(std::make_shared<Layer>(Layer{.path = cache.str() + "/layer", .index = *old}),
                   "oci://r/x")
            .read("flux/v2.9.0/rbac.yaml") == "rbac\n");
}

TEST_CASE("layer: a damaged, foreign or unsealed index does not decode") {
  testing::TempDir tree;
  tree.write("flux/v2.9.4/rbac.yaml", "kind: ClusterRole\n");
  LayerIndex index = index_layer(create_archive(tree.str(), {"flux"}), "blob");
  index.blob_digest = "sha256:" + std::string(64, 'a');
  const CacheSeal seal(std::string(32, 'k'));
  const std::string encoded = index.encode(seal);
  REQUIRE(LayerIndex::decode(encoded, &seal));
  CHECK(LayerIndex::decode(encoded, &seal)->blob_digest == index.blob_digest);
  for (std::size_t at : {std::size_t{0}, encoded.size() / 2, encoded.size() - 1}) {
    std::string damaged = encoded;
    damaged[at] ^= 1;
    CHECK_FALSE(LayerIndex::decode(damaged, &seal));
  }
  CHECK_FALSE(LayerIndex::decode(encoded.substr(0, encoded.size() - 1), &seal));
  CHECK_FALSE(LayerIndex::decode("", &seal));
  // Sealed with another key, or with none: whole, but not this key's.
  const CacheSeal other(std::string(32, 'o'));
  CHECK_FALSE(LayerIndex::decode(index.encode(other), &seal));
  CHECK_FALSE(LayerIndex::decode(index.encode(CacheSeal()), &seal));
  CHECK(LayerIndex::decode(index.encode(other), nullptr));
  // An index made before a path rule (a cached one) is held to it: one
  // with a file where a directory is, which pull could not extract, is not
  // used by a build either.
  LayerIndex conflicting = index;
  conflicting.files.push_back({"flux/v2.9.4", 0, 0, false});
  CHECK_FALSE(LayerIndex::decode(conflicting.encode(seal), &seal));
  LayerIndex long_name = index;
  long_name.dirs.push_back("flux/" + std::string(256, 'n'));
  CHECK_FALSE(LayerIndex::decode(long_name.encode(seal), &seal));
}

}  // namespace
}  // namespace fluxop::oci
