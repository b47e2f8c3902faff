// Where a kustomize build reads its files: the real directory tree for
// `fluxopctl kustomize DIR`, or a tree held in memory (tests, generated
// kustomizations), so the engine itself never touches the disk directly.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace fluxop::kustomize {

class FileSystem {
 public:
  enum class Kind { Missing, File, Directory };

  virtual ~FileSystem() = default;
  virtual Kind kind(const std::string& path) const = 0;
  // The file's content; throws fluxop::Error "<path>: <reason>".
  virtual std::string read(const std::string& path) const = 0;
  // The absolute path with "..", "." and symbolic links resolved: what the
  // load restriction and the cycle check compare.
  virtual std::string resolve(const std::string& path) const = 0;
};

// The process's file system.
const FileSystem& disk();

// Reads through another file system, at most `budget` bytes in all, so
// that a build's whole input is bounded as each of its files is.
class BoundedReads : public FileSystem {
 public:
  BoundedReads(const FileSystem& files, std::size_t budget) : files_(files), left_(budget) {}

  Kind kind(const std::string& path) const override { return files_.kind(path); }
  std::string read(const std::string& path) const override;
  std::string resolve(const std::string& path) const override { return files_.resolve(path); }

 private:
  const FileSystem& files_;
  mutable std::size_t left_;
};

// Files by absolute path; directories are the parents of the files added.
class MemoryFileSystem : public FileSystem {
 public:
  void add(const std::string& path, std::string content);

  Kind kind(const std::string& path) const override;
  std::string read(const std::string& path) const override;
  std::string resolve(const std::string& path) const override;

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace fluxop::kustomize
