#include "core/kustomize/build.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/error.h"
#include "core/file.h"
#include "core/kustomize/kustomization.h"
#include "core/kustomize/legacy_order.h"
#include "core/kustomize/name_reference.h"
#include "core/kustomize/scope.h"
#include "core/kustomize/string_annotations.h"
#include "core/kustomize/target.h"
#include "core/kustomize/transforms.h"

namespace fluxop::kustomize {

namespace fs = std::filesystem;

void Accumulator::add(ResourceList&& from, const Context& ctx, const std::string& field) {
  for (Resource& r : from) {
    ResourceId id = r.id();
    std::string key = ResourceId{id.gvk, id.name, effective_namespace(id)}.key();
    auto [added, fresh] = origins_.emplace(std::move(key), r.origin());
    if (!fresh) {
      ctx.fail(field, "resource " + id.to_string() + " from " + r.origin() +
                          " is already defined in " + added->second);
    }
    resources_.push_back(std::move(r));
  }
}

namespace {

void add_object(ResourceList& out, yaml::Node&& doc, const std::string& origin, int index) {
  std::string where = origin + ": document " + std::to_string(index + 1);
  if (!doc.is_map())
    throw Error(where + ": expected a Kubernetes object (a map), got " +
                std::string(yaml::kind_name(doc)));
  std::string kind = doc.string_at({"kind"});
  if (kind.empty()) throw Error(where + ": missing kind");
  // A List's items are resources of their own.
  if (kind.ends_with("List") && doc.get("items")) {
    yaml::Node* items = doc.get("items");
    if (!items->is_sequence()) throw Error(where + ": items: must be a sequence");
    for (yaml::Node& item : items->items()) add_object(out, std::move(item), origin, index);
    return;
  }
  if (doc.string_at({"metadata", "name"}).empty()) throw Error(where + ": missing metadata.name");
  out.emplace_back(std::move(doc), origin);
}

}  // namespace

ResourceList load_resources(std::string_view text, const std::string& origin,
                            yaml::ParseCache* parse_cache, yaml::NodeBudget& budget) {
  auto docs = yaml::parse_documents(text, origin, parse_cache);
  ResourceList out;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    try {
      budget.charge(docs[i]);
    } catch (const Error& e) {
      throw Error(origin + ": document " + std::to_string(i + 1) + ": " + e.what());
    }
    if (!docs[i].is_null()) add_object(out, std::move(docs[i]), origin, static_cast<int>(i));
  }
  return out;
}

namespace {

bool is_remote(std::string_view entry) {
  return entry.find("://") != std::string_view::npos || entry.starts_with("github.com/") ||
         entry.starts_with("git@") || entry.starts_with("gitlab.com/") ||
         entry.starts_with("bitbucket.org/");
}

class Builder {
 public:
  Builder(const FileSystem& files, yaml::ParseCache* parse_cache)
      : files_(files), parse_cache_(parse_cache) {}

  // The resources of the kustomization in `dir`, which depend on nothing
  // but its files: a base that several paths reach (a diamond) is built
  // once more when reached again, and kept for every later path, so that
  // its build is not repeated for each of the paths, whose number doubles
  // with each level. A base reached once is not kept: a chain of bases
  // would hold a copy of the build at each level.
  ResourceList accumulate(const std::string& dir) {
    if (auto built = shared_.find(dir); built != shared_.end()) {
      for (const Resource& resource : built->second) budget_->charge(resource.object());
      return built->second;
    }
    ResourceList resources = build_kustomization(dir);
    if (!reached_.insert(dir).second) shared_.emplace(dir, resources);
    return resources;
  }

 private:
  ResourceList build_kustomization(const std::string& dir) {
    std::string key = files_.resolve(dir);
    if (std::find(stack_.begin(), stack_.end(), key) != stack_.end()) {
      throw Error(dir + ": cycle detected: the kustomization includes itself");
    }
    stack_.push_back(key);
    Kustomization k = load_kustomization(files_, dir, is_transform_field);
    k.context.budget = budget_;
    Accumulator accumulated;
    for (std::string_view list : {"resources", "bases"}) {
      if (const yaml::Node* entries = k.spec.get(list)) {
        accumulate_entries(accumulated, *entries, k.context, std::string(list));
      }
    }
    ResourceList resources = std::move(accumulated).take();
    apply_transforms(resources, read_transforms(k.spec, k.context), k.context);
    stack_.pop_back();
    return resources;
  }

  void accumulate_entries(Accumulator& accumulated, const yaml::Node& entries, const Context& ctx,
                          const std::string& list) {
    if (entries.is_null()) return;
    if (!entries.is_sequence()) ctx.fail(list, "must be a list of file or directory paths");
    for (std::size_t i = 0; i < entries.size(); ++i) {
      std::string field = list + "[" + std::to_string(i) + "]";
      const yaml::Node& entry = entries.items()[i];
      if (!entry.is_string() || entry.text().empty()) ctx.fail(field, "must be a path");
      accumulated.add(load_entry(ctx, entry.text(), field), ctx, field);
    }
  }

  ResourceList load_entry(const Context& ctx, const std::string& entry, const std::string& field) {
    if (is_remote(entry))
      ctx.fail(field, "remote resources are not supported by fluxopctl: " + quote(entry));
    std::string path = (fs::path(ctx.dir) / entry).lexically_normal().string();
    FileSystem::Kind kind = files_.kind(path);
    if (kind == FileSystem::Kind::Directory) return accumulate(path);
    if (kind == FileSystem::Kind::Missing)
      ctx.fail(field, "no such file or directory: " + quote(entry));
    return load_resources(ctx.read(entry, field), path, parse_cache_, *budget_);
  }

  const FileSystem& files_;
  yaml::ParseCache* parse_cache_;
  std::vector<std::string> stack_;
  // Directories built, and the builds of those reached more than once.
  std::unordered_set<std::string> reached_;
  std::unordered_map<std::string, ResourceList> shared_;
  // One for the whole build, whichever kustomization loads or patches.
  std::shared_ptr<yaml::NodeBudget> budget_ = std::make_shared<yaml::NodeBudget>();
};

}  // namespace

void finish_build(ResourceList& resources, Order order) {
  // Back references are fixed once, after every level has renamed.
  fix_name_references(resources);
  stringify_annotations(resources);
  if (order == Order::legacy) sort_legacy(resources);
}

ResourceList build(const std::string& dir, const FileSystem& files, yaml::ParseCache* parse_cache) {
  BoundedReads bounded(files, kMaxInputBytes);
  ResourceList resources = Builder(bounded, parse_cache).accumulate(dir);
  finish_build(resources, Order::legacy);
  return resources;
}

}  // namespace fluxop::kustomize
