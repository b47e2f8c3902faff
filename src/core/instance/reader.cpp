#include "core/instance/reader.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "core/error.h"
#include "core/suggest.h"
#include "core/yaml/scalar.h"

namespace fluxop::instance {

namespace {

using yaml::Node;

bool is_plain_word(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
}

// The field closest to `key`, when it is close enough to be a typo.
std::string_view suggestion_for(std::string_view key, std::span<const std::string_view> fields) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (std::string_view candidate : fields) {
    // The distance is at least the difference in length: a long key is no
    // typo, and measuring it would take time in proportion to its length.
    std::size_t longer = std::max(key.size(), candidate.size());
    if (longer - std::min(key.size(), candidate.size()) >= best_distance) continue;
    std::size_t d = edit_distance(key, candidate, /*ignore_case=*/true);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string join(std::span<const std::string_view> words) {
  std::string out;
  for (std::string_view word : words) out += (out.empty() ? "" : ", ") + std::string(word);
  return out;
}

}  // namespace

void Diagnostics::fail(std::string_view path, std::string_view message) const {
  throw Error(source_ + ": " + std::string(path) + (path.empty() ? "" : ": ") +
              std::string(message));
}

void Diagnostics::unknown_field(std::string_view path, std::string_view suggestion) const {
  std::string hint = suggestion.empty() ? "" : " (did you mean " + std::string(suggestion) + "?)";
  if (!allow_unknown_fields_) fail(path, "unknown field" + hint);
  warnings_.push_back(source_ + ": " + std::string(path) + ": unknown field, ignored" + hint);
}

std::string key_path(std::string_view path, std::string_view key) {
  // A long key is quoted, so that only its start is named.
  if (is_plain_word(key) && key.size() <= kQuotedCharacters) {
    return std::string(path) + "." + std::string(key);
  }
  return std::string(path) + "[" + quote(key) + "]";
}

std::string_view type_name(const Node& node) {
  if (!node.is_scalar()) return yaml::kind_name(node);
  switch (node.tag()) {
    case yaml::Tag::Int:
    case yaml::Tag::Float:
      return "number";
    case yaml::Tag::Bool:
      return "boolean";
    case yaml::Tag::String:
    case yaml::Tag::Timestamp:  // JSON has no timestamps: they arrive as strings
      break;
  }
  return "string";
}

std::string expect_string(const Node& node, std::string_view path, const Diagnostics& diagnostics) {
  if (type_name(node) != "string") {
    diagnostics.fail(path, "expected a string, got " + std::string(type_name(node)));
  }
  return node.text();
}

void expect_one_of(std::string_view value, std::span<const std::string_view> allowed,
                   std::string_view path, const Diagnostics& diagnostics) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    diagnostics.fail(path, "must be one of " + join(allowed) + ", not " + quote(value));
  }
}

MapReader::MapReader(const Node& node, std::string path, const Diagnostics& diagnostics,
                     Fields fields)
    : node_(node), path_(std::move(path)), diagnostics_(diagnostics) {
  if (!node.is_map()) {
    diagnostics.fail(path_, "expected a map, got " + std::string(type_name(node)));
  }
  for (const auto& entry : node.entries()) {
    const std::string& key = entry.first;
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) {
      diagnostics.unknown_field(path_of(key), suggestion_for(key, fields));
    }
  }
}

const Node* MapReader::value(std::string_view key) {
  const Node* found = node_.get(key);
  return found == nullptr || found->is_null() ? nullptr : found;
}

std::optional<std::string> MapReader::string(std::string_view key) {
  const Node* found = value(key);
  if (found == nullptr) return std::nullopt;
  return expect_string(*found, path_of(key), diagnostics_);
}

std::string MapReader::required_string(std::string_view key) {
  std::optional<std::string> found = string(key);
  if (!found) diagnostics_.fail(path_of(key), "required field is missing");
  if (found->empty()) diagnostics_.fail(path_of(key), "must not be empty");
  return *found;
}

std::optional<std::string> MapReader::one_of(std::string_view key,
                                             std::span<const std::string_view> allowed) {
  std::optional<std::string> found = string(key);
  if (found) expect_one_of(*found, allowed, path_of(key), diagnostics_);
  return found;
}

bool MapReader::boolean(std::string_view key, bool fallback) {
  const Node* found = value(key);
  if (found == nullptr) return fallback;
  if (type_name(*found) != "boolean") {
    diagnostics_.fail(path_of(key), "expected a boolean, got " + std::string(type_name(*found)));
  }
  return yaml::canonical_text(*found) == "true";
}

std::optional<MapReader> MapReader::map(std::string_view key, Fields fields) {
  const Node* found = value(key);
  if (found == nullptr) return std::nullopt;
  return MapReader(*found, path_of(key), diagnostics_, fields);
}

const std::vector<Node>& MapReader::sequence(std::string_view key) {
  static const std::vector<Node> kNone;
  const Node* found = value(key);
  if (found == nullptr) return kNone;
  if (!found->is_sequence()) {
    diagnostics_.fail(path_of(key), "expected a sequence, got " + std::string(type_name(*found)));
  }
  return found->items();
}

std::vector<std::string> MapReader::strings(std::string_view key) {
  std::vector<std::string> out;
  const std::vector<Node>& items = sequence(key);
  for (std::size_t i = 0; i < items.size(); ++i) {
    out.push_back(
        expect_string(items[i], path_of(key) + "[" + std::to_string(i) + "]", diagnostics_));
  }
  return out;
}

StringMap MapReader::string_map(std::string_view key) {
  StringMap out;
  const Node* found = value(key);
  if (found == nullptr) return out;
  std::string path = path_of(key);
  if (!found->is_map()) {
    diagnostics_.fail(path, "expected a map, got " + std::string(type_name(*found)));
  }
  for (const auto& [name, item] : found->entries()) {
    out[name] = expect_string(item, key_path(path, name), diagnostics_);
  }
  return out;
}

}  // namespace fluxop::instance
