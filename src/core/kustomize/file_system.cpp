#include "core/kustomize/file_system.h"

#include <filesystem>

#include "core/error.h"
#include "core/file.h"
#include "core/yaml/parse.h"

namespace fluxop::kustomize {

namespace fs = std::filesystem;

namespace {

class Disk : public FileSystem {
 public:
  Kind kind(const std::string& path) const override {
    std::error_code ec;
    fs::file_status status = fs::status(path, ec);
    if (fs::is_directory(status)) return Kind::Directory;
    return fs::exists(status) ? Kind::File : Kind::Missing;
  }
  std::string read(const std::string& path) const override { return yaml::read_file(path); }
  std::string resolve(const std::string& path) const override {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) throw Error(path + ": cannot resolve path: " + ec.message());
    return resolved.string();
  }
};

}  // namespace

const FileSystem& disk() {
  static const Disk instance;
  return instance;
}

std::string BoundedReads::read(const std::string& path) const {
  std::string text = files_.read(path);
  if (text.size() > left_)
    throw Error(path + ": the files of the build are larger than " +
                std::to_string(kMaxInputBytes >> 20) + " MiB in all");
  left_ -= text.size();
  return text;
}

void MemoryFileSystem::add(const std::string& path, std::string content) {
  files_[resolve(path)] = std::move(content);
}

FileSystem::Kind MemoryFileSystem::kind(const std::string& path) const {
  std::string key = resolve(path);
  if (files_.contains(key)) return Kind::File;
  // A directory is a proper prefix of some file's path.
  std::string prefix = key == "/" ? key : key + "/";
  auto next = files_.lower_bound(prefix);
  return next != files_.end() && next->first.starts_with(prefix) ? Kind::Directory : Kind::Missing;
}

std::string MemoryFileSystem::read(const std::string& path) const {
  auto found = files_.find(resolve(path));
  if (found != files_.end()) return found->second;
  throw Error(path + (kind(path) == Kind::Directory ? ": is a directory" : ": no such file"));
}

std::string MemoryFileSystem::resolve(const std::string& path) const {
  std::string normal = (fs::path("/") / path).lexically_normal().string();
  if (normal.size() > 1 && normal.ends_with('/')) normal.pop_back();
  return normal;
}

}  // namespace fluxop::kustomize
