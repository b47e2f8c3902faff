// The object model for Kubernetes resources: ordered maps, sequences and
// scalars that keep their resolved tag and source style, so a string that
// looks like a number stays a string through every transformation.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fluxop::yaml {

// Where a node came from, 1-based; 0 when the node was built in code.
struct Mark {
  int line = 0;
  int column = 0;
};

// The resolved type of a scalar (YAML 1.2 core schema, as Go's yaml.v3 reads it).
enum class Tag { String, Int, Float, Bool, Timestamp };

// How the scalar was written in its source; informational, the emitter
// chooses its own style from the value.
enum class Style { Plain, SingleQuoted, DoubleQuoted, Literal, Folded };

class Node {
 public:
  enum class Kind { Null, Scalar, Sequence, Map };
  using Entry = std::pair<std::string, Node>;

  Node() = default;
  // A null as written in its source: "null", "~" or "" (an empty value).
  static Node null(std::string written);
  static Node map();
  static Node sequence();
  static Node string(std::string value, Style style = Style::Plain);
  // A scalar whose text is kept as written (e.g. "0x1F" for an Int).
  static Node scalar(std::string text, Tag tag, Style style = Style::Plain);
  static Node integer(std::int64_t value);
  static Node boolean(bool value);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_scalar() const { return kind_ == Kind::Scalar; }
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  bool is_map() const { return kind_ == Kind::Map; }
  bool is_string() const { return kind_ == Kind::Scalar && tag_ == Tag::String; }

  // Scalars; empty for null.
  const std::string& text() const { return kind_ == Kind::Null ? kNoText : text_; }
  // How a null was written: "null", "~" or "" (empty for other nodes too).
  const std::string& null_form() const { return kind_ == Kind::Null ? text_ : kNoText; }
  Tag tag() const { return tag_; }
  Style style() const { return style_; }

  // Maps keep insertion order; keys are unique. Keys are never renamed in
  // place through entries(): remove and set instead (the index trusts them).
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<Entry>& entries() { return entries_; }
  const Node* get(std::string_view key) const;
  Node* get(std::string_view key);
  // Replaces the value of an existing key or appends a new entry.
  Node& set(std::string_view key, Node value);
  // Appends an entry whose key the caller knows is not there yet.
  Node& append(std::string key, Node value);
  // The value at key, appended as `init` when missing.
  Node& get_or_insert(std::string_view key, Node init);
  bool remove(std::string_view key);

  // Sequences.
  const std::vector<Node>& items() const { return items_; }
  std::vector<Node>& items() { return items_; }
  void push_back(Node item) { items_.push_back(std::move(item)); }

  // Number of entries or items; 0 for scalars and null.
  std::size_t size() const;

  // Follows map keys; nullptr when any step is missing or not a map.
  const Node* find(std::initializer_list<std::string_view> path) const;
  Node* find(std::initializer_list<std::string_view> path);
  // The string value at path, or `fallback` when missing or not a scalar.
  std::string string_at(std::initializer_list<std::string_view> path,
                        std::string_view fallback = {}) const;

  // Semantic equality: same kinds, scalar text and tag, map entries
  // regardless of order, sequences item by item. Marks and styles ignored.
  friend bool operator==(const Node& a, const Node& b);

  Mark mark;

 private:
  static const std::string kNoText;

  // A large map's keys by position, so that building a map of n keys with
  // set() is linear, not quadratic (20,000 labels took 30 s without). Built
  // on the first lookup, kept by set/append, rebuilt when the entries'
  // count or order changed behind it; never copied. Like the rest of a
  // Node, not to be read from two threads at once.
  struct KeyIndex {
    std::unique_ptr<std::unordered_map<std::string, std::size_t>> positions;
    KeyIndex() = default;
    KeyIndex(const KeyIndex&) {}
    KeyIndex& operator=(const KeyIndex&) {
      positions.reset();
      return *this;
    }
    KeyIndex(KeyIndex&&) noexcept = default;
    KeyIndex& operator=(KeyIndex&&) noexcept = default;
  };
  static constexpr std::size_t kIndexedSize = 32;
  const std::unordered_map<std::string, std::size_t>& key_index() const;

  Kind kind_ = Kind::Null;
  Tag tag_ = Tag::String;
  Style style_ = Style::Plain;
  std::string text_;
  std::vector<Entry> entries_;
  std::vector<Node> items_;
  mutable KeyIndex index_;
};

// A short name for a node's kind, for error messages ("map", "sequence", ...).
std::string_view kind_name(const Node& node);

}  // namespace fluxop::yaml
