// Reading a YAML document against a structural schema: each map's keys must
// be among its schema's fields, values are checked for their type, and each
// error names the field's path (".spec.components[2]").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/instance/instance.h"
#include "core/yaml/node.h"

namespace fluxop::instance {

// Where errors and warnings about one document go.
class Diagnostics {
 public:
  Diagnostics(std::string_view source, bool allow_unknown_fields,
              std::vector<std::string>& warnings)
      : source_(source), allow_unknown_fields_(allow_unknown_fields), warnings_(warnings) {}

  // Throws fluxop::Error "<source>: <path>: <message>".
  [[noreturn]] void fail(std::string_view path, std::string_view message) const;
  // An error, or a warning when unknown fields are allowed.
  void unknown_field(std::string_view path, std::string_view suggestion) const;

 private:
  std::string source_;
  bool allow_unknown_fields_;
  std::vector<std::string>& warnings_;
};

// The path of `key` below `path`: ".key", or `["key"]` for keys that are not
// plain words (label keys such as app.kubernetes.io/name) or long (quote()).
std::string key_path(std::string_view path, std::string_view key);

// What a value is, for type errors: string, number, boolean, map, sequence or null.
std::string_view type_name(const yaml::Node& node);

// The text of a string value; other types are an error naming `path`.
std::string expect_string(const yaml::Node& node, std::string_view path,
                          const Diagnostics& diagnostics);

// Fails unless `value` is one of `allowed`.
void expect_one_of(std::string_view value, std::span<const std::string_view> allowed,
                   std::string_view path, const Diagnostics& diagnostics);

class MapReader {
 public:
  using Fields = std::span<const std::string_view>;

  // Fails unless `node` is a map; reports its keys that are not `fields`
  // first, suggesting a field for typos, so that a misspelt field is named
  // before the missing field it was meant to be.
  MapReader(const yaml::Node& node, std::string path, const Diagnostics& diagnostics,
            Fields fields);

  const Diagnostics& diagnostics() const { return diagnostics_; }
  std::string path_of(std::string_view key) const { return key_path(path_, key); }

  // The value at `key`, one of the fields; nullptr when missing or null:
  // the API server prunes nulls.
  const yaml::Node* value(std::string_view key);
  std::optional<std::string> string(std::string_view key);
  // A string that must be present and not empty.
  std::string required_string(std::string_view key);
  // A string that, when present, must be one of `allowed`.
  std::optional<std::string> one_of(std::string_view key,
                                    std::span<const std::string_view> allowed);
  bool boolean(std::string_view key, bool fallback);
  std::optional<MapReader> map(std::string_view key, Fields fields);
  // The items of a sequence, empty when missing.
  const std::vector<yaml::Node>& sequence(std::string_view key);
  std::vector<std::string> strings(std::string_view key);
  // A map of strings with keys of any name (labels, annotations).
  StringMap string_map(std::string_view key);

 private:
  const yaml::Node& node_;
  std::string path_;
  const Diagnostics& diagnostics_;
};

}  // namespace fluxop::instance
