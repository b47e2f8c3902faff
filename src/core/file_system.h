// Where fluxopctl reads a tree of files from: a kustomization directory, a
// Flux distribution (a directory, or an artifact's layer in the cache). The
// disk form reads through core/file.h's bounded reads; the in-memory form
// serves tests and generated trees, so that what reads a tree never touches
// the disk itself.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fluxop {

class FileSystem {
 public:
  enum class Kind { Missing, File, Directory };

  virtual ~FileSystem() = default;
  virtual Kind kind(const std::string& path) const = 0;
  // The names of the entries of the directory `dir` that are of `kind`
  // (File: regular files), sorted; throws fluxop::Error naming `dir` when it
  // cannot be listed.
  virtual std::vector<std::string> list(const std::string& dir, Kind kind) const = 0;
  // The file's content; throws fluxop::Error "<path>: <reason>".
  virtual std::string read(const std::string& path) const = 0;
  // The absolute path with "..", "." and symbolic links resolved: what the
  // kustomize load restriction and cycle check compare.
  virtual std::string resolve(const std::string& path) const = 0;
};

// The process's file system; relative paths are under the working directory.
const FileSystem& disk();
// The same, for what keeps the file system it reads (a distribution).
std::shared_ptr<const FileSystem> shared_disk();

// The directory `root` of `files`: paths are relative to it, and errors
// name root/path.
std::shared_ptr<const FileSystem> subtree(std::shared_ptr<const FileSystem> files,
                                          std::string root);

// Reads through another file system, at most `budget` bytes in all, so
// that a build's whole input is bounded as each of its files is.
class BoundedReads : public FileSystem {
 public:
  BoundedReads(const FileSystem& files, std::size_t budget) : files_(files), left_(budget) {}

  Kind kind(const std::string& path) const override { return files_.kind(path); }
  std::vector<std::string> list(const std::string& dir, Kind kind) const override {
    return files_.list(dir, kind);
  }
  std::string read(const std::string& path) const override;
  std::string resolve(const std::string& path) const override { return files_.resolve(path); }

 private:
  const FileSystem& files_;
  mutable std::size_t left_;
};

// Files by path, relative paths under "/"; directories are the parents of
// the files added.
class MemoryFileSystem : public FileSystem {
 public:
  void add(const std::string& path, std::string content);

  Kind kind(const std::string& path) const override;
  std::vector<std::string> list(const std::string& dir, Kind kind) const override;
  std::string read(const std::string& path) const override;
  std::string resolve(const std::string& path) const override;

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace fluxop
