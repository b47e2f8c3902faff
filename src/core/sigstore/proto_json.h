// Sigstore's documents are protobuf messages in their JSON form: bytes in
// base64, 64-bit integers as strings. One reader of that form, naming the
// document and the field whatever is wrong: "<name>: <field>: <what>".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/sigstore/crypto.h"

namespace fluxop::sigstore {

class ProtoJson {
 public:
  explicit ProtoJson(std::string name) : name_(std::move(name)) {}

  // The document, an object; throws when it is not JSON or not an object.
  nlohmann::json parse(std::string_view text) const;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const;
  static std::string path(const std::string& field, std::string_view key);
  static std::string at(const std::string& field, std::size_t index);

  // A member: nullptr when absent or null.
  const nlohmann::json* find(const nlohmann::json& object, const char* key) const;
  // Required members, of the type their name says.
  const nlohmann::json& object(const nlohmann::json& object, const char* key,
                               const std::string& field) const;
  std::string string(const nlohmann::json& object, const char* key, const std::string& field) const;
  Bytes bytes(const nlohmann::json& object, const char* key, const std::string& field) const;
  // A value in base64 (an item of an array of bytes).
  Bytes decode(const nlohmann::json& value, const std::string& field) const;
  std::int64_t integer(const nlohmann::json& object, const char* key,
                       const std::string& field) const;
  // An RFC 3339 time, in seconds since the epoch.
  std::int64_t time(const nlohmann::json& object, const char* key, const std::string& field) const;
  // An array; empty when absent.
  const nlohmann::json& array(const nlohmann::json& object, const char* key,
                              const std::string& field) const;

 private:
  std::string name_;
};

}  // namespace fluxop::sigstore
