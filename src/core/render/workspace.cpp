#include "core/render/workspace.h"

#include <stdlib.h>

#include <fstream>

#include "core/error.h"

namespace fluxop::render {

namespace fs = std::filesystem;

Workspace::Workspace() {
  std::string pattern = (fs::temp_directory_path() / "fluxopctl-build-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw Error("cannot create a temporary directory in " + pattern);
  dir_ = pattern;
}

Workspace::~Workspace() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

void Workspace::write(const std::string& name, std::string_view text) const {
  fs::path path = fs::path(dir_) / name;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw Error("cannot write " + path.string());
}

}  // namespace fluxop::render
