#include "core/kustomize/json_patch.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/yaml/scalar.h"

namespace fluxop::kustomize {

namespace {

using yaml::Node;

// The operation being applied: errors start with its label, "[2] add /a",
// which grows as the operation's fields are read.
struct PatchStep {
  std::string label;
  std::string path;
  yaml::NodeBudget& budget;

  [[noreturn]] void fail(std::string_view message) const {
    throw Error(label + ": " + std::string(message));
  }
};

// Errors about a pointer other than `path` name it first.
std::string about(std::string_view role, std::string_view pointer) {
  return role.empty() ? "" : std::string(role) + " " + quote(pointer) + ": ";
}

// The reference tokens of an RFC 6901 pointer; none for "" (the document).
std::vector<std::string> tokens_of(std::string_view pointer, const PatchStep& step,
                                   const std::string& context) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') step.fail(context + "a JSON pointer must be empty or start with \"/\"");
  std::string token;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (pointer[i] != '~') {
      token += pointer[i];
    } else if (i + 1 < pointer.size() && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token += pointer[++i] == '0' ? '~' : '/';
    } else {
      step.fail(context + "invalid JSON pointer escape: \"~\" must be followed by 0 or 1");
    }
  }
  return tokens;
}

// A sequence index as the patch library reads it (Go's strconv.Atoi): an
// optional sign and decimal digits; negative indices count from the end.
// `slots` is the item count, plus one when inserting.
std::optional<std::int64_t> parse_index(std::string_view token) {
  bool negative = !token.empty() && token[0] == '-';
  if (!token.empty() && (token[0] == '-' || token[0] == '+')) token.remove_prefix(1);
  if (token.empty() || token[0] < '0' || token[0] > '9') return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return negative ? -value : value;
}

std::optional<std::size_t> index_in(std::string_view token, std::size_t slots) {
  auto value = parse_index(token);
  if (!value) return std::nullopt;
  auto count = static_cast<std::int64_t>(slots);
  std::int64_t index = *value < 0 ? *value + count : *value;
  if (index < 0 || index >= count) return std::nullopt;
  return static_cast<std::size_t>(index);
}

std::size_t resolve_index(const std::string& token, std::size_t size, bool inserting,
                          const PatchStep& step, const std::string& context) {
  if (auto index = index_in(token, size + (inserting ? 1 : 0))) return *index;
  if (!parse_index(token)) step.fail(context + quote(token) + " is not a sequence index");
  step.fail(context + "index " + token + " out of range (" + std::to_string(size) + " items)");
}

// Where a pointer leads: the map or sequence holding its last token, and
// how many levels below the document's root a value put there sits.
struct Location {
  Node* parent;
  std::string key;
  std::size_t depth;
};

// What an operation is about to put at `at`: new nodes (added or copied)
// are charged to the build's budget before they are made; a moved value is
// not new, but may not nest the document too deeply either.
enum class Placed { created, moved };

void admit(const Node& value, const Location& at, Placed placed, const PatchStep& step) {
  try {
    if (placed == Placed::created) {
      step.budget.charge(value, at.depth);
    } else {
      yaml::check_depth(value, at.depth);
    }
  } catch (const Error& e) {
    step.fail(e.what());
  }
}

// Every step before the last must exist and be a map or a sequence.
Location locate(Node& document, std::string_view pointer, const PatchStep& step,
                std::string_view role = {}) {
  std::string context = about(role, pointer);
  std::vector<std::string> tokens = tokens_of(pointer, step, context);
  if (tokens.empty()) step.fail(context + "path not found");
  Node* node = &document;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    Node* next = nullptr;
    if (node->is_map()) {
      next = node->get(tokens[i]);
    } else if (auto index = index_in(tokens[i], node->size())) {
      next = &node->items()[*index];
    }
    if (!next || !(next->is_map() || next->is_sequence())) step.fail(context + "path not found");
    node = next;
  }
  return {node, tokens.back(), tokens.size()};
}

// The value at a location; nullptr for a missing map key (the library
// reads it as null).
const Node* value_at(const Location& at, const PatchStep& step, const std::string& context) {
  if (at.parent->is_map()) return at.parent->get(at.key);
  return &at.parent->items()[resolve_index(at.key, at.parent->size(), false, step, context)];
}

void insert(const Location& at, Node value, const PatchStep& step) {
  if (at.parent->is_map()) {
    at.parent->set(at.key, std::move(value));
    return;
  }
  auto& items = at.parent->items();
  std::size_t index =
      at.key == "-" ? items.size() : resolve_index(at.key, items.size(), true, step, "");
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(index), std::move(value));
}

Node take(const Location& at, const PatchStep& step, const std::string& context) {
  if (at.parent->is_map()) {
    Node* found = at.parent->get(at.key);
    if (!found) step.fail(context + "path not found");
    Node value = std::move(*found);
    at.parent->remove(at.key);
    return value;
  }
  auto& items = at.parent->items();
  auto index =
      static_cast<std::ptrdiff_t>(resolve_index(at.key, items.size(), false, step, context));
  Node value = std::move(items[index]);
  items.erase(items.begin() + index);
  return value;
}

// Equality of the JSON forms the library compares: numbers by value,
// timestamps as the strings they become.
bool json_equal(const Node& a, const Node& b);

bool json_scalar_equal(const Node& a, const Node& b) {
  auto category = [](yaml::Tag tag) {
    if (tag == yaml::Tag::Timestamp) return yaml::Tag::String;
    if (tag == yaml::Tag::Float) return yaml::Tag::Int;
    return tag;
  };
  return category(a.tag()) == category(b.tag()) &&
         yaml::canonical_text(a) == yaml::canonical_text(b);
}

bool json_equal(const Node& a, const Node& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Node::Kind::Null:
      return true;
    case Node::Kind::Scalar:
      return json_scalar_equal(a, b);
    case Node::Kind::Sequence:
      return std::equal(a.items().begin(), a.items().end(), b.items().begin(), b.items().end(),
                        json_equal);
    case Node::Kind::Map:
      return a.size() == b.size() &&
             std::all_of(a.entries().begin(), a.entries().end(), [&](const Node::Entry& entry) {
               const Node* other = b.get(entry.first);
               return other && json_equal(entry.second, *other);
             });
  }
  return false;
}

std::string string_field(const Node& operation, std::string_view key, const PatchStep& step) {
  const Node* field = operation.get(key);
  if (!field) step.fail("missing " + quote(key));
  if (!field->is_string()) step.fail(quote(key) + " must be a string");
  return field->text();
}

// A missing value is null to the library.
Node value_of(const Node& operation) {
  const Node* value = operation.get("value");
  return value ? *value : Node();
}

void op_add(Node& document, const Node& operation, const PatchStep& step) {
  Location at = locate(document, step.path, step);
  Node value = value_of(operation);
  admit(value, at, Placed::created, step);
  insert(at, std::move(value), step);
}

void op_remove(Node& document, const Node&, const PatchStep& step) {
  take(locate(document, step.path, step), step, "");
}

void op_replace(Node& document, const Node& operation, const PatchStep& step) {
  Node value = value_of(operation);
  if (step.path.empty()) {
    if (!value.is_map()) step.fail("the document can only be replaced by a map");
    admit(value, {&document, "", 0}, Placed::created, step);
    document = std::move(value);
    return;
  }
  Location at = locate(document, step.path, step);
  admit(value, at, Placed::created, step);
  if (at.parent->is_map()) {
    at.parent->set(at.key, std::move(value));  // a missing key is added, as kustomize does
  } else {
    at.parent->items()[resolve_index(at.key, at.parent->size(), false, step, "")] =
        std::move(value);
  }
}

void op_move(Node& document, const Node& operation, const PatchStep& step) {
  std::string from = string_field(operation, "from", step);
  Node value = take(locate(document, from, step, "from"), step, about("from", from));
  Location at = locate(document, step.path, step);
  admit(value, at, Placed::moved, step);
  insert(at, std::move(value), step);
}

void op_copy(Node& document, const Node& operation, const PatchStep& step) {
  std::string from = string_field(operation, "from", step);
  const Node* found = value_at(locate(document, from, step, "from"), step, about("from", from));
  Location at = locate(document, step.path, step);
  // Charged before the copy is made: copies of copies double the document.
  admit(found ? *found : Node(), at, Placed::created, step);
  insert(at, found ? *found : Node(), step);
}

void op_test(Node& document, const Node& operation, const PatchStep& step) {
  const Node* found = &document;
  if (!step.path.empty()) found = value_at(locate(document, step.path, step), step, "");
  if (!json_equal(found ? *found : Node(), value_of(operation))) step.fail("test failed");
}

using Operation = void (*)(Node& document, const Node& operation, const PatchStep& step);

Operation operation_named(std::string_view name) {
  static const std::pair<std::string_view, Operation> operations[] = {
      {"add", op_add},   {"remove", op_remove}, {"replace", op_replace},
      {"move", op_move}, {"copy", op_copy},     {"test", op_test},
  };
  for (const auto& [known, operation] : operations) {
    if (known == name) return operation;
  }
  return nullptr;
}

void apply_operation(Node& document, const Node& operation, std::size_t index,
                     yaml::NodeBudget& budget) {
  PatchStep step{"[" + std::to_string(index) + "]", "", budget};
  if (!operation.is_map()) {
    step.fail("an operation must be a map, not a " + std::string(yaml::kind_name(operation)));
  }
  std::string name = string_field(operation, "op", step);
  Operation apply = operation_named(name);
  if (!apply) {
    step.fail("unknown op " + quote(name) + " (expected add, remove, replace, move, copy or test)");
  }
  step.label += " " + name;
  step.path = string_field(operation, "path", step);
  step.label += " " + (step.path.empty() ? quote(step.path) : step.path);
  apply(document, operation, step);
}

}  // namespace

void apply_json_patch(yaml::Node& target, const yaml::Node& operations, yaml::NodeBudget& budget) {
  if (operations.is_null()) return;
  if (!operations.is_sequence()) {
    throw Error("a JSON patch must be a list of operations, not a " +
                std::string(yaml::kind_name(operations)));
  }
  for (std::size_t i = 0; i < operations.size(); ++i) {
    apply_operation(target, operations.items()[i], i, budget);
  }
}

}  // namespace fluxop::kustomize
