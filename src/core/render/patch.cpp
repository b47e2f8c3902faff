#include "core/render/patch.h"

namespace fluxop::render {

using yaml::Node;

namespace {

Node operation(std::string_view op, std::string_view path) {
  Node node = Node::map();
  node.set("op", Node::string(std::string(op)));
  node.set("path", Node::string(std::string(path)));
  return node;
}

// The renderer's own targets: a pattern that does not compile is a bug.
kustomize::Target compiled(const Target& target) {
  static const kustomize::Context kRenderer{"", "fluxopctl's Flux kustomization"};
  kustomize::TargetSpec spec{
      .kind = target.kind, .name = target.name, .annotation_selector = target.annotation_selector};
  if (target.apps_v1) {
    spec.group = "apps";
    spec.version = "v1";
  }
  return kustomize::make_target(spec, kRenderer, "target");
}

}  // namespace

Node add(std::string_view path, Node value) {
  Node node = operation("add", path);
  node.set("value", std::move(value));
  return node;
}

Node replace(std::string_view path, Node value) {
  Node node = operation("replace", path);
  node.set("value", std::move(value));
  return node;
}

Node remove(std::string_view path) { return operation("remove", path); }

std::string arg_path(std::string_view index) {
  return "/spec/template/spec/containers/0/args/" + std::string(index);
}

Node add_arg(std::string_view argument) {
  return add(arg_path("-"), Node::string(std::string(argument)));
}

Patch json_patch(const Target& target, const std::vector<Node>& operations) {
  Node list = Node::sequence();
  for (const Node& op : operations) list.push_back(op);
  return {.field = "", .target = compiled(target), .operations = std::move(list)};
}

Patch merge_patch(const Target& target, Node patch) {
  return {.field = "", .target = compiled(target), .merges = {std::move(patch)}};
}

Patch deployment_template_patch(Node metadata, Node pod_template) {
  Node spec = Node::map();
  spec.set("template", std::move(pod_template));
  Node patch = Node::map();
  patch.set("apiVersion", Node::string("apps/v1"));
  patch.set("kind", Node::string("Deployment"));
  patch.set("metadata", std::move(metadata));
  patch.set("spec", std::move(spec));
  return merge_patch({.kind = "Deployment"}, std::move(patch));
}

std::string any_of(const std::vector<std::string>& names) {
  std::string pattern = "(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) pattern += '|';
    pattern += names[i];
  }
  return pattern + ")";
}

}  // namespace fluxop::render
