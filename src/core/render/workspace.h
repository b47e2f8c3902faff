// A temporary directory holding the kustomization the renderer builds,
// removed when the workspace goes out of scope.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace fluxop::render {

class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const std::string& dir() const { return dir_; }

  // Writes `text` to `name` (relative, parents created).
  void write(const std::string& name, std::string_view text) const;

 private:
  std::string dir_;
};

}  // namespace fluxop::render
