#include "core/oci/cache.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>

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

namespace fluxop::oci {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string rfc3339(std::chrono::system_clock::time_point time) {
  return utc_rfc3339(std::chrono::system_clock::to_time_t(time));
}

std::string read_text(const std::string& path) { return read_file_if_exists(path).value_or(""); }

std::chrono::system_clock::time_point modified(const fs::path& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return {};
  return std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
}

std::string digest_hex(const std::string& digest) {
  if (!is_sha256_digest(digest)) throw Error("not a sha256 digest: " + digest);
  return digest.substr(7);
}

// A new directory named after `prefix` ("<root>/tmp/entry-"), unique.
std::string temporary_directory(const std::string& prefix) {
  std::string pattern = prefix + "XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw Error(prefix + "XXXXXX: cannot create the directory: " + std::strerror(errno));
  return pattern;
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The entries this process pinned: entry directory -> the descriptor holding
// its shared lock, open until the process exits (or the entry is discarded).
std::mutex pins_mutex;
std::map<std::string, int> pins;

}  // namespace

CacheLock::~CacheLock() {
  flock(fd_, LOCK_UN);
  close(fd_);
}

ArtifactCache::ArtifactCache(std::string root) : root_(std::move(root)) {}

std::string ArtifactCache::default_root(const std::string& cache_root) {
  return cache_root.empty() ? "" : (fs::path(cache_root) / "oci").string();
}

std::optional<CachedArtifact> ArtifactCache::find(const std::string& digest) const {
  CachedArtifact artifact{digest, root_ + "/sha256/" + digest_hex(digest)};
  std::error_code error;
  if (!fs::is_regular_file(artifact.manifest(), error) ||
      !fs::is_regular_file(artifact.layer_index(), error))
    return std::nullopt;
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

std::string ArtifactCache::verify(const CachedArtifact& artifact, Layer* loaded) const {
  std::optional<std::string> manifest = read_file_if_exists(artifact.manifest());
  if (!manifest || sha256_digest(*manifest) != artifact.digest)
    return "manifest.json does not have the digest " + artifact.digest;
  std::optional<LayerIndex> index =
      LayerIndex::decode(read_file_if_exists(artifact.layer_index()).value_or(""));
  if (!index) return "layer.index is missing or damaged";
  // Read whole for its digest, then let go: reads take the parts they need.
  std::optional<std::string> blob = read_file_if_exists(artifact.layer());
  if (!blob) return "the layer is missing";
  if (sha256_digest(*blob) != index->blob_digest)
    return "the layer does not have the digest " + index->blob_digest;
  if (loaded) *loaded = Layer{artifact.layer(), std::move(*index)};
  return "";
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
  std::string away = temporary_directory(root_ + "/tmp/retired-");
  std::error_code error;
  fs::rename(dir, away, error);  // onto the empty directory: one step
  if (error) throw Error(dir + ": cannot move it out of the cache: " + error.message());
  return away;
}

std::string ArtifactCache::record_path(const Reference& ref) const {
  std::string name = ref.tag.empty() ? "sha256-" + digest_hex(ref.digest) : ref.tag;
  return root_ + "/refs/" + ref.registry + "/" + ref.repository + "/" + name + ".json";
}

std::optional<RefRecord> ArtifactCache::resolve(const Reference& ref) const {
  std::string path = record_path(ref);
  json record = json::parse(read_text(path), nullptr, false);
  if (!record.is_object() || !record.value("digest", json()).is_string()) return std::nullopt;
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now
  return RefRecord{record.value("url", ""), record.value("digest", ""), record.value("pulled", ""),
                   std::chrono::system_clock::now()};
}

void ArtifactCache::record(const Reference& ref, const std::string& digest) {
  json record = {{"url", ref.str()},
                 {"digest", digest},
                 {"pulled", rfc3339(std::chrono::system_clock::now())}};
  write_file_atomically(record_path(ref), record.dump(2) + "\n");
}

std::unique_ptr<CacheLock> ArtifactCache::lock(std::chrono::seconds timeout) {
  create_directories(root_);
  std::string path = root_ + "/.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      close(fd);
      throw Error(path + ": cannot lock: " + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      close(fd);
      throw Error(path + ": another fluxopctl has held the cache for " +
                  std::to_string(timeout.count()) + "s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::make_unique<CacheLock>(fd);
}

CachedArtifact ArtifactCache::add(const std::string& digest,
                                  const std::function<void(const std::string&)>& fill) {
  if (std::optional<CachedArtifact> present = find(digest)) return *present;
  create_directories(root_ + "/tmp");
  create_directories(root_ + "/sha256");
  std::string pattern = temporary_directory(root_ + "/tmp/entry-");
  try {
    fill(pattern);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(pattern, ignored);
    throw;
  }
  CachedArtifact artifact{digest, root_ + "/sha256/" + digest_hex(digest)};
  std::error_code error;
  // What is there is no entry find() accepts (an older fluxopctl's layout,
  // or a part of one): moved away, as discard() moves a damaged entry.
  if (fs::exists(artifact.dir, error)) fs::remove_all(retire(artifact.dir), error);
  fs::rename(pattern, artifact.dir, error);
  if (error) {
    fs::remove_all(pattern, error);
    throw Error(artifact.dir + ": cannot add to the cache: " + error.message());
  }
  return artifact;
}

std::vector<std::pair<std::string, RefRecord>> ArtifactCache::records() const {
  std::vector<std::pair<std::string, RefRecord>> out;
  std::error_code error;
  fs::path refs = root_ + "/refs";
  if (!fs::is_directory(refs, error)) return out;
  for (auto it = fs::recursive_directory_iterator(refs, error); !error && it != fs::end(it);
       it.increment(error)) {
    if (!it->is_regular_file() || it->path().extension() != ".json") continue;
    json record = json::parse(read_text(it->path().string()), nullptr, false);
    if (!record.is_object() || !record.value("digest", json()).is_string()) continue;
    out.emplace_back(it->path().string(),
                     RefRecord{record.value("url", ""), record.value("digest", ""),
                               record.value("pulled", ""), modified(it->path())});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<ArtifactCache::Entry> ArtifactCache::list() const {
  std::vector<Entry> entries;
  std::error_code error;
  fs::path artifacts = root_ + "/sha256";
  if (!fs::is_directory(artifacts, error)) return entries;
  std::vector<std::pair<std::string, RefRecord>> all_records = records();
  for (const fs::directory_entry& dir : fs::directory_iterator(artifacts, error)) {
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
  std::unique_ptr<CacheLock> held = lock();
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
      retire(dir.string());
      removed.push_back(digest);
    }
    close(fd);
  }
  fs::remove_all(root_ + "/tmp", error);  // writers hold the lock: nothing there is in use
  std::sort(removed.begin(), removed.end());
  return removed;
}

std::string ArtifactCache::extract(const CachedArtifact& artifact, const Layer& layer) {
  std::error_code error;
  if (fs::is_directory(artifact.content(), error)) return artifact.content();
  std::string pattern = temporary_directory(artifact.dir + "/.content-");
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
