#include "core/render/patch.h"

#include "core/yaml/emit.h"

namespace fluxop::render {

using yaml::Node;

namespace {

Node operation(std::string_view op, std::string_view path) {
  Node node = Node::map();
  node.set("op", Node::string(std::string(op)));
  node.set("path", Node::string(std::string(path)));
  return node;
}

Node target_node(const Target& target) {
  Node node = Node::map();
  if (target.apps_v1) {
    node.set("group", Node::string("apps"));
    node.set("version", Node::string("v1"));
  }
  node.set("kind", Node::string(target.kind));
  if (!target.name.empty()) node.set("name", Node::string(target.name));
  if (!target.annotation_selector.empty()) {
    node.set("annotationSelector", Node::string(target.annotation_selector));
  }
  return node;
}

Node patch_entry(const Target& target, std::string text) {
  Node entry = Node::map();
  entry.set("target", target_node(target));
  entry.set("patch", Node::string(std::move(text)));
  return entry;
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

Node json_patch(const Target& target, const std::vector<Node>& operations) {
  Node list = Node::sequence();
  for (const Node& op : operations) list.push_back(op);
  return patch_entry(target, yaml::emit(list));
}

Node merge_patch(const Target& target, const Node& patch) {
  return patch_entry(target, yaml::emit(patch));
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
