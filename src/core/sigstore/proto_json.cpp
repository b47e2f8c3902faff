#include "core/sigstore/proto_json.h"

#include <charconv>

#include "core/base64.h"
#include "core/error.h"
#include "core/peer_json.h"
#include "core/rfc3339.h"

namespace fluxop::sigstore {

using nlohmann::json;

nlohmann::json ProtoJson::parse(std::string_view text) const {
  std::string why;
  json document = parse_peer_json(text, &why);
  if (document.is_discarded()) fail("", why.empty() ? "not JSON" : why);
  if (!document.is_object()) fail("", "not a JSON object");
  return document;
}

void ProtoJson::fail(const std::string& field, const std::string& what) const {
  throw Error(name_ + (field.empty() ? "" : ": " + field) + ": " + what);
}

std::string ProtoJson::path(const std::string& field, std::string_view key) {
  return field.empty() ? std::string(key) : field + "." + std::string(key);
}

std::string ProtoJson::at(const std::string& field, std::size_t index) {
  return field + "[" + std::to_string(index) + "]";
}

const json* ProtoJson::find(const json& object, const char* key) const {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

const json& ProtoJson::object(const json& object, const char* key, const std::string& field) const {
  const json* value = find(object, key);
  if (value == nullptr) fail(path(field, key), "missing");
  if (!value->is_object()) fail(path(field, key), "not an object");
  return *value;
}

std::string ProtoJson::string(const json& object, const char* key, const std::string& field) const {
  const json* value = find(object, key);
  if (value == nullptr) fail(path(field, key), "missing");
  if (!value->is_string()) fail(path(field, key), "not a string");
  return value->get<std::string>();
}

Bytes ProtoJson::bytes(const json& object, const char* key, const std::string& field) const {
  const json* value = find(object, key);
  if (value == nullptr) fail(path(field, key), "missing");
  return decode(*value, path(field, key));
}

Bytes ProtoJson::decode(const json& value, const std::string& field) const {
  if (!value.is_string()) fail(field, "not a string");
  // Protobuf's JSON form takes base64 in either alphabet, padded or not, and
  // Go's decoder (Sigstore's) skips line breaks (`base64` wraps its output).
  std::string text;
  for (char c : value.get_ref<const std::string&>()) {
    if (c == '\n' || c == '\r') continue;
    text += c == '-' ? '+' : c == '_' ? '/' : c;
  }
  text.append((4 - text.size() % 4) % 4, '=');
  auto decoded = base64_decode(text);
  if (!decoded) fail(field, "not base64");
  return *decoded;
}

std::int64_t ProtoJson::integer(const json& object, const char* key,
                                const std::string& field) const {
  const json* value = find(object, key);
  if (value == nullptr) fail(path(field, key), "missing");
  if (value->is_number_integer()) return value->get<std::int64_t>();
  if (value->is_string()) {
    const std::string& text = value->get_ref<const std::string&>();
    std::int64_t number = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error == std::errc() && end == text.data() + text.size() && !text.empty()) return number;
  }
  fail(path(field, key), "not an integer");
}

std::int64_t ProtoJson::time(const json& object, const char* key, const std::string& field) const {
  auto parsed = parse_rfc3339(string(object, key, field));
  if (!parsed) fail(path(field, key), "not an RFC 3339 time");
  return std::chrono::system_clock::to_time_t(*parsed);
}

const json& ProtoJson::array(const json& object, const char* key, const std::string& field) const {
  static const json kEmpty = json::array();
  const json* value = find(object, key);
  if (value == nullptr) return kEmpty;
  if (!value->is_array()) fail(path(field, key), "not an array");
  return *value;
}

}  // namespace fluxop::sigstore
