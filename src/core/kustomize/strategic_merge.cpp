#include "core/kustomize/strategic_merge.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/kustomize/merge_keys.h"
#include "core/yaml/scalar.h"

namespace fluxop::kustomize {
namespace {

using yaml::Node;
using Strings = std::vector<std::string>;

// kustomize merges in place on shared nodes: a merged list item is the very
// target item it was merged into, a new subtree from the patch is merged
// with itself, and later steps see those aliases. Its results on odd input
// (items without merge keys, duplicate keys, `$patch: replace` items) depend
// on that, so the merge runs on shared cells and converts back at the end.
struct Cell;
using Ref = std::shared_ptr<Cell>;
struct Cell {
  Node node;  // a scalar or null; an empty map or sequence carrying the kind
  std::vector<std::pair<std::string, Ref>> fields;
  std::vector<Ref> items;
  bool keep_null = false;  // a target's null that the patch did not touch
  // A large map's fields by position, so that merging maps of n keys is
  // linear: built by field() once there are kIndexedFields, kept by
  // set_field and remove_field, complete or empty.
  std::unordered_map<std::string, std::size_t> positions;
};
constexpr std::size_t kIndexedFields = 32;

// Takes the target's nodes apart rather than copying them: a Flux build
// merges a patch into thousands of Deployments.
Ref to_cell(Node&& node) {
  auto cell = std::make_shared<Cell>();
  yaml::Mark mark = node.mark;
  if (node.is_map()) {
    cell->node = Node::map();
    cell->fields.reserve(node.size());
    for (auto& [key, value] : node.entries()) {
      cell->fields.emplace_back(std::move(key), to_cell(std::move(value)));
    }
  } else if (node.is_sequence()) {
    cell->node = Node::sequence();
    cell->items.reserve(node.size());
    for (Node& item : node.items()) cell->items.push_back(to_cell(std::move(item)));
  } else {
    cell->node = std::move(node);
  }
  cell->node.mark = mark;
  return cell;
}

// Moves out of the cells only this conversion reaches (`sole`): a cell the
// merge shares between several places of the tree is copied at each.
Node to_node(Cell& cell, bool sole) {
  Node node = sole ? std::move(cell.node) : cell.node;
  auto sole_below = [sole](const Ref& child) { return sole && child.use_count() == 1; };
  for (auto& [key, value] : cell.fields) {
    node.append(sole ? std::move(key) : key, to_node(*value, sole_below(value)));
  }
  for (const Ref& item : cell.items) node.push_back(to_node(*item, sole_below(item)));
  return node;
}

bool is(const Ref& cell, Node::Kind kind) { return cell && cell->node.kind() == kind; }
bool is_map(const Ref& cell) { return is(cell, Node::Kind::Map); }
bool is_sequence(const Ref& cell) { return is(cell, Node::Kind::Sequence); }
bool missing_or_null(const Ref& cell) { return !cell || cell->node.is_null(); }
bool missing_or_empty_map(const Ref& cell) {
  return missing_or_null(cell) || (is_map(cell) && cell->fields.empty());
}
bool nil_or_empty(const Ref& cell) {
  return missing_or_empty_map(cell) || (is_sequence(cell) && cell->items.empty());
}

// The text kustomize compares keys and set members by; "" for non-scalars.
const std::string& text_of(const Ref& cell) {
  static const std::string none;
  return is(cell, Node::Kind::Scalar) ? cell->node.text() : none;
}

// The position of the field `name`, or fields.size().
std::size_t position(Cell& map, std::string_view name) {
  if (map.fields.size() < kIndexedFields) {
    auto it = std::find_if(map.fields.begin(), map.fields.end(),
                           [&](const auto& entry) { return entry.first == name; });
    return static_cast<std::size_t>(it - map.fields.begin());
  }
  if (map.positions.size() != map.fields.size()) {
    map.positions.clear();
    for (std::size_t i = 0; i < map.fields.size(); ++i)
      map.positions.emplace(map.fields[i].first, i);
  }
  auto found = map.positions.find(std::string(name));
  return found == map.positions.end() ? map.fields.size() : found->second;
}

Ref field(const Ref& map, std::string_view name) {
  if (!is_map(map)) return nullptr;
  std::size_t at = position(*map, name);
  return at < map->fields.size() ? map->fields[at].second : nullptr;
}

void remove_field(Cell& map, std::string_view name) {
  std::size_t at = position(map, name);
  if (at == map.fields.size()) return;
  map.fields.erase(map.fields.begin() + static_cast<std::ptrdiff_t>(at));
  if (map.positions.empty()) return;
  map.positions.erase(std::string(name));
  for (auto& [key, index] : map.positions) index -= index > at ? 1 : 0;
}

// Stores a merge result: nothing or a null removes the field, except a
// target's own untouched null.
void set_field(Cell& map, const std::string& name, const Ref& value) {
  if (!value || (value->node.is_null() && !value->keep_null)) return remove_field(map, name);
  std::size_t at = position(map, name);
  if (at < map.fields.size()) {
    map.fields[at].second = value;
    return;
  }
  if (map.positions.size() == map.fields.size() && !map.positions.empty())
    map.positions.emplace(name, at);
  map.fields.emplace_back(name, value);
}

std::string join(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "." + std::string(name);
}

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw Error((path.empty() ? std::string("patch") : path) + ": " + message);
}

void expect(const Ref& cell, Node::Kind kind, const std::string& path) {
  if (missing_or_null(cell) || cell->node.kind() == kind) return;
  Node wanted = kind == Node::Kind::Map        ? Node::map()
                : kind == Node::Kind::Sequence ? Node::sequence()
                                               : Node::string("");
  fail(path, "expected a " + std::string(yaml::kind_name(wanted)) + ", got " +
                 std::string(yaml::kind_name(cell->node)));
}

// Where in which built-in type a node sits; no type when kustomize has no
// schema for it (then every list is replaced whole).
struct Schema {
  std::string api_version;
  std::string kind;
  std::string path;

  bool known() const { return !kind.empty(); }
  Schema field(std::string_view name) const {
    return known() ? Schema{api_version, kind, join(path, name)} : Schema{};
  }
  std::optional<Strings> merge_keys() const {
    return known() ? kustomize::merge_keys(api_version, kind, path) : std::nullopt;
  }
};

// Outside any known schema, a map that names a built-in type by apiVersion
// and kind starts that type's schema (the target's first, then the patch's).
Schema schema_of(const Schema& schema, const Ref& dest, const Ref& patch) {
  if (schema.known()) return schema;
  for (const Ref& source : {dest, patch}) {
    const std::string& api_version = text_of(field(source, "apiVersion"));
    const std::string& kind = text_of(field(source, "kind"));
    if (!api_version.empty() && !kind.empty() && has_builtin_schema(api_version, kind)) {
      return Schema{api_version, kind, ""};
    }
  }
  return {};
}

// --- Finding and replacing list items by key values ---
//
// A key list of {""} stands for a list of scalars matched by value. An empty
// value matches any item that has the key (kustomize's field matcher).

Ref key_field(const Ref& item, const std::string& key, const std::string& value,
              const std::string& path) {
  if (key.empty()) {
    expect(item, Node::Kind::Scalar, path);
    return text_of(item) == value ? item : nullptr;
  }
  expect(item, Node::Kind::Map, path);
  Ref found = field(item, key);
  return found && (value.empty() || text_of(found) == value) ? found : nullptr;
}

// Replaces the items matching keys=values with `item` (or appends it when
// none match); with no `item`, deletes them. Null and empty-map items are
// dropped on the way; with an empty `values`, every item is.
void set_item(Cell& list, const Ref& item, Strings keys, const Strings& values,
              const std::string& path) {
  if (keys.empty()) keys.emplace_back();
  bool matches_maps = !keys[0].empty() && !values.empty() && !values[0].empty();
  // Compacted in place: the lists may be long, and most calls drop nothing.
  auto kept = list.items.begin();
  bool matched = false;
  for (auto existing = list.items.begin(); existing != list.items.end(); ++existing) {
    if (missing_or_empty_map(*existing)) continue;
    if (matches_maps && !is_map(*existing)) {
      *kept++ = std::move(*existing);
      continue;
    }
    bool found = true;
    Ref last;
    for (std::size_t i = 0; i < keys.size() && found; ++i) {
      if (i < values.size()) last = key_field(*existing, keys[i], values[i], path);
      found = last != nullptr;
    }
    if (!found) {
      if (!values.empty()) *kept++ = std::move(*existing);
      continue;
    }
    matched = true;
    if (item) *kept++ = item;
  }
  list.items.erase(kept, list.items.end());
  if (!missing_or_null(item) && !matched) list.items.push_back(item);
}

// The first item whose key fields have exactly these values.
Ref find_item(const Ref& list, const Strings& keys, const Strings& values) {
  if (!is_sequence(list)) return nullptr;
  for (const Ref& item : list->items) {
    if (keys[0].empty()) {
      if (text_of(item) == values[0]) return item;
      continue;
    }
    if (!is_map(item)) continue;
    bool all = true;
    for (std::size_t i = 0; i < keys.size() && all; ++i) {
      Ref value = field(item, keys[i]);
      all = value && text_of(value) == values[i];
    }
    if (all) return item;
  }
  return nullptr;
}

// find_item over a long list: the first item of each key value, for one
// merge key or a list of scalars (with several keys, merging an item may add
// key fields to it). Rebuilt for another list; forget() after the list
// changed.
class FirstItems {
 public:
  Ref find(const Ref& list, const Strings& keys, const Strings& values) {
    if (keys.size() != 1 || !is_sequence(list)) return find_item(list, keys, values);
    if (list.get() != list_ || keys != keys_) {
      first_.clear();
      for (const Ref& item : list->items) {
        if (keys[0].empty()) {
          first_.emplace(text_of(item), item);
        } else if (Ref value = field(item, keys[0])) {
          first_.emplace(text_of(value), item);
        }
      }
      list_ = list.get();
      keys_ = keys;
    }
    auto found = first_.find(values[0]);
    return found == first_.end() ? nullptr : found->second;
  }
  void forget() { list_ = nullptr; }

 private:
  const Cell* list_ = nullptr;
  Strings keys_;
  std::unordered_map<std::string, Ref> first_;
};

// --- Directives ---

enum class Directive { Merge, Replace, Delete, Unknown };

Directive directive_named(const std::string& name) {
  if (name == "merge") return Directive::Merge;
  if (name == "replace") return Directive::Replace;
  if (name == "delete") return Directive::Delete;
  return Directive::Unknown;
}

// A map's `$patch`, removed from the patch once understood.
Directive take_map_directive(const Ref& patch) {
  Ref value = field(patch, "$patch");
  if (!value) return Directive::Merge;
  Directive directive = directive_named(text_of(value));
  if (directive != Directive::Unknown) remove_field(*patch, "$patch");
  return directive;
}

// A list's `$patch` item (a map holding only `$patch`), removed once understood.
Directive take_list_directive(const Ref& patch, const std::string& path) {
  if (!is_sequence(patch)) return Directive::Merge;
  auto holder = std::find_if(patch->items.begin(), patch->items.end(),
                             [](const Ref& item) { return field(item, "$patch") != nullptr; });
  if (holder == patch->items.end() || (*holder)->fields.size() > 1) return Directive::Merge;
  std::string name = text_of(field(*holder, "$patch"));
  Directive directive = directive_named(name);
  if (directive == Directive::Unknown) fail(path, "unknown patch strategy \"" + name + "\"");
  set_item(*patch, nullptr, {"$patch"}, {name}, path);
  return directive;
}

Directive checked(Directive directive, const Ref& patch, const std::string& path) {
  if (directive == Directive::Unknown) {
    fail(path, "unknown patch strategy \"" + text_of(field(patch, "$patch")) + "\"");
  }
  return directive;
}

// --- The merge ---

Ref merge(const Ref& dest, const Ref& patch, const Schema& schema, const std::string& path);

Ref merge_map(const Ref& dest, const Ref& patch, const Schema& schema, const std::string& path) {
  Ref result;
  if (missing_or_null(dest)) {
    if (is_map(patch) && take_map_directive(patch) == Directive::Delete) return nullptr;
    // kustomize keeps a target's `null` or `~` the patch does not touch, but
    // drops an empty value.
    if (!patch && dest && !dest->node.null_form().empty()) {
      auto kept = std::make_shared<Cell>(*dest);
      kept->keep_null = true;
      return kept;
    }
    result = patch;  // merged with itself below, which applies its directives
  } else if (patch && patch->node.is_null()) {
    return nullptr;
  } else {
    switch (checked(is_map(patch) ? take_map_directive(patch) : Directive::Merge, patch, path)) {
      case Directive::Delete:
        return nullptr;
      case Directive::Replace:
        result = patch;
        break;
      default:
        result = dest;
    }
  }
  if (!is_map(result)) return result;
  Strings names;
  for (const Ref& source : {result, patch}) {
    if (!is_map(source)) continue;
    for (const auto& entry : source->fields) names.push_back(entry.first);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string& name : names) {
    Ref merged =
        merge(field(result, name), field(patch, name), schema.field(name), join(path, name));
    set_field(*result, name, merged);
  }
  return result;
}

// Each distinct key-value tuple, the patch's items first. Absent or empty
// key fields give "".
// Distinct tuples in the order first seen.
class Tuples {
 public:
  void add(Strings tuple) {
    std::string joined;
    for (const std::string& value : tuple) joined += value + '\0';
    if (seen_.insert(std::move(joined)).second) tuples_.push_back(std::move(tuple));
  }
  std::vector<Strings> take() { return std::move(tuples_); }

 private:
  std::vector<Strings> tuples_;
  std::unordered_set<std::string> seen_;
};

std::vector<Strings> key_tuples(const Strings& keys, const Ref& dest, const Ref& patch) {
  Tuples tuples;
  for (const Ref& source : {patch, dest}) {
    if (!is_sequence(source)) continue;
    for (const Ref& item : source->items) {
      Strings tuple;
      for (const std::string& key : keys) {
        Ref value = field(item, key);
        tuple.push_back(nil_or_empty(value) ? "" : text_of(value));
      }
      tuples.add(std::move(tuple));
    }
  }
  return tuples.take();
}

std::vector<Strings> scalar_tuples(const Ref& dest, const Ref& patch) {
  Tuples tuples;
  for (const Ref& source : {patch, dest}) {
    if (!is_sequence(source)) continue;
    for (const Ref& item : source->items) tuples.add({text_of(item)});
  }
  return tuples.take();
}

// With several merge keys, tuples that agree on one key and do not conflict
// on the others (one side missing) are unified, so `containerPort: 80`
// matches `containerPort: 80, protocol: TCP`.
void unify_tuples(std::vector<Strings>& tuples) {
  for (Strings& current : tuples) {
    const Strings a = current;  // compared as it was when this round began
    for (Strings& b : tuples) {
      bool common = false;
      bool conflict = a.size() != b.size();
      Strings unified;
      for (std::size_t i = 0; i < a.size() && !conflict; ++i) {
        common = common || a[i] == b[i];
        conflict = a[i] != b[i] && !a[i].empty() && !b[i].empty();
        unified.push_back(a[i].empty() ? b[i] : a[i]);
      }
      if (common && !conflict) current = b = unified;
    }
  }
}

// Which keys any tuple has a value for.
std::vector<bool> usable_mask(const std::vector<Strings>& tuples, const Strings& keys) {
  std::vector<bool> usable(keys.size(), false);
  for (const Strings& tuple : tuples) {
    for (std::size_t i = 0; i < tuple.size() && i < keys.size(); ++i) {
      if (!tuple[i].empty()) usable[i] = true;
    }
  }
  return usable;
}

// The keys (and a tuple's values for them) of the mask; all keys when none.
std::pair<Strings, Strings> usable_keys(const std::vector<bool>& usable, const Strings& values,
                                        const Strings& keys) {
  if (std::none_of(usable.begin(), usable.end(), [](bool u) { return u; })) return {keys, values};
  std::pair<Strings, Strings> out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!usable[i]) continue;
    out.first.push_back(keys[i]);
    if (i < values.size()) out.second.push_back(values[i]);
  }
  return out;
}

Ref untyped_scalar(const std::string& text) {
  auto cell = std::make_shared<Cell>();
  std::optional<yaml::Tag> tag = yaml::resolve_plain(text);
  if (tag) cell->node = Node::scalar(text, *tag);
  return cell;
}

std::string item_path(const std::string& path, const Strings& keys, const Strings& values) {
  if (std::all_of(values.begin(), values.end(), [](const auto& v) { return v.empty(); })) {
    return path;
  }
  std::string out = path + "[";
  for (std::size_t i = 0; i < keys.size() && i < values.size(); ++i) {
    out += (i ? "," : "") + keys[i] + "=" + values[i];
  }
  return out + "]";
}

// The list a merge builds, where set_item finds an item by an index of its
// items' key values as long as one key with a value decides a match and the
// list holds nothing set_item would drop or refuse; by set_item's own scan
// otherwise, so that odd lists keep kustomize's results.
class MergedList {
 public:
  MergedList() : list_(std::make_shared<Cell>(Cell{Node::sequence(), {}, {}, false, {}})) {}

  const Ref& list() const { return list_; }

  void set(const Ref& item, const Strings& keys, const Strings& values, const std::string& path) {
    bool one_key = keys.size() == 1 && values.size() == 1 && !values[0].empty();
    if (!one_key || missing_or_empty_map(item) || !indexed(keys[0])) {
      set_item(*list_, item, keys, values, path);
      key_.reset();
      return;
    }
    auto [at, added] = positions_.emplace(values[0], list_->items.size());
    if (added) {
      list_->items.push_back(item);
    } else {
      list_->items[at->second] = item;
    }
    odd_ = keys[0].empty() && !is(item, Node::Kind::Scalar);
  }

  // An item set_item does not place: one without the keys, or a null.
  void push_back(const Ref& item) {
    list_->items.push_back(item);
    key_.reset();
  }

 private:
  // Whether the index by `key` ("" for scalars) is there, built when not.
  bool indexed(const std::string& key) {
    if (key_ == key) return !odd_;
    positions_.clear();
    odd_ = false;
    for (std::size_t i = 0; i < list_->items.size() && !odd_; ++i) {
      const Ref& item = list_->items[i];
      odd_ = missing_or_empty_map(item) || (key.empty() && !is(item, Node::Kind::Scalar));
      if (odd_) break;
      Ref value = key.empty() ? item : field(item, key);
      if (value && !positions_.emplace(text_of(value), i).second) odd_ = true;  // a duplicate
    }
    key_ = key;
    return !odd_;
  }

  Ref list_;
  std::optional<std::string> key_;  // of positions_, when they are up to date
  std::unordered_map<std::string, std::size_t> positions_;
  bool odd_ = false;  // something only set_item's scan handles
};

// Puts the target's remaining items after the merged ones: an item already
// there is replaced in place, one without the key fields is appended.
Ref append_items(MergedList& merged, const Ref& dest, const Strings& keys,
                 const std::string& path) {
  if (!is_sequence(dest)) return merged.list();
  for (const Ref& item : std::vector<Ref>(dest->items)) {
    if (keys[0].empty()) {
      merged.set(item, {""}, {text_of(item)}, path);
      continue;
    }
    Strings values;
    for (const std::string& key : keys) {
      if (missing_or_null(item)) {
        merged.push_back(item);
        continue;
      }
      expect(item, Node::Kind::Map, path);
      Ref value = field(item, key);
      if (!value) {
        merged.push_back(item);
        continue;
      }
      values.push_back(text_of(value));
    }
    if (keys.size() > 1) merged.set(nullptr, keys, values, path);
    merged.set(item, keys, values, path);
  }
  return merged.list();
}

Ref merge_items(std::vector<Strings> tuples, const Strings& keys, const Ref& dest, const Ref& patch,
                const Schema& schema, const std::string& path) {
  MergedList merged;
  if (keys.size() > 1) unify_tuples(tuples);
  Strings item_keys;
  Strings item_values;
  std::vector<bool> usable = usable_mask(tuples, keys);  // once: the tuples are many
  FirstItems in_dest, in_patch;
  for (const Strings& tuple : tuples) {
    if (tuple.empty()) continue;
    std::tie(item_keys, item_values) = usable_keys(usable, tuple, keys);
    auto [find_keys, find_values] =
        usable_keys(usable_mask({item_values}, item_keys), item_values, item_keys);
    std::string at = item_path(path, item_keys, item_values);
    Ref item = merge(in_dest.find(dest, find_keys, find_values),
                     in_patch.find(patch, find_keys, find_values), schema, at);
    if (missing_or_empty_map(item)) {
      set_item(*dest, nullptr, item_keys, item_values, at);
      in_dest.forget();
      in_patch.forget();  // the same list when the target had none
      continue;
    }
    for (std::size_t i = 0; i < item_keys.size(); ++i) {
      if (item_keys[i].empty() || item_values[i].empty() || field(item, item_keys[i])) continue;
      expect(item, Node::Kind::Map, at);
      set_field(*item, item_keys[i], untyped_scalar(item_values[i]));
    }
    merged.set(item, item_keys, item_values, at);
  }
  if (tuples.empty()) return dest;
  return append_items(merged, dest, item_keys, path);
}

Ref merge_list(const Ref& dest, const Ref& patch, const Strings& keys, const Schema& schema,
               const std::string& path) {
  Ref result;
  if (missing_or_null(dest)) {
    result = patch;  // merged with itself below
  } else if (patch && patch->node.is_null()) {
    return nullptr;
  } else {
    switch (take_list_directive(patch, path)) {
      case Directive::Delete:
        return nullptr;
      case Directive::Replace:
        result = patch;
        break;
      default:
        result = dest;
    }
  }
  if (keys.empty())
    return merge_items(scalar_tuples(result, patch), {""}, result, patch, schema, path);
  // Items merged by key are maps: another item has no key, and would match
  // every item of the target without one, replacing them all.
  if (is_sequence(patch)) {
    for (const Ref& item : patch->items) expect(item, Node::Kind::Map, path);
  }
  return merge_items(key_tuples(keys, result, patch), keys, result, patch, schema, path);
}

Ref merge(const Ref& dest, const Ref& patch, const Schema& schema, const std::string& path) {
  Node::Kind kind = Node::Kind::Null;
  for (const Ref& source : {dest, patch}) {
    if (!missing_or_null(source)) {
      kind = source->node.kind();
      break;
    }
  }
  expect(dest, kind, path);
  expect(patch, kind, path);
  switch (kind) {
    case Node::Kind::Null:
    case Node::Kind::Map:
      return merge_map(dest, patch, schema_of(schema, dest, patch), path);
    case Node::Kind::Sequence:
      if (std::optional<Strings> keys = schema.merge_keys()) {
        return merge_list(dest, patch, *keys, schema, path);
      }
      return patch ? patch : dest;
    case Node::Kind::Scalar:
      return patch ? patch : dest;
  }
  return dest;
}

}  // namespace

bool apply_strategic_merge(yaml::Node& target, const yaml::Node& patch) {
  Ref dest = to_cell(std::move(target));
  Ref result = merge(dest, to_cell(Node(patch)), Schema{}, "");
  // kustomize keeps only what was merged into the target object itself: a
  // top-level `$patch: replace` yields another node, which it drops, and
  // leaves the target as it was.
  if (result != dest) {
    target = to_node(*dest, true);
    return result != nullptr;
  }
  if (nil_or_empty(result)) return false;
  target = to_node(*result, true);
  return true;
}

}  // namespace fluxop::kustomize
