// Rendering a kustomization directory, as `kubectl kustomize DIR` does, and
// the steps of it that a kustomization composed in code shares.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/file_system.h"
#include "core/kustomize/context.h"
#include "core/kustomize/resource.h"
#include "core/yaml/parse_cache.h"

namespace fluxop::kustomize {

// The resources of the kustomization in `dir` of `files`, transformed, with
// name references fixed and in kustomize's legacy order; resource files are
// parsed through `parse_cache` when given.
ResourceList build(const std::string& dir, const FileSystem& files, yaml::ParseCache* parse_cache);

// The objects of a YAML stream, Lists expanded, parsed through `parse_cache`
// when given and charged to `budget`; `origin` names the stream in errors.
ResourceList load_resources(std::string_view text, const std::string& origin,
                            yaml::ParseCache* parse_cache, yaml::NodeBudget& budget);

// Resources as a kustomization accumulates them, refusing an id added
// before (as kustomize does: an empty namespace of a namespaced kind is
// "default"). The ids are indexed: a render adds thousands of objects, one
// shard at a time, and a search of those before would grow with the square.
class Accumulator {
 public:
  // Adds `from`; an id already added is an error naming `field`.
  void add(ResourceList&& from, const Context& context, const std::string& field);
  ResourceList take() && { return std::move(resources_); }

 private:
  ResourceList resources_;
  std::unordered_map<std::string, std::string> origins_;  // by id
};

// What a build does once every kustomization has transformed its
// resources: name references followed, annotations made strings and, for
// the kustomize CLI, its legacy order. Flux's builds (fluxcd/pkg/kustomize,
// which the operator's revision digests) keep the order accumulated.
enum class Order { legacy, accumulated };
void finish_build(ResourceList& resources, Order order);

}  // namespace fluxop::kustomize
