#include "core/adopt/adopt.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/adopt/infer.h"
#include "core/distribution/constraint.h"
#include "core/distribution/resolve.h"
#include "core/distribution/version.h"
#include "core/error.h"
#include "core/instance/instance.h"
#include "core/labels.h"
#include "core/render/render.h"
#include "core/yaml/emit.h"
#include "core/yaml/json.h"
#include "core/yaml/parse.h"

namespace fluxop::adopt {

namespace {

using yaml::Node;

// What errors and warnings call the instance adopt writes.
constexpr std::string_view kSource = "the adopted FluxInstance";

std::vector<Node> render_document(const Node& document, const distribution::Distribution& dist,
                                  const AdoptOptions& options) {
  std::vector<std::string> warnings;
  instance::FluxInstance flux = instance::load_instance(document, kSource, {}, warnings);
  render::Rendered rendered = render::render(flux, dist,
                                             {.revision = false,
                                              .mode = render::Mode::operator_controller,
                                              .parse_cache = options.parse_cache});
  return std::move(rendered.objects);
}

// The error of rendering `document`; nullopt when it renders.
std::optional<std::string> render_error(const Node& document,
                                        const distribution::Distribution& dist,
                                        const AdoptOptions& options) {
  try {
    render_document(document, dist, options);
    return std::nullopt;
  } catch (const Error& error) {
    return error.what();
  }
}

// A directory patch as the operator's render takes it. The operator patches
// the distribution's manifests before it sets their namespace: a strategic
// merge patch or a target naming the namespace selects nothing there.
// nullopt when the patch names no namespace.
std::optional<Node> without_namespace(Node patch) {
  bool named = false;
  if (Node* target = patch.get("target"); target && target->get("namespace")) {
    target->remove("namespace");
    if (target->size() == 0) patch.remove("target");
    named = true;
  }
  std::vector<Node> documents = yaml::parse_documents(patch.string_at({"patch"}), kSource);
  std::string text;
  for (Node& document : documents) {
    if (!document.is_map()) return named ? std::optional<Node>(patch) : std::nullopt;  // JSON 6902
    Node* metadata = document.get("metadata");
    if (metadata && metadata->get("namespace")) {
      metadata->remove("namespace");
      named = true;
    }
    text += (text.empty() ? "" : "---\n") + yaml::emit(document);
  }
  if (!named) return std::nullopt;
  patch.set("patch", Node::string(text));
  return patch;
}

Node node_of(const nlohmann::json& value) {
  return yaml::from_json(nlohmann::ordered_json::parse(value.dump()));
}

Node operation(std::string_view op, const std::string& path, const Node* value) {
  Node out = Node::map();
  out.append("op", Node::string(std::string(op)));
  out.append("path", Node::string(path));
  if (value) out.append("value", *value);
  return out;
}

// One JSON 6902 patch per object, setting each field as it is installed.
// The target names no namespace: patches apply before the instance's
// namespace is set, and one installation has each kind and name once.
std::vector<Node> reproducing_patches(const std::vector<FieldDifference>& differences) {
  std::map<std::string, std::pair<const FieldDifference*, Node>> by_object;
  std::vector<std::string> order;
  for (const FieldDifference& difference : differences) {
    if (difference.expected) continue;
    auto [entry, added] = by_object.try_emplace(difference.object, &difference, Node::sequence());
    if (added) order.push_back(difference.object);
    Node& operations = entry->second.second;
    if (!difference.installed) {
      operations.push_back(operation("remove", difference.path, nullptr));
    } else {
      Node value = node_of(reproducing_value(difference));
      operations.push_back(
          operation(difference.rendered ? "replace" : "add", difference.path, &value));
    }
  }
  std::vector<Node> patches;
  for (const std::string& object : order) {
    const auto& [difference, operations] = by_object.at(object);
    Node target = Node::map();
    std::string api_version = difference->api_version;
    std::size_t slash = api_version.find('/');
    if (slash != std::string::npos)
      target.append("group", Node::string(api_version.substr(0, slash)));
    target.append(
        "version",
        Node::string(slash == std::string::npos ? api_version : api_version.substr(slash + 1)));
    target.append("kind", Node::string(difference->kind));
    target.append("name", Node::string(difference->name));
    Node patch = Node::map();
    patch.append("patch", Node::string(yaml::emit(operations)));
    patch.append("target", std::move(target));
    patches.push_back(std::move(patch));
  }
  return patches;
}

Node& patches_of(Node& document) {
  Node& kustomize =
      document.get_or_insert("spec", Node::map()).get_or_insert("kustomize", Node::map());
  return kustomize.get_or_insert("patches", Node::sequence());
}

// `document` with the first `count` of `patches` added.
Node with_patches(const Node& document, const std::vector<Node>& patches, std::size_t count) {
  Node out = document;
  Node& list = patches_of(out);
  for (std::size_t i = 0; i < count; ++i) list.push_back(patches[i]);
  return out;
}

// `document` with the bootstrap directory's patches, as the operator's render
// takes them, in a few renders however many there are (each render applies
// them all): as they are; else each without the namespace it names; else
// the first that does not apply, found by halving (kustomize stops at the
// first patch that fails, so a failing list stays failing as it grows).
Node with_directory_patches(const Node& document, const std::vector<DirectoryPatch>& directory,
                            const distribution::Distribution& dist, const AdoptOptions& options,
                            std::size_t& without_namespace_count) {
  std::vector<Node> patches;
  for (const DirectoryPatch& patch : directory) patches.push_back(patch.patch);
  without_namespace_count = 0;
  Node all = with_patches(document, patches, patches.size());
  if (!render_error(all, dist, options)) return all;
  for (Node& patch : patches) {
    if (std::optional<Node> stripped = without_namespace(patch)) {
      patch = std::move(*stripped);
      ++without_namespace_count;
    }
  }
  all = with_patches(document, patches, patches.size());
  std::optional<std::string> failure = render_error(all, dist, options);
  if (!failure) return all;
  std::size_t renders = 0, fails = patches.size();  // `failure` is the first `fails`'
  while (fails - renders > 1) {
    std::size_t middle = renders + (fails - renders) / 2;
    if (std::optional<std::string> error =
            render_error(with_patches(document, patches, middle), dist, options)) {
      fails = middle;
      failure = std::move(error);
    } else {
      renders = middle;
    }
  }
  throw Error(directory[fails - 1].field +
              ": does not apply to what the operator renders: " + *failure);
}

// The render with the generated patches added to `document`, as many as
// apply: one that does not (it edits what the operator sets after the
// patches) is left out, and its differences stay in the proof.
std::vector<Node> render_with(Node& document, std::vector<Node> generated,
                              const distribution::Distribution& dist, const AdoptOptions& options,
                              std::size_t& added) {
  Node all = document;
  for (const Node& patch : generated) patches_of(all).push_back(patch);
  try {
    std::vector<Node> objects = render_document(all, dist, options);
    document = std::move(all);
    added = generated.size();
    return objects;
  } catch (const Error&) {
    // One at a time, below.
  }
  added = 0;
  for (Node& patch : generated) {
    Node trial = document;
    patches_of(trial).push_back(std::move(patch));
    try {
      render_document(trial, dist, options);
    } catch (const Error&) {
      continue;
    }
    document = std::move(trial);
    ++added;
  }
  return render_document(document, dist, options);
}

bool same_field(const FieldDifference& a, const FieldDifference& b) {
  return a.object == b.object && a.path == b.path;
}

}  // namespace

std::vector<const FieldDifference*> Adoption::lost() const {
  std::vector<const FieldDifference*> out;
  for (const FieldDifference& difference : proof.fields) {
    if (!difference.expected) out.push_back(&difference);
  }
  return out;
}

Adoption adopt(const Installation& installation, const distribution::Distribution& dist,
               const AdoptOptions& options) {
  // The options flux bootstrap wrote, from the objects before the
  // directory's patches: those patches are carried over as they are, and
  // an option inferred from their effect would apply twice.
  Inferred inferred = infer_instance(installation.unpatched, installation.origin);
  try {
    distribution::resolve_version(dist, inferred.version, kVersionLabel);
  } catch (const Error& error) {
    throw Error(installation.origin + ": Flux " + inferred.version + " is installed, " +
                "which the distribution " + dist.root() + " does not have (" + error.what() + ")");
  }
  Adoption adoption;
  adoption.version = inferred.version;
  Node document = std::move(inferred.document);
  if (!installation.patches.empty())
    document = with_directory_patches(document, installation.patches, dist, options,
                                      adoption.patches_without_namespace);
  adoption.carried_patches = installation.patches.size();

  Comparison first = compare(installation.objects, installation.unpatched,
                             render_document(document, dist, options));
  // The differences left to reproduce: all but the operator's. Twice, at
  // most: an operation that reproduces nothing (it edits a field the
  // operator sets after the patches) is not written the second time.
  Node carried = document;
  std::vector<FieldDifference> tried;
  for (const FieldDifference& difference : first.fields) {
    if (!difference.expected) tried.push_back(difference);
  }
  adoption.proof = std::move(first);
  for (int pass = 0; pass < 2 && !tried.empty(); ++pass) {
    document = carried;
    adoption.proof = compare(installation.objects, installation.unpatched,
                             render_with(document, reproducing_patches(tried), dist, options,
                                         adoption.generated_patches));
    adoption.reproduced.clear();
    for (const FieldDifference& difference : tried) {
      bool left = std::any_of(
          adoption.proof.fields.begin(), adoption.proof.fields.end(),
          [&](const FieldDifference& d) { return !d.expected && same_field(d, difference); });
      if (!left) adoption.reproduced.push_back(difference);
    }
    if (adoption.reproduced.size() == tried.size()) break;
    tried = adoption.reproduced;
  }

  if (!options.version_range.empty()) {
    auto range = distribution::Constraint::parse(options.version_range);
    auto installed = distribution::parse_version(inferred.version);
    if (!range) {
      throw Error("--version-range: invalid semver constraint " + quote(options.version_range));
    }
    if (!installed || !range->matches(*installed)) {
      throw Error("--version-range: " + quote(options.version_range) +
                  " does not contain the version installed, " + inferred.version);
    }
    document.get("spec")->get("distribution")->set("version", Node::string(options.version_range));
  }
  adoption.instance = std::move(document);
  return adoption;
}

}  // namespace fluxop::adopt
