#include "core/adopt/installation.h"

#include <array>
#include <filesystem>
#include <utility>

#include "core/error.h"
#include "core/kustomize/build.h"
#include "core/kustomize/kustomization.h"
#include "core/kustomize/patches.h"
#include "core/yaml/budget.h"
#include "core/yaml/emit.h"

namespace fluxop::adopt {

namespace {

namespace fs = std::filesystem;
using yaml::Node;

constexpr std::array<std::string_view, 3> kPatchFields = {"patches", "patchesStrategicMerge",
                                                          "patchesJson6902"};

// A file system that serves one file with other content: the bootstrap
// kustomization without its patches, built from the same files.
class ReplacedFile : public FileSystem {
 public:
  ReplacedFile(const FileSystem& files, std::string path, std::string content)
      : files_(files), path_(files.resolve(path)), content_(std::move(content)) {}

  Kind kind(const std::string& path) const override { return files_.kind(path); }
  std::vector<std::string> list(const std::string& dir, Kind kind) const override {
    return files_.list(dir, kind);
  }
  std::string read(const std::string& path) const override {
    return files_.resolve(path) == path_ ? content_ : files_.read(path);
  }
  std::string resolve(const std::string& path) const override { return files_.resolve(path); }

 private:
  const FileSystem& files_;
  std::string path_;
  std::string content_;
};

// The objects of the bootstrap's two files: the kustomization's other
// resources are the user's, and stay in the repository.
std::vector<Node> objects_of(kustomize::ResourceList&& resources) {
  std::vector<Node> objects;
  objects.reserve(resources.size());
  for (kustomize::Resource& resource : resources) {
    std::string file = fs::path(resource.origin()).filename().string();
    if (file != kComponentsFile && file != kSyncFile) continue;
    objects.push_back(std::move(resource.object()));
  }
  return objects;
}

std::string indexed(std::string_view field, std::size_t index) {
  return std::string(field) + "[" + std::to_string(index) + "]";
}

// A .spec.kustomize.patches item: the patch text and the target as written.
Node instance_patch(std::string text, const Node* target) {
  Node patch = Node::map();
  patch.append("patch", Node::string(std::move(text)));
  if (target && target->is_map() && target->size() > 0) patch.append("target", *target);
  return patch;
}

// The patch text of a `patches` or `patchesJson6902` entry: inline or the
// file its path names.
std::string entry_text(const Node& entry, const kustomize::Context& context,
                       const std::string& field) {
  if (const Node* inline_patch = entry.get("patch"); inline_patch && inline_patch->is_scalar()) {
    return inline_patch->text();
  }
  const Node* path = entry.get("path");
  if (!path || !path->is_scalar()) context.fail(field, "has neither patch nor path");
  return context.read(path->text(), field + ".path");
}

std::vector<DirectoryPatch> directory_patches(const kustomize::Kustomization& k) {
  std::vector<DirectoryPatch> out;
  const std::string file = fs::path(k.context.file).filename().string();
  for (std::string_view field : kPatchFields) {
    const Node* entries = k.spec.get(field);
    if (!entries || !entries->is_sequence()) continue;
    for (std::size_t i = 0; i < entries->items().size(); ++i) {
      const Node& entry = entries->items()[i];
      std::string at = indexed(field, i);
      if (field == "patchesStrategicMerge") {
        // Each entry a file or inline YAML of one or more patches, read as
        // kustomize reads them; each becomes a targetless patch.
        Node one = Node::sequence();
        one.push_back(entry);
        for (const kustomize::Patch& patch :
             kustomize::read_patches_strategic_merge(one, k.context)) {
          for (const Node& merge : patch.merges) {
            out.push_back({instance_patch(yaml::emit(merge), nullptr), file + ": " + at});
          }
        }
        continue;
      }
      if (!entry.is_map()) k.context.fail(at, "is not a map");
      out.push_back({instance_patch(entry_text(entry, k.context, at), entry.get("target")),
                     file + ": " + at});
    }
  }
  return out;
}

Node without_patches(const Node& spec) {
  Node copy = spec;
  for (std::string_view field : kPatchFields) copy.remove(field);
  return copy;
}

}  // namespace

Installation read_directory(const std::string& dir, const FileSystem& files,
                            yaml::ParseCache* parse_cache) {
  if (files.kind(dir) != FileSystem::Kind::Directory) throw Error(dir + ": not a directory");
  std::string components = (fs::path(dir) / std::string(kComponentsFile)).string();
  if (files.kind(components) != FileSystem::Kind::File) {
    throw Error(dir + ": no " + std::string(kComponentsFile) +
                ": not a directory written by flux bootstrap or flux install --export");
  }
  Installation installation;
  installation.origin = dir;
  bool has_kustomization = false;
  for (std::string_view name : {"kustomization.yaml", "kustomization.yml", "Kustomization"}) {
    if (files.kind((fs::path(dir) / std::string(name)).string()) == FileSystem::Kind::File) {
      has_kustomization = true;
    }
  }
  if (!has_kustomization) {
    // `flux install --export > gotk-components.yaml` and perhaps the sync.
    yaml::NodeBudget budget;
    kustomize::ResourceList resources;
    for (std::string_view name : {kComponentsFile, kSyncFile}) {
      std::string path = (fs::path(dir) / std::string(name)).string();
      if (files.kind(path) != FileSystem::Kind::File) continue;
      for (kustomize::Resource& resource :
           kustomize::load_resources(files.read(path), path, parse_cache, budget)) {
        resources.push_back(std::move(resource));
      }
    }
    installation.objects = objects_of(std::move(resources));
    installation.unpatched = installation.objects;
    return installation;
  }
  kustomize::Kustomization k =
      kustomize::load_kustomization(files, dir, [](std::string_view) { return true; });
  installation.objects = objects_of(kustomize::build(dir, files, parse_cache));
  installation.patches = directory_patches(k);
  if (installation.patches.empty()) {
    installation.unpatched = installation.objects;
  } else {
    ReplacedFile unpatched(files, k.context.file, yaml::emit(without_patches(k.spec)));
    installation.unpatched = objects_of(kustomize::build(dir, unpatched, parse_cache));
  }
  return installation;
}

}  // namespace fluxop::adopt
