#include "core/reconcile/secrets.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdint>

#include "core/base64.h"
#include "core/error.h"
#include "core/utf8.h"

namespace fluxop::reconcile {

using nlohmann::json;
using nlohmann::ordered_json;

const std::vector<SecretKindInfo>& secret_kinds() {
  static const std::vector<SecretKindInfo> kinds = {
      {SecretKind::basic_auth, "basic-auth",
       "username and password: a Git repository over HTTPS (.spec.sync.pullSecret)"},
      {SecretKind::ssh, "ssh", "SSH key and known hosts: a Git repository over SSH"},
      {SecretKind::githubapp, "githubapp",
       "GitHub App credentials: a Git repository with .spec.sync.provider github"},
      {SecretKind::registry, "registry",
       "docker config JSON: an OCI sync source, .spec.distribution.imagePullSecret and "
       ".artifactPullSecret"},
      {SecretKind::tls, "tls", "TLS client certificate and key, or a CA certificate"},
      {SecretKind::proxy, "proxy", "an HTTP/S proxy's address and credentials"},
      {SecretKind::sops, "sops", "Age or GPG private keys for SOPS decryption"},
  };
  return kinds;
}

namespace {

std::string_view secret_type(SecretKind kind, const std::map<std::string, std::string>& data) {
  switch (kind) {
    case SecretKind::basic_auth:
      return "kubernetes.io/basic-auth";
    case SecretKind::registry:
      return "kubernetes.io/dockerconfigjson";
    case SecretKind::tls:
      return data.contains("tls.crt") ? "kubernetes.io/tls" : "Opaque";
    case SecretKind::ssh:
    case SecretKind::githubapp:
    case SecretKind::proxy:
    case SecretKind::sops:
      break;
  }
  return "Opaque";
}

ordered_json sorted_object(const std::map<std::string, std::string>& members) {
  ordered_json object = ordered_json::object();
  for (const auto& [key, value] : members) object[key] = value;
  return object;
}

}  // namespace

ordered_json secret_object(SecretKind kind, const std::string& name, const std::string& ns,
                           const std::map<std::string, std::string>& string_data,
                           const std::map<std::string, std::string>& labels,
                           const std::map<std::string, std::string>& annotations) {
  ordered_json metadata = ordered_json::object();
  if (!annotations.empty()) metadata["annotations"] = sorted_object(annotations);
  if (!labels.empty()) metadata["labels"] = sorted_object(labels);
  metadata["name"] = name;
  metadata["namespace"] = ns;
  // A value that is not UTF-8 (a DER certificate, a binary key) cannot be
  // a JSON string: it goes under data, base64, byte for byte.
  std::map<std::string, std::string> text, bytes;
  for (const auto& [key, value] : string_data) {
    if (first_invalid_utf8(value)) {
      bytes[key] = base64_encode(value);
    } else {
      text[key] = value;
    }
  }
  ordered_json secret = {{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", metadata}};
  if (!bytes.empty()) secret["data"] = sorted_object(bytes);
  if (!text.empty() || bytes.empty()) secret["stringData"] = sorted_object(text);
  secret["type"] = secret_type(kind, string_data);
  return secret;
}

namespace {

bool certificate_pair(const std::string& certificate, const std::string& key) {
  BIO* cert_bio = BIO_new_mem_buf(certificate.data(), static_cast<int>(certificate.size()));
  BIO* key_bio = BIO_new_mem_buf(key.data(), static_cast<int>(key.size()));
  X509* cert = cert_bio ? PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr) : nullptr;
  EVP_PKEY* pkey = key_bio ? PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr) : nullptr;
  bool pair = cert && pkey && X509_check_private_key(cert, pkey) == 1;
  EVP_PKEY_free(pkey);
  X509_free(cert);
  BIO_free(key_bio);
  BIO_free(cert_bio);
  return pair;
}

// Sets data[key] to value unless it is empty.
void set_given(std::map<std::string, std::string>& data, const std::string& key,
               const std::string& value) {
  if (!value.empty()) data[key] = value;
}

}  // namespace

std::map<std::string, std::string> secret_data(SecretKind kind, const SecretInput& input) {
  std::map<std::string, std::string> data;
  switch (kind) {
    case SecretKind::basic_auth:
      data = {{"username", input.username}, {"password", input.password}};
      break;
    case SecretKind::registry:
      data[".dockerconfigjson"] = docker_config_json(input.server, input.username, input.password);
      break;
    case SecretKind::proxy:
      data["address"] = input.address;
      set_given(data, "username", input.username);
      set_given(data, "password", input.password);
      break;
    case SecretKind::ssh:
      data["identity"] = input.identity;
      data["known_hosts"] = input.known_hosts;
      if (input.identity_pub) data["identity.pub"] = *input.identity_pub;
      set_given(data, "password", input.password);
      break;
    case SecretKind::githubapp:
      data["githubAppID"] = input.app_id;
      data["githubAppPrivateKey"] = input.app_private_key;
      set_given(data, "githubAppInstallationOwner", input.installation_owner);
      set_given(data, "githubAppInstallationID", input.installation_id);
      set_given(data, "githubAppBaseURL", input.app_base_url);
      break;
    case SecretKind::tls:
      if (input.tls_crt || input.tls_key) {
        std::string certificate = input.tls_crt.value_or(""), key = input.tls_key.value_or("");
        if (!certificate_pair(certificate, key))
          throw Error("not a PEM certificate and its private key");
        data["tls.crt"] = certificate;
        data["tls.key"] = key;
      }
      set_given(data, "ca.crt", input.ca_crt);
      break;
    case SecretKind::sops:
      for (const SecretInput::SopsKey& key : input.sops_keys)
        data[sops_key_name(key.key, key.age)] = key.key;
      break;
  }
  return data;
}

std::string sops_key_name(std::string_view key, bool age) {
  // Adler-32 (RFC 1950), as the key's name.
  constexpr std::uint32_t kModulus = 65521;
  std::uint32_t a = 1, b = 0;
  for (unsigned char c : key) {
    a = (a + c) % kModulus;
    b = (b + a) % kModulus;
  }
  return std::to_string((b << 16) | a) + (age ? ".agekey" : ".asc");
}

std::string docker_config_json(const std::string& server, const std::string& username,
                               const std::string& password) {
  // Two-space indented, members in the order the docker CLI writes them,
  // and <, > and & escaped as Go's encoder escapes them: the same bytes as
  // the upstream CLI's.
  ordered_json entry = {{"username", username},
                        {"password", password},
                        {"auth", base64_encode(username + ":" + password)}};
  std::string text = ordered_json{{"auths", {{server, entry}}}}.dump(
      2, ' ', false, ordered_json::error_handler_t::replace);
  std::string escaped;
  for (char c : text) {
    if (c == '<')
      escaped += "\\u003c";
    else if (c == '>')
      escaped += "\\u003e";
    else if (c == '&')
      escaped += "\\u0026";
    else
      escaped += c;
  }
  return escaped;
}

std::string apply_secret(kube::Cluster& cluster, const ordered_json& secret, bool immutable) {
  json object = json::parse(secret.dump());
  json data = object.value("data", json::object());
  json text = object.value("stringData", json::object());
  for (const auto& [key, value] : text.items()) data[key] = base64_encode(value.get<std::string>());
  object.erase("stringData");
  object["data"] = std::move(data);
  if (immutable) object["immutable"] = true;
  kube::ObjectKey key = kube::object_key(object);
  std::optional<json> live = cluster.get(key);
  if (live && (live->value("immutable", false) || live->value("type", "Opaque") != object["type"]))
    cluster.remove(key);
  cluster.apply(object);
  return live ? "configured" : "created";
}

std::vector<NamedSecret> named_secrets(const instance::FluxInstance& flux) {
  std::vector<NamedSecret> secrets;
  if (flux.sync && !flux.sync->pull_secret.empty()) {
    const instance::Sync& sync = *flux.sync;
    NamedSecret secret{".spec.sync.pullSecret",
                       sync.pull_secret,
                       "the " + sync.kind + " " + (sync.name.empty() ? flux.ns : sync.name),
                       {},
                       ""};
    if (sync.kind == "OCIRepository") {
      secret.key_sets = {{".dockerconfigjson"}};
      secret.type = "kubernetes.io/dockerconfigjson";
    } else if (sync.kind == "Bucket") {
      // The generic provider's keys; the cloud providers' vary.
      if (sync.provider.empty() || sync.provider == "generic")
        secret.key_sets = {{"accesskey", "secretkey"}};
    } else if (sync.provider == "github") {
      secret.key_sets = {{"githubAppID", "githubAppPrivateKey"}};
    } else {
      secret.key_sets = {
          {"username", "password"}, {"identity", "known_hosts"}, {"bearerToken"}, {"ca.crt"}};
    }
    secrets.push_back(std::move(secret));
  }
  if (!flux.distribution.image_pull_secret.empty()) {
    secrets.push_back({".spec.distribution.imagePullSecret",
                       flux.distribution.image_pull_secret,
                       "the kubelet, for the controllers' images",
                       {{".dockerconfigjson"}},
                       "kubernetes.io/dockerconfigjson"});
  }
  if (!flux.distribution.artifact_pull_secret.empty()) {
    secrets.push_back({".spec.distribution.artifactPullSecret",
                       flux.distribution.artifact_pull_secret,
                       "the pull of the distribution artifact",
                       {{".dockerconfigjson"}},
                       "kubernetes.io/dockerconfigjson"});
  }
  return secrets;
}

namespace {

bool has_key(const json& live, const std::string& key) {
  for (const char* field : {"data", "stringData"}) {
    auto found = live.find(field);
    if (found != live.end() && found->is_object() && found->contains(key)) return true;
  }
  return false;
}

std::string key_set_text(const std::vector<std::string>& keys) {
  std::string text;
  for (std::size_t i = 0; i < keys.size(); ++i)
    text += (i == 0 ? "" : i + 1 == keys.size() ? " and " : ", ") + keys[i];
  return text;
}

}  // namespace

std::optional<std::string> secret_problem(const NamedSecret& secret,
                                          const std::optional<json>& live) {
  if (!live) return "does not exist";
  if (!secret.type.empty()) {
    std::string type = live->is_object() ? live->value("type", "") : "";
    if (type != secret.type)
      return "is of type " + (type.empty() ? std::string("Opaque") : type) + ", not " + secret.type;
  }
  if (secret.key_sets.empty()) return std::nullopt;
  for (const std::vector<std::string>& keys : secret.key_sets) {
    bool all = true;
    for (const std::string& key : keys) all = all && has_key(*live, key);
    if (all) return std::nullopt;
  }
  std::string wanted;
  for (std::size_t i = 0; i < secret.key_sets.size(); ++i)
    wanted += (i == 0 ? "" : "; or ") + key_set_text(secret.key_sets[i]);
  return "has not the keys " + secret.reader + " reads: " + wanted;
}

}  // namespace fluxop::reconcile
