// What a transformer knows about the kustomization it serves: where it is,
// for reading the files it names and for error messages. A kustomization
// composed in code has no directory and reads no files.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/file_system.h"
#include "core/kustomize/resource.h"
#include "core/yaml/budget.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

struct Context {
  std::string dir;   // the kustomization directory
  std::string file;  // the kustomization file, as errors name it
  const FileSystem* files = &disk();
  // The nodes the whole build loads and makes, shared by the contexts of
  // its kustomizations: what a patch inserts is charged before it is copied.
  std::shared_ptr<yaml::NodeBudget> budget = std::make_shared<yaml::NodeBudget>();

  // Reads a file named relative to `dir`; refuses paths that leave the
  // kustomization root the way kustomize's loader does (absolute paths and
  // ".." are allowed only inside the tree being built).
  std::string read(std::string_view relative_path, std::string_view field) const;
  // Throws fluxop::Error "<file>: <field>: <message>".
  [[noreturn]] void fail(std::string_view field, std::string_view message) const;
};

}  // namespace fluxop::kustomize
