#include "core/yaml/node.h"

#include <algorithm>

namespace fluxop::yaml {

const std::string Node::kNoText;

Node Node::null(std::string written) {
  Node n;
  n.text_ = std::move(written);
  return n;
}

Node Node::map() {
  Node n;
  n.kind_ = Kind::Map;
  return n;
}

Node Node::sequence() {
  Node n;
  n.kind_ = Kind::Sequence;
  return n;
}

Node Node::string(std::string value, Style style) {
  return scalar(std::move(value), Tag::String, style);
}

Node Node::scalar(std::string text, Tag tag, Style style) {
  Node n;
  n.kind_ = Kind::Scalar;
  n.tag_ = tag;
  n.style_ = style;
  n.text_ = std::move(text);
  return n;
}

Node Node::integer(std::int64_t value) { return scalar(std::to_string(value), Tag::Int); }

Node Node::boolean(bool value) { return scalar(value ? "true" : "false", Tag::Bool); }

const std::unordered_map<std::string, std::size_t>& Node::key_index() const {
  auto& positions = index_.positions;
  if (!positions || positions->size() != entries_.size()) {
    positions = std::make_unique<std::unordered_map<std::string, std::size_t>>();
    positions->reserve(entries_.size());
    for (std::size_t i = 0; i < entries_.size(); ++i) positions->emplace(entries_[i].first, i);
  }
  return *positions;
}

const Node* Node::get(std::string_view key) const {
  if (entries_.size() < kIndexedSize) {
    for (const auto& [k, v] : entries_) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  // Heterogeneous lookup needs C++20 transparent hashing, which libstdc++ 12
  // lacks for unordered_map::find: one string per lookup.
  auto found = key_index().find(std::string(key));
  if (found == index_.positions->end()) return nullptr;
  if (found->second < entries_.size() && entries_[found->second].first == key)
    return &entries_[found->second].second;
  index_.positions.reset();  // reordered behind the index (a sort)
  return get(key);
}

Node* Node::get(std::string_view key) {
  return const_cast<Node*>(static_cast<const Node*>(this)->get(key));
}

Node& Node::set(std::string_view key, Node value) {
  if (Node* existing = get(key)) {
    *existing = std::move(value);
    return *existing;
  }
  return append(std::string(key), std::move(value));
}

Node& Node::append(std::string key, Node value) {
  if (index_.positions && index_.positions->size() == entries_.size())
    index_.positions->emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
  return entries_.back().second;
}

Node& Node::get_or_insert(std::string_view key, Node init) {
  if (Node* existing = get(key)) return *existing;
  return append(std::string(key), std::move(init));
}

bool Node::remove(std::string_view key) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.first == key; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  index_.positions.reset();
  return true;
}

std::size_t Node::size() const {
  if (kind_ == Kind::Map) return entries_.size();
  if (kind_ == Kind::Sequence) return items_.size();
  return 0;
}

const Node* Node::find(std::initializer_list<std::string_view> path) const {
  const Node* cur = this;
  for (std::string_view key : path) {
    if (!cur->is_map()) return nullptr;
    cur = cur->get(key);
    if (!cur) return nullptr;
  }
  return cur;
}

Node* Node::find(std::initializer_list<std::string_view> path) {
  return const_cast<Node*>(static_cast<const Node*>(this)->find(path));
}

std::string Node::string_at(std::initializer_list<std::string_view> path,
                            std::string_view fallback) const {
  const Node* n = find(path);
  if (!n || !n->is_scalar()) return std::string(fallback);
  return n->text();
}

bool operator==(const Node& a, const Node& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Node::Kind::Null:
      return true;
    case Node::Kind::Scalar:
      return a.tag_ == b.tag_ && a.text_ == b.text_;
    case Node::Kind::Sequence:
      return a.items_ == b.items_;
    case Node::Kind::Map:
      if (a.entries_.size() != b.entries_.size()) return false;
      for (const auto& [key, value] : a.entries_) {
        const Node* other = b.get(key);
        if (!other || !(*other == value)) return false;
      }
      return true;
  }
  return false;
}

std::string_view kind_name(const Node& node) {
  switch (node.kind()) {
    case Node::Kind::Null:
      return "null";
    case Node::Kind::Scalar:
      return "scalar";
    case Node::Kind::Sequence:
      return "sequence";
    case Node::Kind::Map:
      return "map";
  }
  return "unknown";
}

}  // namespace fluxop::yaml
