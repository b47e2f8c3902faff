#include "core/oci/cache.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/digest.h"
#include "core/error.h"
#include "core/file.h"
#include "core/oci/archive.h"
#include "core/oci/layer_files.h"
#include "core/oci/registry.h"
#include "core/peer_json.h"
#include "core/rfc3339.h"

namespace fluxop::oci {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string rfc3339(std::chrono::system_clock::time_point time) {
  return utc_rfc3339(std::chrono::system_clock::to_time_t(time));
}

// A reference record is a few hundred bytes.
constexpr std::size_t kMaxRecordBytes = 64 * 1024;

// What a record's seal covers: every field, so that none can be changed or
// moved to another tag's record.
std::string sealed_part(const RefRecord& record) {
  return record.url + "\n" + record.digest + "\n" + record.pulled + "\n";
}

// A reference record, or nothing when it is not one a fluxopctl wrote (a
// damaged or hand-edited file): such a record is treated as absent. `seal`
// is left holding its seal.
std::optional<RefRecord> read_record(const std::string& path, std::string* seal = nullptr) {
  std::optional<std::string> text = read_kept_file(path, kMaxRecordBytes);
  if (!text) return std::nullopt;
  json record = parse_peer_json(*text, nullptr, {.max_depth = 4, .max_elements = 64});
  if (!record.is_object()) return std::nullopt;
  RefRecord out;
  for (auto [field, value] : {std::pair{"url", &out.url}, std::pair{"digest", &out.digest},
                              std::pair{"pulled", &out.pulled}}) {
    auto found = record.find(field);
    if (found == record.end() || !found->is_string()) return std::nullopt;
    *value = found->get<std::string>();
  }
  if (!is_sha256_digest(out.digest)) return std::nullopt;
  if (auto found = record.find("seal"); seal && found != record.end() && found->is_string())
    *seal = found->get<std::string>();
  return out;
}

std::chrono::system_clock::time_point modified(const fs::path& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return {};
  return std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
}

std::string digest_hex(const std::string& digest) {
  if (!is_sha256_digest(digest)) throw Error("not a sha256 digest: " + digest);
  return digest.substr(7);
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The entries this process pinned: entry directory -> the descriptor holding
// its shared lock, open until the process exits (or the entry is discarded).
std::mutex pins_mutex;
std::map<std::string, int> pins;

}  // namespace

ArtifactCache::ArtifactCache(std::string root, const CacheSeal* seal)
    : root_(std::move(root)), seal_(seal ? seal : &CacheSeal::user()) {}

void ArtifactCache::pin(const std::string& dir, int fd) {
  std::lock_guard<std::mutex> guard(pins_mutex);
  if (auto pinned = pins.find(dir); pinned != pins.end()) close(pinned->second);
  pins[dir] = fd;
}

std::string ArtifactCache::default_root(const std::string& cache_root) {
  return cache_root.empty() ? "" : (fs::path(cache_root) / "oci").string();
}

std::optional<CachedArtifact> ArtifactCache::find(const std::string& digest) const {
  CachedArtifact artifact{digest, root_ + "/sha256/" + digest_hex(digest)};
  for (const std::string& path : {artifact.manifest(), artifact.layer_index()}) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) {
      // Another user's entry this one may not see (a shared cache under a
      // umask of 077): said, never taken for a missing entry.
      if (errno == EACCES) throw Error(path + ": " + std::strerror(EACCES));
      return std::nullopt;
    }
    if (!S_ISREG(info.st_mode)) return std::nullopt;
  }
  return artifact;
}

std::optional<CachedArtifact> ArtifactCache::open(const std::string& digest) const {
  std::optional<CachedArtifact> artifact = find(digest);
  if (!artifact) return std::nullopt;
  std::lock_guard<std::mutex> guard(pins_mutex);
  struct stat held = {};
  struct stat now = {};
  if (auto pinned = pins.find(artifact->dir); pinned != pins.end()) {
    if (fstat(pinned->second, &held) == 0 && stat(artifact->dir.c_str(), &now) == 0 &&
        same_inode(held, now))
      return artifact;
    close(pinned->second);
    pins.erase(pinned);
  }
  int fd = ::open(artifact->dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  // Prune moves an entry away while it holds the exclusive lock: once the
  // shared lock is ours and the entry is still in place, it stays.
  if (flock(fd, LOCK_SH) != 0 || fstat(fd, &held) != 0 || stat(artifact->dir.c_str(), &now) != 0 ||
      !same_inode(held, now) || !find(digest)) {
    close(fd);
    return std::nullopt;
  }
  pins[artifact->dir] = fd;
  return artifact;
}

std::optional<std::string> ArtifactCache::verified_manifest(const CachedArtifact& artifact) const {
  std::optional<std::string> manifest = read_kept_file(artifact.manifest(), kMaxManifestBytes);
  if (!manifest || sha256_digest(*manifest) != artifact.digest) return std::nullopt;
  return manifest;
}

std::string ArtifactCache::verify(const CachedArtifact& artifact, Layer* loaded,
                                  BlobCheck blob) const {
  std::optional<std::string> manifest = verified_manifest(artifact);
  if (!manifest) return "manifest.json does not have the digest " + artifact.digest;
  std::string index_data = read_kept_file(artifact.layer_index(), kMaxInputBytes).value_or("");
  std::optional<LayerIndex> index = LayerIndex::decode(index_data, &seal());
  bool sealed = index.has_value();
  // Unsealed, it only points at a blob, which must then hold its digest.
  if (!sealed) index = LayerIndex::decode(index_data, nullptr);
  if (!index) return "layer.index is missing or damaged";
  // The index's blob must be one the manifest names: the chain from the
  // entry's digest to the layer's bytes has no link taken on trust.
  bool named = false;
  try {
    for (const Descriptor& layer : parse_manifest(*manifest, kOciManifest, "manifest.json").layers)
      named = named || layer.digest == index->blob_digest;
  } catch (const Error&) {
  }
  if (!named) return "layer.index is for a layer the manifest does not name";
  // A sealed index vouches for the rest of the entry; the blob is hashed
  // now only when asked (or to index it again), else by the first read that
  // needs it (layer_blob_reader). Its size is checked either way: a blob cut
  // short or removed is found here.
  bool hash_now = !sealed || blob == BlobCheck::now;
  std::shared_ptr<const KeptFiles> kept;
  if (!hash_now) {
    struct stat info {};
    if (stat(artifact.layer().c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
        static_cast<std::uint64_t>(info.st_size) != index->blob_size)
      return "the layer is missing or not of the size " + std::to_string(index->blob_size) +
             " the index records";
  } else {
    // Hashed as it is read: the blob stays on disk, reads take the parts
    // they need; kept whole only to index it again.
    Sha256 hash;
    std::string bytes;
    if (!read_kept_file(artifact.layer(), kMaxLayerBytes, [&](std::string_view part) {
          hash.update(part);
          if (!sealed) bytes.append(part);
        }))
      return "the layer is missing or not a regular file of at most " +
             std::to_string(kMaxLayerBytes) + " bytes";
    if (hash.finish() != index->blob_digest)
      return "the layer does not have the digest " + index->blob_digest;
    if (!sealed) {
      try {
        CacheIndexed again = index_again(artifact, bytes, index->blob_digest);
        index = std::move(again.index);
        kept = std::move(again.kept);
      } catch (const Error& e) {
        return std::string("the layer cannot be indexed: ") + e.what();
      }
    }
  }
  // What the index pass kept (a sealed index names it by its digest):
  // read now, checked like the rest, so that a damaged entry is found here.
  if (!kept && !index->kept_dirs.empty()) {
    std::optional<std::string> data = read_kept_file(artifact.layer_kept(), kMaxLayerBytes);
    std::optional<KeptFiles> files;
    if (data && sha256_digest(*data) == index->kept_digest) files = decode_kept_files(*data);
    if (!files) return "layer.kept is missing or does not have the digest the index names";
    kept = std::make_shared<const KeptFiles>(std::move(*files));
  }
  if (loaded) {
    *loaded = Layer{.path = artifact.layer(),
                    .index = std::move(*index),
                    .kept = std::move(kept),
                    .blob_checked = hash_now,
                    .on_damaged = hash_now ? std::function<void()>() : discard_later(artifact)};
  }
  return "";
}

CacheIndexed ArtifactCache::index_again(const CachedArtifact& artifact, std::string_view blob,
                                        const std::string& blob_digest) const {
  CacheIndexed indexed = index_for_cache(blob, blob_digest, "blob " + blob_digest);
  if (!seal().has_key()) return indexed;
  try {
    // The files it names first: the index is what makes them used.
    if (!indexed.kept_encoding.empty())
      write_file_atomically(artifact.layer_kept(), indexed.kept_encoding);
    write_file_atomically(artifact.layer_index(), indexed.index.encode(seal()));
  } catch (const Error&) {
    // Another user's entry: indexed again on every use, and correct.
  }
  return indexed;
}

std::function<void()> ArtifactCache::discard_later(const CachedArtifact& artifact) const {
  return [root = root_, seal = seal_, artifact] {
    try {
      ArtifactCache cache(root, seal);
      std::unique_ptr<FileLock> held = cache.lock_entry(artifact.digest, {});
      cache.discard(artifact);
    } catch (const Error&) {
      // Another user's entry: the next verify of it finds the damage.
    }
  };
}

void ArtifactCache::discard(const CachedArtifact& artifact) {
  {
    std::lock_guard<std::mutex> guard(pins_mutex);
    if (auto pinned = pins.find(artifact.dir); pinned != pins.end()) {
      close(pinned->second);
      pins.erase(pinned);
    }
  }
  std::error_code error;
  fs::remove_all(retire(artifact.dir), error);
}

std::string ArtifactCache::retire(const std::string& dir) {
  create_directories(root_ + "/tmp");
  std::string away = create_unique_directory(root_ + "/tmp/retired-");
  std::error_code error;
  fs::rename(dir, away, error);  // onto the empty directory: one step
  if (error) {
    std::error_code ignored;
    fs::remove(away, ignored);  // gone already (removed by another read), or kept
    throw Error(dir + ": cannot move it out of the cache: " + error.message());
  }
  return away;
}

std::string ArtifactCache::record_path(const Reference& ref) const {
  std::string name = ref.tag.empty() ? "sha256-" + digest_hex(ref.digest) : ref.tag;
  return root_ + "/refs/" + ref.registry + "/" + ref.repository + "/" + name + ".json";
}

std::optional<RefRecord> ArtifactCache::resolve(const Reference& ref, std::string* why) const {
  std::string path = record_path(ref);
  std::string sealed;
  std::optional<RefRecord> record = read_record(path, &sealed);
  if (!record) return std::nullopt;
  if (record->url != ref.str() || !seal().opens(sealed_part(*record), sealed)) {
    if (why) {
      *why = path + " is not sealed with this user's key " + CacheSeal::user_key_file() +
             " (written by another user, restored from another cache, or planted): not trusted";
    }
    return std::nullopt;
  }
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now
  record->used = std::chrono::system_clock::now();
  return record;
}

void ArtifactCache::record(const Reference& ref, const std::string& digest) {
  RefRecord fields{ref.str(), digest, rfc3339(std::chrono::system_clock::now()), {}};
  json record = {{"url", fields.url},
                 {"digest", fields.digest},
                 {"pulled", fields.pulled},
                 {"seal", seal().seal(sealed_part(fields))}};
  write_file_atomically(record_path(ref), record.dump(2) + "\n");
}

std::unique_ptr<FileLock> ArtifactCache::lock_entry(
    const std::string& digest, const std::function<void(const std::string&)>& waiting,
    std::chrono::milliseconds timeout) {
  create_directories(root_ + "/locks");
  std::string path = root_ + "/locks/" + digest_hex(digest);
  std::string seconds =
      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count());
  bool stopped = false;
  std::unique_ptr<FileLock> lock = FileLock::acquire(
      path, true, timeout,
      [&](const std::string& holder) {
        if (waiting) {
          waiting("waiting for another fluxopctl (" + (holder.empty() ? "unknown" : holder) +
                  ") pulling " + digest + " into " + root_ + ", for at most " + seconds + "s");
        }
      },
      &stopped);
  if (!lock && waiting) {
    waiting("warning: " + path +
            (stopped ? " is held by a stopped process" : " still held after " + seconds + "s") +
            ": pulling " + digest + " alongside");
  }
  return lock;
}

CachedArtifact ArtifactCache::add(const std::string& digest,
                                  const std::function<void(const std::string&)>& fill) {
  if (std::optional<CachedArtifact> present = find(digest)) return *present;
  create_directories(root_ + "/tmp");
  create_directories(root_ + "/sha256");
  std::string pattern = create_unique_directory(root_ + "/tmp/entry-");
  // Pinned while it is written, and as the entry it becomes (the same
  // directory): prune takes neither.
  int fd = ::open(pattern.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || flock(fd, LOCK_SH) != 0) {
    std::string reason = std::strerror(errno);
    if (fd >= 0) close(fd);
    std::error_code ignored;
    fs::remove_all(pattern, ignored);
    throw Error(pattern + ": " + reason);
  }
  try {
    fill(pattern);
  } catch (...) {
    close(fd);
    std::error_code ignored;
    fs::remove_all(pattern, ignored);
    throw;
  }
  CachedArtifact artifact{digest, root_ + "/sha256/" + digest_hex(digest)};
  std::error_code error;
  // What is there is no entry find() accepts (an older fluxopctl's layout,
  // or a part of one): moved away, as discard() moves a damaged entry.
  if (!find(digest) && fs::exists(artifact.dir, error)) fs::remove_all(retire(artifact.dir), error);
  fs::rename(pattern, artifact.dir, error);
  if (error) {
    close(fd);
    std::string reason = error.message();
    fs::remove_all(pattern, error);
    // Another fluxopctl, which waited no longer for this one, added it first.
    if (std::optional<CachedArtifact> present = find(digest)) return *present;
    throw Error(artifact.dir + ": cannot add to the cache: " + reason);
  }
  pin(artifact.dir, fd);
  return artifact;
}

std::vector<std::pair<std::string, RefRecord>> ArtifactCache::records() const {
  std::vector<std::pair<std::string, RefRecord>> out;
  std::error_code error;
  fs::path refs = root_ + "/refs";
  if (!fs::is_directory(refs, error)) {
    if (error.value() == EACCES) throw Error(refs.string() + ": " + error.message());
    return out;
  }
  for (auto it = fs::recursive_directory_iterator(refs, error); !error && it != fs::end(it);
       it.increment(error)) {
    if (!it->is_regular_file() || it->path().extension() != ".json") continue;
    std::optional<RefRecord> record = read_record(it->path().string());
    if (!record) continue;
    record->used = modified(it->path());
    out.emplace_back(it->path().string(), std::move(*record));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<ArtifactCache::Entry> ArtifactCache::list() const {
  std::vector<Entry> entries;
  std::error_code error;
  fs::path artifacts = root_ + "/sha256";
  if (!fs::is_directory(artifacts, error)) {
    if (error.value() == EACCES) throw Error(artifacts.string() + ": " + error.message());
    return entries;
  }
  std::vector<std::pair<std::string, RefRecord>> all_records = records();
  fs::directory_iterator listing(artifacts, error);
  if (error) throw Error(artifacts.string() + ": " + error.message());
  for (const fs::directory_entry& dir : listing) {
    std::string digest = "sha256:" + dir.path().filename().string();
    if (!is_sha256_digest(digest) || !find(digest)) continue;
    Entry entry{*find(digest), {}};
    for (const auto& [path, record] : all_records) {
      if (record.digest == digest) entry.refs.push_back(record);
    }
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.artifact.digest < b.artifact.digest; });
  return entries;
}

std::vector<std::string> ArtifactCache::prune(std::chrono::seconds max_age) {
  auto now = std::chrono::system_clock::now();
  std::set<std::string> kept;
  for (const auto& [path, record] : records()) {
    if (now - record.used > max_age) {
      fs::remove(path);
    } else {
      kept.insert(record.digest);
    }
  }
  std::vector<std::string> removed;
  std::error_code error;
  // Every directory under sha256/: an entry no record keeps, and whatever is
  // no entry find() accepts (an older fluxopctl's layout), goes.
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& item : fs::directory_iterator(root_ + "/sha256", error))
    dirs.push_back(item.path());
  for (const fs::path& dir : dirs) {
    std::string digest = "sha256:" + dir.filename().string();
    bool entry = is_sha256_digest(digest) && find(digest);
    if (entry && kept.contains(digest)) continue;
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    // Pinned by a process using it: kept. The exclusive lock is held until
    // the entry has moved, so that no process pins it meanwhile.
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      try {
        fs::remove_all(retire(dir.string()), error);
        removed.push_back(digest);
      } catch (const Error&) {
        // Another prune took it first.
      }
    }
    close(fd);
  }
  // Leftovers of interrupted writes: what no writer pins.
  std::vector<fs::path> leftovers;
  for (const fs::directory_entry& item : fs::directory_iterator(root_ + "/tmp", error))
    leftovers.push_back(item.path());
  for (const fs::path& leftover : leftovers) {
    int fd = ::open(leftover.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) fs::remove_all(leftover, error);
    close(fd);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

std::string ArtifactCache::extract(const CachedArtifact& artifact, const Layer& layer) {
  std::error_code error;
  if (fs::is_directory(artifact.content(), error)) return artifact.content();
  std::string pattern = create_unique_directory(artifact.dir + "/.content-");
  try {
    extract_layer(layer, pattern, "blob " + layer.index.blob_digest);
  } catch (...) {
    fs::remove_all(pattern, error);
    throw;
  }
  // Another process may have extracted it meanwhile: theirs stays.
  fs::rename(pattern, artifact.content(), error);
  if (error) fs::remove_all(pattern, error);
  return artifact.content();
}

}  // namespace fluxop::oci
