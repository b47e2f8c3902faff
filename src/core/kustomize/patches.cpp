#include "core/kustomize/patches.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/kustomize/json_patch.h"
#include "core/kustomize/strategic_merge.h"
#include "core/kustomize/target.h"
#include "core/names.h"
#include "core/yaml/budget.h"
#include "core/yaml/json.h"
#include "core/yaml/parse.h"
#include "core/yaml/scalar.h"

namespace fluxop::kustomize {

namespace {

using yaml::Node;

// One entry of `patches` or `patchesJson6902` as written, its patch text
// loaded.
struct Entry {
  std::string field;   // "patches[2]", for errors
  std::string source;  // the patch file, or "patch" when inline
  std::string text;
  std::optional<Target> target;
  bool allow_name_change = false;
  bool allow_kind_change = false;
};

const std::vector<Node>& entries_of(const Node& field, std::string_view name,
                                    const Context& context) {
  static const std::vector<Node> none;
  if (field.is_null()) return none;
  if (!field.is_sequence()) {
    context.fail(name, "must be a list, not a " + std::string(yaml::kind_name(field)));
  }
  return field.items();
}

std::string indexed(std::string_view name, std::size_t index) {
  return std::string(name) + "[" + std::to_string(index) + "]";
}

std::string string_of(const Node& value, const Context& context, const std::string& field) {
  if (!value.is_null() && !value.is_string()) context.fail(field, "must be a string");
  return value.text();
}

std::string trimmed(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1));
}

void read_options(Entry& entry, const Node& options, const Context& context,
                  const std::string& field) {
  if (options.is_null()) return;
  if (!options.is_map()) context.fail(field, "must be a map");
  for (const auto& [key, value] : options.entries()) {
    std::string at = field + "." + key;
    bool* option = key == "allowNameChange"   ? &entry.allow_name_change
                   : key == "allowKindChange" ? &entry.allow_kind_change
                                              : nullptr;
    if (!option) context.fail(at, "unknown option (expected allowNameChange or allowKindChange)");
    if (!value.is_scalar() || value.tag() != yaml::Tag::Bool) context.fail(at, "must be a boolean");
    *option = value.text() == "true";
  }
}

Entry read_entry(const Node& item, const Context& context, const std::string& field) {
  if (!item.is_map()) {
    context.fail(
        field, "must be a map with a path or a patch, not a " + std::string(yaml::kind_name(item)));
  }
  Entry entry{field, "", "", std::nullopt, false, false};
  std::string path;
  std::string patch;
  for (const auto& [key, value] : item.entries()) {
    std::string at = field + "." + key;
    if (key == "path") {
      path = string_of(value, context, at);
    } else if (key == "patch") {
      patch = trimmed(string_of(value, context, at));
    } else if (key == "target") {
      if (!value.is_null()) entry.target = parse_target(value, context, at);
    } else if (key == "options") {
      read_options(entry, value, context, at);
    } else {
      context.fail(at, "unknown field (expected path, patch, target or options)");
    }
  }
  if (!path.empty() && !patch.empty()) context.fail(field, "path and patch can't both be set");
  if (path.empty() && patch.empty()) context.fail(field, "needs a path or a patch");
  entry.source = path.empty() ? "patch" : path;
  entry.text = path.empty() ? patch : context.read(path, field + ".path");
  return entry;
}

std::vector<Node> documents_of(std::string_view text, const std::string& source,
                               const Context& context, const std::string& field) {
  try {
    return yaml::parse_documents(text, source);
  } catch (const Error& e) {
    context.fail(field, e.what());
  }
}

bool is_empty(const Node& document) {
  return document.is_null() ||
         ((document.is_map() || document.is_sequence()) && document.size() == 0);
}

// The objects of a strategic merge patch; kustomize identifies each by its
// kind and name, so both are required.
std::vector<Node> merge_patches(const std::vector<Node>& documents, const Context& context,
                                const std::string& field) {
  std::vector<Node> patches;
  for (const Node& document : documents) {
    if (is_empty(document)) continue;
    std::string which = "document " + std::to_string(patches.size() + 1);
    if (!document.is_map()) {
      context.fail(field, which + " is a " + std::string(yaml::kind_name(document)) +
                              ", neither a strategic merge patch (an object) nor a JSON "
                              "patch (a list of operations)");
    }
    if (document.string_at({"kind"}).empty()) context.fail(field, which + " has no kind");
    if (document.string_at({"metadata", "name"}).empty()) {
      context.fail(field, which + " has no metadata.name");
    }
    patches.push_back(document);
  }
  return patches;
}

// Sets `key` (of metadata, or of the object itself) back to `old`, or
// removes it when there was none.
void restore(Node& object, const std::optional<Node>& old, std::string_view key, bool in_metadata) {
  Node* holder = &object;
  if (in_metadata) {
    holder = &object.get_or_insert("metadata", Node::map());
    if (!holder->is_map()) *holder = Node::map();
  }
  if (old) {
    holder->set(key, *old);
  } else {
    holder->remove(key);
  }
}

// What an object needs for Kubernetes to take it, and for `build
// --output-dir` to name its file: an apiVersion, a kind and a name. Empty
// when `object` has them, else what is wrong.
std::string missing_identity(const Node& object) {
  for (const char* field : {"apiVersion", "kind"}) {
    const Node* value = object.get(field);
    if (!value || !value->is_string() || value->text().empty()) {
      return std::string(field) + ": must be a non-empty string";
    }
  }
  const Node* name = object.find({"metadata", "name"});
  if (!name || !name->is_string() || !is_object_name(name->text())) {
    return "metadata.name: must be a name: at most 253 characters, not \".\" or \"..\", "
           "without '/', '%' or control characters";
  }
  return {};
}

// A patch may not take away what makes an object one Kubernetes takes
// (`before`: what it lacked before the patch); an object that came without
// it is not the patch's doing.
void check_patched(const ResourceId& id, const std::string& before, const Node& patched,
                   const Patch& patch, const Context& context) {
  std::string problem = missing_identity(patched);
  if (!problem.empty() && before.empty()) {
    context.fail(patch.field, id.to_string() + ": the patched object's " + problem);
  }
}

// The metadata.name and metadata.namespace of an object before a patch
// changed it, which its id keeps.
struct NameBefore {
  std::optional<Node> name;
  std::optional<Node> ns;

  explicit NameBefore(const Node& object) {
    if (const Node* found = object.find({"metadata", "name"})) name = *found;
    if (const Node* found = object.find({"metadata", "namespace"})) ns = *found;
  }
};

// The resource's object was patched: a new name or namespace goes through
// Resource's setters, from the name it had before, so that the previous id
// is remembered.
void record_rename(Resource& resource, const NameBefore& before) {
  Node& changed = resource.object();
  std::string name = changed.string_at({"metadata", "name"});
  const Node* ns = changed.find({"metadata", "namespace"});
  std::string namespace_name = ns ? ns->text() : "";
  bool has_namespace = ns != nullptr;
  restore(changed, before.name, "name", true);
  restore(changed, before.ns, "namespace", true);
  resource.set_name(name);
  resource.set_namespace(namespace_name);
  if (!has_namespace) changed.get_or_insert("metadata", Node::map()).remove("namespace");
}

// Applies a strategic merge patch as kustomize does: the resource keeps its
// kind and name unless the patch allows a change, and always its namespace.
// False when the patch deletes the resource. Merged in place, as JSON
// patches are (apply_json): a failing merge fails the build.
bool merge_into(Resource& resource, const Node& merge, const Patch& patch, const Context& context) {
  ResourceId id = resource.id();
  Node& object = resource.object();
  std::string lacked = missing_identity(object);
  NameBefore before(object);
  std::optional<Node> kind;
  if (const Node* found = object.get("kind")) kind = *found;
  try {
    // The result holds at most the patch's nodes more than the resource.
    context.budget->charge(merge);
    if (!apply_strategic_merge(object, merge)) return false;
  } catch (const Error& e) {
    context.fail(patch.field, id.to_string() + ": " + e.what());
  }
  if (!patch.options.allow_kind_change) restore(object, kind, "kind", false);
  if (!patch.options.allow_name_change) restore(object, before.name, "name", true);
  restore(object, before.ns, "namespace", true);
  check_patched(id, lacked, object, patch, context);
  record_rename(resource, before);
  return true;
}

// kustomize's id equality: same group, version, kind and name, and the same
// effective namespace.
bool same_id(const ResourceId& a, const ResourceId& b) {
  return a.gvk == b.gvk && a.name == b.name && effective_namespace(a) == effective_namespace(b);
}

bool has_id(const Resource& resource, const ResourceId& id) {
  if (same_id(resource.id(), id)) return true;
  for (const ResourceId& previous : resource.previous_ids()) {
    if (same_id(previous, id)) return true;
  }
  return false;
}

// The one resource a targetless strategic merge patch applies to.
std::size_t patched_by(const ResourceList& resources, const Node& merge, const Context& context,
                       const std::string& field) {
  Resource as_resource(merge, field);
  ResourceId id = as_resource.id();
  std::string name = as_resource.api_version().empty()
                         ? id.to_string()
                         : as_resource.api_version() + " " + id.to_string();
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < resources.size(); ++i) {
    if (!has_id(resources[i], id)) continue;
    if (found) context.fail(field, "several resources match strategic merge patch " + name);
    found = i;
  }
  if (!found) context.fail(field, "no resource matches strategic merge patch " + name);
  return *found;
}

void apply_targetless(ResourceList& resources, const Patch& patch, const Context& context) {
  for (const Node& merge : patch.merges) {
    std::size_t index = patched_by(resources, merge, context, patch.field);
    if (!merge_into(resources[index], merge, patch, context)) {
      resources.erase(resources.begin() + static_cast<std::ptrdiff_t>(index));
    }
  }
}

// With a target, the patch takes each resource's apiVersion: only its
// content matters, whatever identity it was written with.
// The resources a patch keeps are moved into a new list: erasing each deleted
// one in place would move all after it, for every deletion.
void apply_to_targets(ResourceList& resources, const Patch& patch, const Context& context) {
  ResourceList kept;
  kept.reserve(resources.size());
  for (Resource& resource : resources) {
    if (selects(*patch.target, resource)) {
      Node adapted = patch.merges.front();
      adapted.set("apiVersion", Node::string(resource.api_version()));
      if (!merge_into(resource, adapted, patch, context)) continue;
    }
    kept.push_back(std::move(resource));
  }
  resources = std::move(kept);
}

// A `patches` JSON patch stores each selected resource's id first, as
// bookkeeping annotations, so the patch may rename it; `patchesJson6902`
// does not. Resources renamed before carry such annotations too: a patch
// then sees a metadata.annotations map even when the resource has no
// annotations. Afterwards an empty map is dropped, as kustomize drops it.
// The object is patched in place, not on a copy (thousands of shards'
// Deployments take several patches each): a failing patch fails the build,
// so nothing sees what it left half done.
void apply_json(ResourceList& resources, const Patch& patch, const Context& context) {
  for (Resource& resource : resources) {
    if (!selects(*patch.target, resource)) continue;
    ResourceId id = resource.id();
    Node& object = resource.object();
    std::string lacked = missing_identity(object);
    std::optional<NameBefore> before;
    if (patch.stores_id) before.emplace(object);
    Node* metadata = object.get("metadata");
    bool annotated =
        (patch.stores_id || !resource.previous_ids().empty()) && metadata && metadata->is_map();
    if (annotated) metadata->get_or_insert("annotations", Node::map());
    try {
      apply_json_patch(object, *patch.operations, *context.budget);
    } catch (const Error& e) {
      context.fail(patch.field, id.to_string() + ": " + e.what());
    }
    Node* annotations = object.find({"metadata", "annotations"});
    if (annotated && annotations && annotations->is_map() && annotations->size() == 0) {
      object.get("metadata")->remove("annotations");
    }
    check_patched(id, lacked, object, patch, context);
    if (before) record_rename(resource, *before);
  }
}

// kustomize decodes a patch starting with "[" as JSON (so YAML flow style
// is refused there), and otherwise takes a first YAML document that is a
// list as operations.
bool starts_as_json(std::string_view text) {
  std::string content = trimmed(text);
  return !content.empty() && content.front() == '[';
}

// Bounded as parsed YAML is (yaml/budget.h), before the tree is built: the
// parser's own nesting has no limit, and the conversion recurses.
Node json_operations(std::string_view text, const Context& context, const std::string& field) {
  std::size_t values = 0;
  auto bounded = [&](int depth, nlohmann::ordered_json::parse_event_t event,
                     nlohmann::ordered_json&) {
    using Event = nlohmann::ordered_json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) {
      if (static_cast<std::size_t>(depth) >= yaml::kMaxDepth) {
        context.fail(field, yaml::too_deep());
      }
    }
    if ((event == Event::value || event == Event::object_start || event == Event::array_start) &&
        ++values > yaml::kMaxNodes) {
      context.fail(field, "more than " + std::to_string(yaml::kMaxNodes) + " values");
    }
    return true;
  };
  try {
    return yaml::from_json(nlohmann::ordered_json::parse(text, bounded));
  } catch (const nlohmann::json::exception& e) {
    std::string message = e.what();
    context.fail(field, "a patch starting with \"[\" must be JSON: " +
                            message.substr(message.find("] ") + 2));
  }
}

// A patch text as kustomize tells the two kinds apart: operations of a JSON
// patch (JSON when the text starts with "[", else a first YAML document that
// is a list), or else YAML documents meant as strategic merge patches.
struct PatchText {
  std::optional<Node> operations;
  std::vector<Node> documents;
};

PatchText split_patch(std::string_view text, const std::string& source, const Context& context,
                      const std::string& field) {
  if (starts_as_json(text)) return {json_operations(text, context, field), {}};
  std::vector<Node> documents = documents_of(text, source, context, field);
  if (documents.empty() || !documents.front().is_sequence()) return {std::nullopt, documents};
  yaml::read_yaml11_booleans(documents.front());
  return {std::move(documents.front()), {}};
}

// A `patchesStrategicMerge` item is inline YAML when it reads as objects,
// else a file path, as kustomize tries them.
std::vector<Node> legacy_merge_patches(const Node& item, const Context& context,
                                       const std::string& field) {
  std::string text = string_of(item, context, field);
  if (text.empty()) context.fail(field, "must be a file path or an inline patch");
  std::vector<Node> documents;
  try {
    documents = yaml::parse_documents(text, field);
  } catch (const Error&) {
    // not YAML: a file path
  }
  bool inline_patch = std::any_of(documents.begin(), documents.end(),
                                  [](const Node& document) { return document.is_map(); });
  if (!inline_patch) documents = documents_of(context.read(text, field), text, context, field);
  std::vector<Node> patches = merge_patches(documents, context, field);
  if (patches.empty()) context.fail(field, "the patch is empty");
  return patches;
}

}  // namespace

// An empty patch text is an empty JSON patch, as in kustomize.
Patch read_patch(std::string field, std::string_view text, const std::string& source,
                 std::optional<Target> target, const Context& context, PatchOptions options) {
  Patch patch{std::move(field), std::move(target), Node::sequence(), {}, options, true};
  if (!text.empty()) {
    PatchText split = split_patch(text, source, context, patch.field);
    patch.operations = std::move(split.operations);
    if (patch.operations && patch.operations->size() == 0) {
      context.fail(patch.field, "the patch is empty");
    }
    if (!patch.operations) patch.merges = merge_patches(split.documents, context, patch.field);
  }
  if (patch.operations && !patch.target) context.fail(patch.field, "a JSON patch needs a target");
  if (patch.operations) return patch;
  if (patch.merges.empty()) context.fail(patch.field, "the patch is empty");
  if (patch.target && patch.merges.size() > 1) {
    context.fail(patch.field, "a patch with a target must hold one strategic merge patch, not " +
                                  std::to_string(patch.merges.size()));
  }
  return patch;
}

void apply_patch(ResourceList& resources, const Patch& patch, const Context& context) {
  if (patch.operations) return apply_json(resources, patch, context);
  if (!patch.target) return apply_targetless(resources, patch, context);
  apply_to_targets(resources, patch, context);
}

std::vector<Patch> read_patches(const yaml::Node& field, const Context& context) {
  std::vector<Patch> patches;
  for (const Node& item : entries_of(field, "patches", context)) {
    Entry entry = read_entry(item, context, indexed("patches", patches.size()));
    patches.push_back(read_patch(entry.field, entry.text, entry.source, entry.target, context,
                                 {entry.allow_name_change, entry.allow_kind_change}));
  }
  return patches;
}

std::vector<Patch> read_patches_strategic_merge(const yaml::Node& field, const Context& context) {
  std::vector<Patch> patches;
  for (const Node& item : entries_of(field, "patchesStrategicMerge", context)) {
    std::string at = indexed("patchesStrategicMerge", patches.size());
    std::vector<Node> merges = legacy_merge_patches(item, context, at);
    patches.push_back({std::move(at), std::nullopt, std::nullopt, std::move(merges), {}, true});
  }
  return patches;
}

std::vector<Patch> read_patches_json6902(const yaml::Node& field, const Context& context) {
  std::vector<Patch> patches;
  for (const Node& item : entries_of(field, "patchesJson6902", context)) {
    Entry entry = read_entry(item, context, indexed("patchesJson6902", patches.size()));
    if (!entry.target) context.fail(entry.field + ".target", "is required");
    if (entry.target->name.text.empty()) context.fail(entry.field + ".target.name", "is required");
    std::optional<Node> operations =
        split_patch(entry.text, entry.source, context, entry.field).operations;
    if (!operations || operations->size() == 0) {
      context.fail(entry.field, "a JSON patch must be a non-empty list of operations");
    }
    Patch patch{entry.field, entry.target, std::move(operations), {}, {}, false};
    patches.push_back(std::move(patch));
  }
  return patches;
}

}  // namespace fluxop::kustomize
