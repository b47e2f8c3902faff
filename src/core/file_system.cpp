#include "core/file_system.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "core/error.h"
#include "core/file.h"

namespace fluxop {

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
  std::vector<std::string> list(const std::string& dir, Kind kind) const override {
    std::vector<std::string> out;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
      if (kind == Kind::Directory ? entry.is_directory(error) : entry.is_regular_file(error))
        out.push_back(entry.path().filename().string());
    }
    if (error) throw Error(dir + ": " + error.message());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string read(const std::string& path) const override { return read_input_file(path); }
  std::string resolve(const std::string& path) const override {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) throw Error(path + ": cannot resolve path: " + ec.message());
    return resolved.string();
  }
};

class Subtree : public FileSystem {
 public:
  Subtree(std::shared_ptr<const FileSystem> files, std::string root)
      : files_(std::move(files)), root_(std::move(root)) {}

  Kind kind(const std::string& path) const override { return files_->kind(at(path)); }
  std::vector<std::string> list(const std::string& dir, Kind kind) const override {
    return files_->list(at(dir), kind);
  }
  std::string read(const std::string& path) const override { return files_->read(at(path)); }
  std::string resolve(const std::string& path) const override { return files_->resolve(at(path)); }

 private:
  std::string at(const std::string& path) const { return (fs::path(root_) / path).string(); }

  std::shared_ptr<const FileSystem> files_;
  std::string root_;
};

}  // namespace

const FileSystem& disk() {
  static const Disk instance;
  return instance;
}

std::shared_ptr<const FileSystem> shared_disk() {
  // It lives as long as the process: nothing owns it.
  return std::shared_ptr<const FileSystem>(std::shared_ptr<void>(), &disk());
}

std::shared_ptr<const FileSystem> subtree(std::shared_ptr<const FileSystem> files,
                                          std::string root) {
  return std::make_shared<Subtree>(std::move(files), std::move(root));
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

std::vector<std::string> MemoryFileSystem::list(const std::string& dir, Kind kind) const {
  Kind found = this->kind(dir);
  if (found != Kind::Directory)
    throw Error(dir + (found == Kind::File ? ": not a directory" : ": no such directory"));
  std::string key = resolve(dir);
  std::string prefix = key == "/" ? key : key + "/";
  std::set<std::string> names;
  for (auto file = files_.lower_bound(prefix);
       file != files_.end() && file->first.starts_with(prefix); ++file) {
    std::string rest = file->first.substr(prefix.size());
    std::size_t slash = rest.find('/');
    Kind entry = slash == std::string::npos ? Kind::File : Kind::Directory;
    if (entry == kind) names.insert(rest.substr(0, slash));
  }
  return {names.begin(), names.end()};
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

}  // namespace fluxop
