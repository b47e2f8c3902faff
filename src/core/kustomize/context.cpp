#include "core/kustomize/context.h"

#include <filesystem>

#include "core/error.h"

namespace fluxop::kustomize {

namespace fs = std::filesystem;

std::string Context::read(std::string_view relative_path, std::string_view field) const {
  // kustomize's default load restriction: files must lie in or below the
  // kustomization root (only directories of nested kustomizations may not).
  if (dir.empty()) fail(field, "reads no files: " + std::string(relative_path));
  fs::path root;
  fs::path target;
  try {
    root = files->resolve(dir);
    target = files->resolve((fs::path(dir) / std::string(relative_path)).string());
  } catch (const Error& error) {
    fail(field, error.what());
  }
  auto rel = target.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") {
    fail(field,
         "security; file '" + target.string() + "' is not in or below '" + root.string() + "'");
  }
  try {
    return files->read(target.string());
  } catch (const Error& error) {
    fail(field, error.what());
  }
}

void Context::fail(std::string_view field, std::string_view message) const {
  std::string text = file;
  if (!field.empty()) text += ": " + std::string(field);
  throw Error(text + ": " + std::string(message));
}

}  // namespace fluxop::kustomize
