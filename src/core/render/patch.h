// Building the entries of a kustomization's `patches` list in code: a target
// selector and a patch, either a JSON 6902 operation list or a strategic
// merge patch, kept as the YAML text kustomize expects.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::render {

struct Target {
  std::string kind{};
  std::string name{};  // a name or a regular expression such as "(a|b)"
  std::string annotation_selector{};
  bool apps_v1 = false;  // also select group apps, version v1
};

// One JSON 6902 operation.
yaml::Node add(std::string_view path, yaml::Node value);
yaml::Node replace(std::string_view path, yaml::Node value);
yaml::Node remove(std::string_view path);

// The path of a Deployment's first container's args, with an index or "-".
std::string arg_path(std::string_view index);
// Appends one argument to a Deployment's first container.
yaml::Node add_arg(std::string_view argument);

// `{target, patch}` with the operations as YAML text.
yaml::Node json_patch(const Target& target, const std::vector<yaml::Node>& operations);
// `{target, patch}` with a strategic merge patch as YAML text.
yaml::Node merge_patch(const Target& target, const yaml::Node& patch);

// "(a|b|c)": a target name matching any of `names`.
std::string any_of(const std::vector<std::string>& names);

}  // namespace fluxop::render
