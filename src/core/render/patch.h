// Building the renderer's kustomize patches in code: a target selector and
// either JSON 6902 operations or a strategic merge patch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/kustomize/patches.h"
#include "core/yaml/node.h"

namespace fluxop::render {

using kustomize::Patch;

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

Patch json_patch(const Target& target, const std::vector<yaml::Node>& operations);
Patch merge_patch(const Target& target, yaml::Node patch);

// A strategic merge patch of every Deployment's pod template; `metadata`
// is the patch object's own (a name, at least).
Patch deployment_template_patch(yaml::Node metadata, yaml::Node pod_template);

// "(a|b|c)": a target name matching any of `names`.
std::string any_of(const std::vector<std::string>& names);

}  // namespace fluxop::render
