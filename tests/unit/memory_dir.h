// A directory tree held in memory, for the tests of what reads a tree
// through a FileSystem (a distribution, a kustomization): no temporary
// directory, nothing left behind.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/file_system.h"

namespace fluxop::testing {

class MemoryDir {
 public:
  explicit MemoryDir(std::string path = "/mem") : path_(std::move(path)) {}

  const std::string& str() const { return path_; }
  // Writes `text` to the file `name` under the directory.
  void write(const std::string& name, std::string_view text) const {
    files_->add(path_ + "/" + name, std::string(text));
  }
  std::shared_ptr<const FileSystem> files() const { return files_; }

 private:
  std::string path_;
  std::shared_ptr<MemoryFileSystem> files_ = std::make_shared<MemoryFileSystem>();
};

}  // namespace fluxop::testing
