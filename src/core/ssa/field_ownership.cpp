#include "core/ssa/field_ownership.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/quantity.h"

namespace fluxop::ssa {

using nlohmann::json;

namespace {

// The metadata fields server-side apply tracks; the others (name,
// namespace, creationTimestamp) are identity or the server's.
constexpr const char* kTrackedMetadata[] = {"labels", "annotations", "ownerReferences",
                                            "finalizers"};

// A fieldsV1 node's children, without "." (the node itself).
json children(const json& fields) {
  json out = json::object();
  if (!fields.is_object()) return out;
  for (const auto& [key, value] : fields.items()) {
    if (key != ".") out[key] = value;
  }
  return out;
}

bool all_prefixed(const json& nodes, std::string_view prefix) {
  for (const auto& [key, value] : nodes.items()) {
    if (!key.starts_with(prefix)) return false;
  }
  return true;
}

// A Kubernetes quantity ("1000m", "64Mi", "1e3") in billionths, the
// precision the API server keeps; nullopt when the text is none or the
// value does not fit.
std::optional<__int128> nano_quantity(const std::string& text) {
  std::optional<Quantity> quantity = parse_quantity(text);
  if (!quantity || quantity->integer.size() + quantity->fraction.size() > 24) return std::nullopt;
  __int128 value = 0;
  for (std::string_view digits : {quantity->integer, quantity->fraction}) {
    for (char c : digits) value = value * 10 + (c - '0');
  }
  // Bounded first, so that the sum below cannot overflow.
  if (quantity->decimal_exponent > 30 || quantity->decimal_exponent < -60) return std::nullopt;
  auto exponent = static_cast<int>(9 - static_cast<std::int64_t>(quantity->fraction.size()) +
                                   quantity->decimal_exponent);  // to billionths
  if (exponent > 30) return std::nullopt;
  for (; exponent > 0; --exponent) value *= 10;
  for (; exponent < 0; ++exponent) {
    if (value % 10 != 0) return std::nullopt;  // finer than the server keeps
    value /= 10;
  }
  __int128 binary = static_cast<__int128>(1) << quantity->binary_exponent;
  if (value > (static_cast<__int128>(1) << 100) / binary) return std::nullopt;
  value *= binary;
  return quantity->negative ? -value : value;
}

// Fields of atomic structs that the API server fills in when left out, by
// the struct's field name: live has them where ours does not.
const std::map<std::string, json, std::less<>> kAtomicDefaults = {
    {"fieldRef", {{"apiVersion", "v1"}}},
    {"resourceFieldRef", {{"divisor", "0"}}},
};

// Whether the live value of the field `name` is what the server makes of
// ours: the same, but for the defaults above and quantities written in
// canonical form ("1000m" is "1").
bool same_value(const json& ours, const json& live, std::string_view name) {
  if (ours == live) return true;
  if (ours.is_object() && live.is_object()) {
    auto defaults = kAtomicDefaults.find(name);
    for (const auto& [key, value] : live.items()) {
      if (ours.contains(key)) continue;
      if (defaults == kAtomicDefaults.end() || defaults->second.value(key, json()) != value) {
        return false;
      }
    }
    for (const auto& [key, value] : ours.items()) {
      auto found = live.find(key);
      if (found == live.end() || !same_value(value, *found, key)) return false;
    }
    return true;
  }
  if (ours.is_array() && live.is_array() && ours.size() == live.size()) {
    for (std::size_t i = 0; i < ours.size(); ++i) {
      if (!same_value(ours[i], live[i], name)) return false;
    }
    return true;
  }
  if (ours.is_string() && live.is_string()) {
    std::optional<__int128> quantity = nano_quantity(ours.get<std::string>());
    return quantity && quantity == nano_quantity(live.get<std::string>());
  }
  return false;
}

bool owned_as_is(const json& ours, const json& fields, const json& live, std::string_view name);

// Whether `item` carries the key's fields; `defaulted` lets it leave some
// out for the server to fill (a port's protocol).
bool carries(const json& item, const json& key, bool defaulted) {
  if (!item.is_object()) return false;
  for (const auto& [field, value] : key.items()) {
    auto found = item.find(field);
    if (found == item.end() ? !defaulted : *found != value) return false;
  }
  return true;
}

// A list whose items the server keys by some of their fields (k:{...}):
// ours and the owned keys pair one to one, in the live list's order.
bool keyed_list_as_is(const json& ours, const json& nodes, const json& live,
                      std::string_view name) {
  if (nodes.size() != ours.size()) return false;
  std::vector<std::pair<json, const json*>> keys;
  for (const auto& [text, node] : nodes.items()) {
    json key = json::parse(text.substr(2), nullptr, false);
    if (!key.is_object() || key.empty()) return false;
    keys.emplace_back(std::move(key), &node);
  }
  std::vector<bool> paired(keys.size(), false);
  std::size_t next_live = 0;
  for (const json& item : ours) {
    std::size_t match = keys.size();
    for (std::size_t k = 0; k < keys.size(); ++k) {
      if (!carries(item, keys[k].first, true)) continue;
      if (match != keys.size()) return false;  // ambiguous
      match = k;
    }
    if (match == keys.size() || paired[match]) return false;
    paired[match] = true;
    std::size_t at = next_live;
    while (at < live.size() && !carries(live[at], keys[match].first, false)) ++at;
    if (at == live.size() || !owned_as_is(item, *keys[match].second, live[at], name)) return false;
    next_live = at + 1;
  }
  return true;
}

// A set (v:value): the same values, in the live list's order.
bool set_list_as_is(const json& ours, const json& nodes, const json& live) {
  if (nodes.size() != ours.size()) return false;
  std::size_t next_live = 0;
  for (const json& item : ours) {
    if (!nodes.contains("v:" + item.dump())) return false;
    std::size_t at = next_live;
    while (at < live.size() && live[at] != item) ++at;
    if (at == live.size()) return false;
    next_live = at + 1;
  }
  return true;
}

// Whether `fields` (a fieldsV1 node) is exactly what `ours` sets, and
// `live` holds every value of ours.
bool owned_as_is(const json& ours, const json& fields, const json& live, std::string_view name) {
  if (ours.is_null()) return false;  // a null asks the server to remove
  json nodes = children(fields);
  if (nodes.empty()) return same_value(ours, live, name);  // a scalar, an atomic map or list
  if (ours.is_object()) {
    if (!live.is_object() || !all_prefixed(nodes, "f:")) return false;
    // An empty map applied once stays owned (the operator's first apply of a
    // Deployment owns `strategy: {}`, which the server then defaults). Its
    // owner applying without it changes no value: the server defaults the
    // map again. Owned scalars, or maps with owned children, do count.
    std::size_t owned = nodes.size();
    for (const auto& [name, node] : nodes.items()) {
      std::string key = name.substr(2);
      auto live_value = live.find(key);
      if (!ours.contains(key) && !names_fields(node) && live_value != live.end() &&
          live_value->is_object()) {
        --owned;
      }
    }
    if (owned != ours.size()) return false;
    for (const auto& [key, value] : ours.items()) {
      auto node = nodes.find("f:" + key);
      auto live_value = live.find(key);
      if (node == nodes.end() || live_value == live.end()) return false;
      if (!owned_as_is(value, *node, *live_value, key)) return false;
    }
    return true;
  }
  if (ours.is_array() && live.is_array()) {
    if (all_prefixed(nodes, "k:")) return keyed_list_as_is(ours, nodes, live, name);
    if (all_prefixed(nodes, "v:")) return set_list_as_is(ours, nodes, live);
  }
  return false;
}

// What server-side apply tracks of an object: not its identity, nor a
// status the main resource ignores.
json tracked(const json& object) {
  json ours = object;
  for (const char* identity : {"apiVersion", "kind", "status"}) ours.erase(identity);
  if (ours.contains("metadata")) {
    json metadata = json::object();
    for (const char* field : kTrackedMetadata) {
      if (object["metadata"].contains(field)) metadata[field] = object["metadata"][field];
    }
    if (metadata.empty()) {
      ours.erase("metadata");
    } else {
      ours["metadata"] = std::move(metadata);
    }
  }
  return ours;
}

void drop_unapplied(json& value, const json& fields, const json& ours) {
  if (!fields.is_object()) return;
  for (const auto& [name, node] : fields.items()) {
    if (name.starts_with("f:") && value.is_object()) {
      std::string key = name.substr(2);
      auto in_value = value.find(key);
      if (in_value == value.end()) continue;
      if (!ours.is_object() || !ours.contains(key)) {
        value.erase(key);
      } else {
        drop_unapplied(*in_value, node, ours[key]);
      }
    } else if (name.starts_with("k:") && value.is_array()) {
      json key = json::parse(name.substr(2), nullptr, false);
      if (!key.is_object()) continue;
      auto item = std::find_if(value.begin(), value.end(),
                               [&key](const json& one) { return carries(one, key, false); });
      if (item == value.end()) continue;
      const json* applied = nullptr;
      if (ours.is_array()) {
        for (const json& one : ours) {
          if (carries(one, key, true)) applied = &one;
        }
      }
      if (!applied) {
        value.erase(item);
      } else {
        drop_unapplied(*item, node, *applied);
      }
    } else if (name.starts_with("v:") && value.is_array()) {
      json set_value = json::parse(name.substr(2), nullptr, false);
      bool applied =
          ours.is_array() && std::find(ours.begin(), ours.end(), set_value) != ours.end();
      if (!applied) {
        auto item = std::find(value.begin(), value.end(), set_value);
        if (item != value.end()) value.erase(item);
      }
    }
  }
}

void write_as_applied(json& live, const json& ours, std::string_view name) {
  if (live == ours) return;
  if (same_value(ours, live, name)) {
    live = ours;
  } else if (live.is_object() && ours.is_object()) {
    for (auto& [key, value] : live.items()) {
      if (auto applied = ours.find(key); applied != ours.end())
        write_as_applied(value, *applied, key);
    }
  } else if (live.is_array() && ours.is_array() && live.size() == ours.size()) {
    for (std::size_t i = 0; i < live.size(); ++i) write_as_applied(live[i], ours[i], name);
  }
}

// `value` as far as `fields` names it; nullopt when it names none of it.
std::optional<json> owned_value(const json& value, const json& fields) {
  json nodes = children(fields);
  if (nodes.empty()) return value;  // a leaf, an atomic map or list: whole
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [name, node] : nodes.items()) {
      if (!name.starts_with("f:")) continue;
      auto found = value.find(name.substr(2));
      if (found == value.end()) continue;
      if (std::optional<json> part = owned_value(*found, node)) out[name.substr(2)] = *part;
    }
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const json& item : value) {
      for (const auto& [name, node] : nodes.items()) {
        if (name.starts_with("v:")) {
          if (json::parse(name.substr(2), nullptr, false) == item) out.push_back(item);
        } else if (name.starts_with("k:")) {
          json key = json::parse(name.substr(2), nullptr, false);
          if (!key.is_object() || !carries(item, key, false)) continue;
          if (std::optional<json> part = owned_value(item, node)) out.push_back(*part);
        } else if (name.starts_with("i:")) {
          continue;  // an index: lists keyed so are atomic in practice
        }
      }
    }
    return out;
  }
  return value;
}

}  // namespace

json owned_part(const json& live, const json& fields) {
  json out = owned_value(live, fields).value_or(json::object());
  if (!out.is_object()) out = json::object();
  for (const char* identity : {"apiVersion", "kind"}) {
    if (live.contains(identity)) out[identity] = live[identity];
  }
  if (live.contains("metadata") && live["metadata"].is_object()) {
    for (const char* identity : {"name", "namespace"}) {
      if (live["metadata"].contains(identity))
        out["metadata"][identity] = live["metadata"][identity];
    }
  }
  return out;
}

json in_applied_form(json live, const json& ours) {
  write_as_applied(live, ours, "");
  return live;
}

void merge_fields(json& into, const json& fields) {
  if (!fields.is_object()) return;
  if (!into.is_object()) into = json::object();
  for (const auto& [name, node] : fields.items()) merge_fields(into[name], node);
}

bool names_fields(const json& fields) { return !children(fields).empty(); }

json without_unapplied(json merged, const json& fields, const json& object) {
  drop_unapplied(merged, fields, tracked(object));
  return merged;
}

bool apply_is_noop(const json& object, const json& live, std::string_view manager) {
  if (!object.is_object() || !live.is_object()) return false;
  auto metadata = live.find("metadata");
  if (metadata == live.end() || !metadata->is_object()) return false;
  auto managed_fields = metadata->find("managedFields");
  if (managed_fields == metadata->end() || !managed_fields->is_array()) return false;
  const json* entry = nullptr;
  for (const json& managed : *managed_fields) {
    if (managed.is_object() && managed.value("manager", "") == manager &&
        managed.value("operation", "") == "Apply" && managed.value("subresource", "").empty()) {
      entry = &managed;
    }
  }
  if (!entry || entry->value("apiVersion", "") != object.value("apiVersion", "")) return false;

  return owned_as_is(tracked(object), entry->value("fieldsV1", json::object()), live, "");
}

}  // namespace fluxop::ssa
