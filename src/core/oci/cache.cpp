#include "core/oci/cache.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/file.h"

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

}  // namespace

CacheLock::~CacheLock() {
  flock(fd_, LOCK_UN);
  close(fd_);
}

ArtifactCache::ArtifactCache(std::string root) : root_(std::move(root)) {}

std::string ArtifactCache::default_root(const std::string& xdg_cache_home,
                                        const std::string& home) {
  fs::path base;
  if (fs::path(xdg_cache_home).is_absolute()) {
    base = xdg_cache_home;
  } else if (!home.empty()) {
    base = fs::path(home) / ".cache";
  } else {
    return "";
  }
  return (base / "fluxopctl" / "oci").string();
}

std::optional<CachedArtifact> ArtifactCache::find(const std::string& digest) const {
  CachedArtifact artifact{digest, root_ + "/sha256/" + digest_hex(digest)};
  std::error_code error;
  if (!fs::is_directory(artifact.content(), error) ||
      !fs::is_regular_file(artifact.manifest(), error))
    return std::nullopt;
  return artifact;
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
  std::error_code error;
  fs::create_directories(root_, error);
  std::string path = root_ + "/.lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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
  fs::create_directories(root_ + "/tmp");
  fs::create_directories(root_ + "/sha256");
  std::string pattern = root_ + "/tmp/entry-XXXXXX";
  if (!mkdtemp(pattern.data())) throw Error(root_ + "/tmp: cannot create a directory");
  try {
    fill(pattern);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(pattern, ignored);
    throw;
  }
  CachedArtifact artifact{digest, root_ + "/sha256/" + digest_hex(digest)};
  std::error_code error;
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
  for (const Entry& entry : list()) {
    if (kept.contains(entry.artifact.digest)) continue;
    // Renamed away first: a reader never sees a half-removed entry as complete.
    std::string doomed = root_ + "/tmp/prune-" + digest_hex(entry.artifact.digest);
    fs::create_directories(root_ + "/tmp");
    fs::rename(entry.artifact.dir, doomed);
    removed.push_back(entry.artifact.digest);
  }
  std::error_code error;
  fs::remove_all(root_ + "/tmp", error);  // writers hold the lock: nothing there is in use
  return removed;
}

}  // namespace fluxop::oci
