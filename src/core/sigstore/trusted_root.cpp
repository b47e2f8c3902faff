#include "core/sigstore/trusted_root.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sigstore/proto_json.h"

namespace fluxop::sigstore {

namespace {

using nlohmann::json;

constexpr std::string_view kMediaTypePrefix = "application/vnd.dev.sigstore.trustedroot";

constexpr std::pair<std::string_view, std::string_view> kEmbedded[] = {
#include "sigstore_trusted_root.inc"
};

// Reads a validFor: its start is required (an interval open at both ends
// would trust a key for ever, before it existed too).
TimeRange read_range(const ProtoJson& reader, const json& object, const std::string& field) {
  std::string here = ProtoJson::path(field, "validFor");
  const json& valid = reader.object(object, "validFor", field);
  TimeRange range;
  range.start = reader.time(valid, "start", here);
  if (reader.find(valid, "end")) range.end = reader.time(valid, "end", here);
  return range;
}

std::string optional_string(const ProtoJson& reader, const json& object, const char* key) {
  const json* value = reader.find(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : "";
}

LogKey read_log(const ProtoJson& reader, const json& entry, const std::string& field) {
  if (!entry.is_object()) reader.fail(field, "not an object");
  LogKey log;
  log.base_url = optional_string(reader, entry, "baseUrl");
  log.log_id = reader.bytes(reader.object(entry, "logId", field), "keyId", field + ".logId");
  std::string here = field + ".publicKey";
  const json& key = reader.object(entry, "publicKey", field);
  Bytes der = reader.bytes(key, "rawBytes", here);
  const nlohmann::json* details = reader.find(key, "keyDetails");
  bool pkcs1 = details != nullptr && details->is_string() &&
               details->get<std::string>().rfind("PKCS1_RSA", 0) == 0;
  PublicKey decoded = pkcs1 ? rsa_public_key_from_der(der) : public_key_from_der(der);
  if (!decoded) reader.fail(here + ".rawBytes", "not a DER public key");
  log.key = shared(std::move(decoded));
  log.valid = read_range(reader, key, here);
  return log;
}

Authority read_authority(const ProtoJson& reader, const json& entry, const std::string& field) {
  if (!entry.is_object()) reader.fail(field, "not an object");
  Authority authority;
  authority.uri = optional_string(reader, entry, "uri");
  std::string here = field + ".certChain";
  const json& certificates =
      reader.array(reader.object(entry, "certChain", field), "certificates", here);
  for (std::size_t i = 0; i < certificates.size(); ++i) {
    std::string at = ProtoJson::at(here + ".certificates", i);
    Certificate certificate = certificate_from_der(reader.bytes(certificates[i], "rawBytes", at));
    if (!certificate) reader.fail(at + ".rawBytes", "not a DER certificate");
    authority.chain.push_back(shared(std::move(certificate)));
  }
  if (authority.chain.empty()) reader.fail(here + ".certificates", "empty");
  authority.valid = read_range(reader, entry, field);
  return authority;
}

}  // namespace

const LogKey* TrustedRoot::transparency_log(std::string_view log_id) const {
  for (const LogKey& log : transparency_logs)
    if (log.log_id == log_id) return &log;
  return nullptr;
}

TrustedRoot parse_trusted_root(std::string_view text, const std::string& name) {
  ProtoJson reader(name);
  json document = reader.parse(text);
  std::string media_type = reader.string(document, "mediaType", "");
  if (media_type.rfind(kMediaTypePrefix, 0) != 0)
    reader.fail("mediaType", "not a trusted root: " + quote(media_type));
  TrustedRoot root;
  auto logs = [&](const char* key, std::vector<LogKey>& out) {
    const json& entries = reader.array(document, key, "");
    for (std::size_t i = 0; i < entries.size(); ++i)
      out.push_back(read_log(reader, entries[i], ProtoJson::at(key, i)));
  };
  auto authorities = [&](const char* key, std::vector<Authority>& out) {
    const json& entries = reader.array(document, key, "");
    for (std::size_t i = 0; i < entries.size(); ++i)
      out.push_back(read_authority(reader, entries[i], ProtoJson::at(key, i)));
  };
  logs("tlogs", root.transparency_logs);
  logs("ctlogs", root.ct_logs);
  authorities("certificateAuthorities", root.certificate_authorities);
  authorities("timestampAuthorities", root.timestamp_authorities);
  return root;
}

const TrustedRoot& public_good_trusted_root() {
  static const TrustedRoot root = [] {
    for (const auto& [file, text] : kEmbedded)
      if (file == "trusted_root.json")
        return parse_trusted_root(text, "share/sigstore/trusted_root.json");
    throw Error("share/sigstore/trusted_root.json: not compiled in");
  }();
  return root;
}

}  // namespace fluxop::sigstore
