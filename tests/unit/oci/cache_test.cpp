#include "core/oci/cache.h"
#include "core/oci/layer_files.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../private_mount.h"
#include "../temp_dir.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/file.h"
#include "core/oci/archive.h"
#include "core/oci/layer.h"
#include "core/oci/pull.h"

namespace fluxop::oci {
namespace {

namespace fs = std::filesystem;

const std::string kFile = "flux/v2.9.4/source-controller.yaml";
const CacheSeal kSeal(std::string(32, 'k'));

// A layer holding kFile, built once.
const std::string& layer_blob() {
  static const std::string blob = [] {
    testing::TempDir tree;
    tree.write(kFile, "kind: Deployment\n");
    return create_archive(tree.str(), {"flux"});
  }();
  return blob;
}
const std::string kLayerDigest = sha256_digest(layer_blob());

// fill() writes kManifest, which names the layer: an entry added as kFirst is
// intact, one added as kSecond has the wrong manifest.
const std::string kManifest =
    R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
    R"("config":{"digest":"sha256:)" +
    std::string(64, '0') +
    R"(","size":2},)"
    R"("layers":[{"mediaType":"application/vnd.cncf.flux.content.v1.tar+gzip","digest":")" +
    kLayerDigest + R"(","size":)" + std::to_string(layer_blob().size()) +
    R"(}],"annotations":{"a":"b"}})";
const std::string kFirst = sha256_digest(kManifest);
const std::string kSecond = "sha256:" + std::string(64, 'f');  // sorts after kFirst

// What pull writes: the manifest, the layer and its index.
void fill(const std::string& dir) {
  LayerIndex index = index_layer(layer_blob(), "blob");
  index.blob_digest = kLayerDigest;
  std::ofstream(dir + "/layer") << layer_blob();
  std::ofstream(dir + "/layer.index") << index.encode(kSeal);
  std::ofstream(dir + "/manifest.json") << kManifest;
}

// Adds `digest` as another fluxopctl would, one that has exited since: the
// entry is in the cache, pinned by no process (add() pins what this process
// adds, as open() does).
void add_from_another_process(const std::string& root, const std::string& digest) {
  pid_t pid = fork();
  if (pid == 0) {
    try {
      ArtifactCache(root, &kSeal).add(digest, fill);
      _exit(0);
    } catch (...) {
      _exit(1);
    }
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

// Sets a record's last use `hours` back.
void age_record(const std::string& path, int hours) {
  auto when = fs::file_time_type::clock::now() - std::chrono::hours(hours);
  fs::last_write_time(path, when);
}

TEST_CASE("cache: the default root is oci/ under fluxopctl's cache root") {
  CHECK(ArtifactCache::default_root("/xdg/fluxopctl") == "/xdg/fluxopctl/oci");
  CHECK(ArtifactCache::default_root("").empty());
}

TEST_CASE("cache: an entry appears whole, and a failed fill leaves nothing") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  CHECK_FALSE(cache.find(kFirst));
  {
    auto held = cache.lock_entry(kFirst, {});
    CHECK_THROWS_WITH_AS(cache.add(kFirst,
                                   [](const std::string& tmp) {
                                     fill(tmp);
                                     throw Error("blob: digest mismatch");
                                   }),
                         "blob: digest mismatch", Error);
    CHECK_FALSE(cache.find(kFirst));
    CHECK(fs::is_empty(dir.str() + "/oci/tmp"));
    CachedArtifact added = cache.add(kFirst, fill);
    CHECK(added.dir == dir.str() + "/oci/sha256/" + kFirst.substr(7));
    CHECK(fs::exists(added.layer()));
    CHECK(fs::exists(added.layer_index()));
    // Present: not filled again.
    cache.add(kFirst, [](const std::string&) { FAIL("filled twice"); });
  }
  REQUIRE(cache.find(kFirst));
  CHECK(cache.find(kFirst)->manifest() == cache.find(kFirst)->dir + "/manifest.json");
}

TEST_CASE("cache: tags and digests resolve through their records") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  Reference tag = Reference::parse("oci://127.0.0.1:5000/flux/manifests:v1");
  Reference pinned = Reference::parse("oci://127.0.0.1:5000/flux/manifests@" + kSecond);
  CHECK_FALSE(cache.resolve(tag));
  cache.record(tag, kFirst);
  cache.record(pinned, kSecond);
  REQUIRE(cache.resolve(tag));
  CHECK(cache.resolve(tag)->digest == kFirst);
  CHECK(cache.resolve(tag)->url == tag.str());
  CHECK(cache.resolve(pinned)->digest == kSecond);
  CHECK(fs::exists(dir.str() + "/oci/refs/127.0.0.1:5000/flux/manifests/v1.json"));
  // The tag moves on.
  cache.record(tag, kSecond);
  CHECK(cache.resolve(tag)->digest == kSecond);
}

TEST_CASE("cache: list groups records by artifact, prune drops the unreferenced and the unused") {
  testing::TempDir dir;
  const std::string root = dir.str() + "/oci";
  ArtifactCache cache(root, &kSeal);
  add_from_another_process(root, kFirst);
  add_from_another_process(root, kSecond);
  Reference old_tag = Reference::parse("oci://r.example.com/flux:old");
  Reference new_tag = Reference::parse("oci://r.example.com/flux:new");
  cache.record(old_tag, kFirst);
  cache.record(new_tag, kSecond);
  fs::create_directories(root + "/tmp/entry-leftover");

  std::vector<ArtifactCache::Entry> entries = cache.list();
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].artifact.digest == kFirst);
  REQUIRE(entries[0].refs.size() == 1);
  CHECK(entries[0].refs[0].url == old_tag.str());

  // Nothing is old enough yet; leftovers of interrupted writes go.
  CHECK(cache.prune(std::chrono::hours(24)).empty());
  CHECK_FALSE(fs::exists(root + "/tmp/entry-leftover"));
  CHECK(cache.list().size() == 2);

  age_record(root + "/refs/r.example.com/flux/old.json", 48);
  CHECK(cache.prune(std::chrono::hours(24)) == std::vector<std::string>{kFirst});
  CHECK_FALSE(cache.find(kFirst));
  CHECK(cache.find(kSecond));
  CHECK_FALSE(cache.resolve(old_tag));

  // A tag that moved away leaves its artifact unreferenced.
  add_from_another_process(root, kFirst);
  CHECK(cache.prune(std::chrono::hours(24)) == std::vector<std::string>{kFirst});
}

// One lock per entry: a pull of another artifact never waits behind a slow
// one, a pull of the same one says whom it waits for, and never waits
// unbounded on a process that stopped mid-pull.
TEST_CASE("cache: the entry lock is per entry, says whom it waits for, and is bounded") {
  testing::TempDir dir;
  ArtifactCache first(dir.str() + "/oci", &kSeal);
  ArtifactCache second(dir.str() + "/oci", &kSeal);
  std::vector<std::string> heard;
  auto hear = [&](const std::string& line) { heard.push_back(line); };
  auto held = first.lock_entry(kFirst, hear);
  REQUIRE(held);
  CHECK(second.lock_entry(kSecond, hear, std::chrono::milliseconds(0)) != nullptr);
  CHECK(heard.empty());
  CHECK(second.lock_entry(kFirst, hear, std::chrono::milliseconds(200)) == nullptr);
  REQUIRE(heard.size() == 2);
  CHECK(heard[0] == "waiting for another fluxopctl (pid " + std::to_string(getpid()) +
                        ") pulling " + kFirst + " into " + dir.str() + "/oci, for at most 0s");
  CHECK(heard[1] == "warning: " + dir.str() + "/oci/locks/" + kFirst.substr(7) +
                        " still held after 0s: pulling " + kFirst + " alongside");
  held.reset();
  CHECK(second.lock_entry(kFirst, hear, std::chrono::milliseconds(0)) != nullptr);
}

// The reason the system gave, not what the next step made of it.
TEST_CASE("cache: a read-only or full cache says so, naming the path") {
  testing::TempDir dir;
  std::string root = dir.str() + "/fluxopctl/oci";
  std::string unavailable;
  std::optional<std::string> read_only = testing::error_on_private_mount(
      dir.str(), MS_RDONLY, nullptr, [&] { ArtifactCache(root, &kSeal).lock_entry(kFirst, {}); },
      unavailable);
  if (!read_only) {
    MESSAGE("skipped: no private mount here: " << unavailable);
    return;
  }
  CHECK(*read_only == root + "/locks: cannot create the directory: Read-only file system");

  std::string big(1 << 20, 'x');
  std::optional<std::string> full = testing::error_on_private_mount(
      dir.str(), 0, "size=64k",
      [&] {
        ArtifactCache cache(root, &kSeal);
        auto held = cache.lock_entry(kFirst, {});
        cache.add(kFirst, [&](const std::string& entry) { write_new_file(entry + "/layer", big); });
      },
      unavailable);
  REQUIRE(full);
  CHECK(full->starts_with(root + "/tmp/entry-"));
  CHECK(full->ends_with("/layer: cannot write: No space left on device"));
}

TEST_CASE("cache: verify names a changed, truncated or missing layer, index or manifest") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  CachedArtifact entry;
  {
    auto held = cache.lock_entry(kFirst, {});
    entry = cache.add(kFirst, fill);
  }
  Layer loaded;
  CHECK(cache.verify(entry, &loaded) == "");
  CHECK(loaded.path == entry.layer());
  REQUIRE(loaded.index.files.size() == 1);
  CHECK(loaded.index.files[0].path == kFile);
  const std::string changed = "the layer does not have the digest " + kLayerDigest;
  SUBCASE("a byte of the layer changed, same size") {
    std::string blob = layer_blob();
    blob[blob.size() / 2] ^= 1;
    std::ofstream(entry.layer()) << blob;
    CHECK(cache.verify(entry) == changed);
  }
  SUBCASE("a byte of the layer changed, checked when read: the first read finds it") {
    CHECK(loaded.blob_checked);  // verified now
    CHECK_FALSE(loaded.on_damaged);
    // Intact, it is read as it is, once checked.
    Layer unchecked;
    CHECK(cache.verify(entry, &unchecked, ArtifactCache::BlobCheck::when_read) == "");
    CHECK_FALSE(unchecked.blob_checked);
    BlobReader intact = layer_blob_reader(unchecked, "blob");
    CHECK(intact(0, 2) == layer_blob().substr(0, 2));
    fs::resize_file(entry.layer(), 4);  // checked already: not hashed again
    CHECK(intact(0, 2) == layer_blob().substr(0, 2));
    // Damaged, the first read removes the entry (as verify arranged) and throws.
    std::string blob = layer_blob();
    blob[blob.size() / 2] ^= 1;
    std::ofstream(entry.layer(), std::ios::trunc) << blob;
    Layer damaged;
    CHECK(cache.verify(entry, &damaged, ArtifactCache::BlobCheck::when_read) == "");
    BlobReader read = layer_blob_reader(damaged, "blob");
    CHECK_THROWS_WITH_AS(
        read(0, 1),
        ("blob: the cached layer " + entry.layer() + " is damaged (it does not have the digest " +
         kLayerDigest + "): removed from the cache, to be pulled again")
            .c_str(),
        Error);
    CHECK_FALSE(cache.find(kFirst));
    CHECK_FALSE(fs::exists(entry.dir));
    // Found again by another read (an early render's, then the render's):
    // nothing is left behind.
    BlobReader again = layer_blob_reader(damaged, "blob");
    CHECK_THROWS_AS(again(0, 1), Error);
    const std::string tmp = dir.str() + "/oci/tmp";
    CHECK((!fs::exists(tmp) || fs::is_empty(tmp)));
  }
  SUBCASE("the layer truncated") {
    fs::resize_file(entry.layer(), 4);
    CHECK(cache.verify(entry) == changed);
    // Its size is checked whenever its digest is left for later.
    CHECK(cache.verify(entry, nullptr, ArtifactCache::BlobCheck::when_read) ==
          "the layer is missing or not of the size " + std::to_string(layer_blob().size()) +
              " the index records");
  }
  SUBCASE("the layer missing, or no longer a regular file") {
    fs::remove(entry.layer());
    const std::string missing =
        "the layer is missing or not a regular file of at most 67108864 bytes";
    CHECK(cache.verify(entry) == missing);
    REQUIRE(mkfifo(entry.layer().c_str(), 0644) == 0);  // would block a plain read
    CHECK(cache.verify(entry) == missing);
  }
  SUBCASE("an intact index and layer the manifest does not name") {
    testing::TempDir tree;
    tree.write(kFile, "kind: Secret\n");
    std::string other = create_archive(tree.str(), {"flux"});
    LayerIndex index = index_layer(other, "blob");
    index.blob_digest = sha256_digest(other);
    std::ofstream(entry.layer()) << other;
    std::ofstream(entry.layer_index()) << index.encode(kSeal);
    CHECK(cache.verify(entry) == "layer.index is for a layer the manifest does not name");
  }
  SUBCASE("a byte of the index changed") {
    std::ifstream in(entry.layer_index());
    std::string index{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    index[index.size() / 3] ^= 1;
    std::ofstream(entry.layer_index()) << index;
    // The seal no longer opens it; read for the blob it names, it names
    // none of the manifest's.
    CHECK(cache.verify(entry) == "layer.index is for a layer the manifest does not name");
  }
  SUBCASE("no index (garbage in the entry's place)") {
    fs::remove(entry.layer_index());
    CHECK(cache.verify(entry) == "layer.index is missing or damaged");
    CHECK_FALSE(cache.find(kFirst));
  }
  SUBCASE("the files the index pass kept: read with it, and a byte of them changed") {
    NewestReleaseFiles keeper;
    LayerIndex index = index_layer(layer_blob(), "blob", {}, &keeper);
    index.blob_digest = kLayerDigest;
    index.kept_dirs = keeper.dirs();
    const std::string kept = encode_kept_files(std::move(keeper).files());
    index.kept_digest = sha256_digest(kept);
    std::ofstream(entry.layer_index()) << index.encode(kSeal);
    std::ofstream(entry.layer_kept()) << kept;
    Layer with_kept;
    CHECK(cache.verify(entry, &with_kept) == "");
    REQUIRE(with_kept.kept);
    CHECK(*with_kept.kept == KeptFiles{{kFile, "kind: Deployment\n"}});
    std::string changed_kept = kept;
    changed_kept[changed_kept.size() - 3] ^= 1;
    std::ofstream(entry.layer_kept()) << changed_kept;
    const std::string damaged = "layer.kept is missing or does not have the digest the index names";
    CHECK(cache.verify(entry) == damaged);
    fs::remove(entry.layer_kept());
    CHECK(cache.verify(entry) == damaged);
  }
  SUBCASE("a truncated manifest") {
    fs::resize_file(entry.manifest(), 3);
    CHECK(cache.verify(entry) == "manifest.json does not have the digest " + kFirst);
  }
  // The same entry under the wrong digest.
  auto held = cache.lock_entry(kFirst, {});
  CHECK(cache.verify(cache.add(kSecond, fill)) ==
        "manifest.json does not have the digest " + kSecond);
}

TEST_CASE("cache: extract writes the layer's files once, for pull's path") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  auto held = cache.lock_entry(kFirst, {});
  CachedArtifact entry = cache.add(kFirst, fill);
  Layer loaded;
  REQUIRE(cache.verify(entry, &loaded) == "");
  CHECK(cache.extract(entry, loaded) == entry.content());
  std::ifstream in(entry.content() + "/" + kFile);
  CHECK(std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()} ==
        "kind: Deployment\n");
  // There already: kept as it is.
  fs::remove(entry.content() + "/" + kFile);
  CHECK(cache.extract(entry, loaded) == entry.content());
  CHECK_FALSE(fs::exists(entry.content() + "/" + kFile));
  CHECK(cache.verify(entry) == "");
}

// An older fluxopctl kept content/ and content-digests.json, no layer.index.
TEST_CASE("cache: an entry in an older layout is replaced when pulled and dropped by prune") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  for (const std::string& digest : {kFirst, kSecond}) {
    std::string old = "oci/sha256/" + digest.substr(7);
    dir.write(old + "/manifest.json", kManifest);
    dir.write(old + "/content/" + kFile, "kind: Deployment\n");
    dir.write(old + "/content-digests.json", "{}");
  }
  CHECK_FALSE(cache.find(kFirst));
  {
    auto held = cache.lock_entry(kFirst, {});
    CachedArtifact added = cache.add(kFirst, fill);
    CHECK(cache.verify(added) == "");
    CHECK_FALSE(fs::exists(added.dir + "/content-digests.json"));
  }
  cache.record(Reference::parse("oci://127.0.0.1:5000/flux:v1"), kFirst);
  CHECK(cache.prune(std::chrono::hours(24)) == std::vector<std::string>{kSecond});
  CHECK(cache.find(kFirst));
  CHECK_FALSE(fs::exists(dir.str() + "/oci/sha256/" + kSecond.substr(7)));
}

TEST_CASE("cache: prune leaves a pinned entry, discard removes it, pinned or not") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  add_from_another_process(dir.str() + "/oci", kFirst);
  add_from_another_process(dir.str() + "/oci", kSecond);
  // No record points to either: only the pin keeps kFirst.
  REQUIRE(cache.open(kFirst));
  CHECK(cache.prune(std::chrono::hours(24)) == std::vector<std::string>{kSecond});
  REQUIRE(cache.find(kFirst));
  CHECK(cache.verify(*cache.open(kFirst)) == "");
  {
    auto held = cache.lock_entry(kFirst, {});
    cache.discard(*cache.find(kFirst));
  }
  CHECK_FALSE(cache.find(kFirst));
  CHECK_FALSE(cache.open(kFirst));
  // Added again, pinned again.
  {
    auto held = cache.lock_entry(kFirst, {});
    cache.add(kFirst, fill);
  }
  REQUIRE(cache.open(kFirst));
  CHECK(cache.prune(std::chrono::hours(24)).empty());
}

TEST_CASE("cache: a damaged reference record is absent, never a crash") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  Reference tag = Reference::parse("oci://127.0.0.1:5000/flux:v1");
  cache.record(tag, kFirst);
  REQUIRE(cache.resolve(tag));
  const std::string record = dir.str() + "/oci/refs/127.0.0.1:5000/flux/v1.json";
  for (std::string damaged :
       {R"({"url":1,"digest":")" + kFirst + R"(","pulled":""})",
        std::string(R"({"url":"u","digest":"sha256:../../x","pulled":""})"),
        R"({"url":"u","digest":")" + kFirst + R"(","pulled":[]})", std::string("[1]"),
        std::string(100'000, '['), std::string("{\"url\"")}) {
    CAPTURE(damaged.substr(0, 60));
    std::ofstream(record, std::ios::trunc) << damaged;
    CHECK_FALSE(cache.resolve(tag));
  }
  fs::remove(record);
  REQUIRE(mkfifo(record.c_str(), 0644) == 0);  // would block a plain read
  CHECK_FALSE(cache.resolve(tag));
}

TEST_CASE("cache: the annotations are read from a manifest that has the entry's digest only") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  auto held = cache.lock_entry(kFirst, {});
  CachedArtifact entry = cache.add(kFirst, fill);
  CHECK(manifest_annotations(cache, entry) == std::map<std::string, std::string>{{"a", "b"}});
  std::ofstream(entry.manifest(), std::ios::trunc)
      << R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","annotations":{"a":"forged"}})";
  CHECK(manifest_annotations(cache, entry).empty());
}

TEST_CASE("cache: --offline never uses a damaged entry, nor a record of a missing one") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  Reference tag = Reference::parse("oci://127.0.0.1:5000/flux:v1");
  Reference pinned = Reference::parse("oci://127.0.0.1:5000/flux@" + kFirst);
  PullOptions offline;
  offline.offline = true;
  const std::string where = dir.str() + "/oci/sha256/" + kFirst.substr(7);

  cache.record(tag, kFirst);
  CHECK_THROWS_WITH_AS(pull(cache, tag, offline), doctest::Contains("not in the cache"), Error);
  {
    auto held = cache.lock_entry(kFirst, {});
    cache.add(kFirst, fill);
  }
  CHECK(pull(cache, tag, offline).artifact.digest == kFirst);
  CHECK(pull(cache, pinned, offline).artifact.digest == kFirst);
  fs::resize_file(where + "/layer", 0);
  const std::string damaged =
      "the cached entry " + where + " is damaged (the layer is missing or not of the size " +
      std::to_string(layer_blob().size()) + " the index records); pull it again without --offline";
  CHECK_THROWS_WITH_AS(pull(cache, tag, offline), damaged.c_str(), Error);
  CHECK_THROWS_WITH_AS(pull(cache, pinned, offline), damaged.c_str(), Error);
}

// Issue 41: whoever can write only the cache cannot change what a build
// reads. An index sealed with another key (planted, another user's) that
// says a file is elsewhere in the blob is derived again from the blob, once
// the blob's digest holds; a record of a tag moved to another artifact, its
// fields and seal copied from that artifact's record, is not trusted.
TEST_CASE("cache: an index or a record the key did not seal is derived again or not trusted") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  CachedArtifact entry = cache.add(kFirst, fill);
  LayerIndex genuine = index_layer(layer_blob(), "blob");
  LayerIndex forged = genuine;
  forged.blob_digest = kLayerDigest;
  forged.files[0].offset += 1;  // the file read from elsewhere in the blob
  const CacheSeal attacker(std::string(32, 'a'));
  std::ofstream(entry.layer_index(), std::ios::trunc) << forged.encode(attacker);
  Layer loaded;
  CHECK(cache.verify(entry, &loaded) == "");
  REQUIRE(loaded.index.files.size() == 1);
  CHECK(loaded.index.files[0].offset == genuine.files[0].offset);
  // Indexed as pull indexes it: the newest release's files kept.
  CHECK(loaded.index.kept_dirs == std::vector<std::string>{"flux/v2.9.4"});
  REQUIRE(loaded.kept);
  CHECK(loaded.kept->at(kFile) == "kind: Deployment\n");
  // Rewritten, sealed: the next verify reads it, and the kept files, as they are.
  CHECK(LayerIndex::decode(read_kept_file(entry.layer_index(), 1 << 20).value_or(""), &kSeal));
  Layer again;
  CHECK(cache.verify(entry, &again, ArtifactCache::BlobCheck::when_read) == "");
  CHECK_FALSE(again.blob_checked);
  REQUIRE(again.kept);
  CHECK(*again.kept == *loaded.kept);

  Reference tag = Reference::parse("oci://127.0.0.1:5000/flux:v1");
  Reference other = Reference::parse("oci://127.0.0.1:5000/flux:v0");
  cache.record(tag, kFirst);
  cache.record(other, kSecond);
  const std::string record = dir.str() + "/oci/refs/127.0.0.1:5000/flux/v1.json";
  std::string text =
      read_kept_file(dir.str() + "/oci/refs/127.0.0.1:5000/flux/v0.json", 4096).value();
  std::ofstream(record, std::ios::trunc) << text;  // v0's record, seal and all, as v1's
  std::string why;
  CHECK_FALSE(cache.resolve(tag, &why));
  CHECK(why.starts_with(record + " is not sealed with this user's key "));
  // Sealed with another key: the same.
  ArtifactCache(dir.str() + "/oci", &attacker).record(tag, kSecond);
  CHECK_FALSE(cache.resolve(tag));
  cache.record(tag, kFirst);
  CHECK(cache.resolve(tag)->digest == kFirst);
}

// Issue 41: entries honour the umask, so a cache shared by several users
// under umask 022 serves them all (mkdtemp made them 0700).
TEST_CASE("cache: entries are created with the umask's permissions") {
  testing::TempDir dir;
  ArtifactCache cache(dir.str() + "/oci", &kSeal);
  mode_t previous = umask(022);
  CachedArtifact entry = cache.add(kFirst, fill);
  cache.record(Reference::parse("oci://127.0.0.1:5000/flux:v1"), kFirst);
  umask(previous);
  auto mode = [](const std::string& path) {
    return fs::status(path).permissions() & fs::perms::all;
  };
  CHECK(mode(entry.dir) == static_cast<fs::perms>(0755));
  CHECK(mode(dir.str() + "/oci/refs/127.0.0.1:5000/flux/v1.json") == static_cast<fs::perms>(0644));
}

}  // namespace
}  // namespace fluxop::oci
