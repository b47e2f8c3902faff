#include "core/oci/registry.h"

#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/ascii.h"
#include "core/base64.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/file.h"
#include "core/net/text.h"
#include "core/oci/referrers.h"
#include "core/peer_json.h"

namespace fluxop::oci {

namespace {

using nlohmann::json;

std::string accept_manifests() {
  return "Accept: " + std::string(kOciManifest) + ", " + std::string(kDockerManifest) + ", " +
         std::string(kOciIndex) + ", " + std::string(kDockerManifestList);
}

bool is_index(std::string_view media_type) {
  return media_type == kOciIndex || media_type == kDockerManifestList;
}

// The media type without parameters ("; charset=utf-8").
std::string bare_media_type(std::string_view content_type) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  return std::string(type);
}

Descriptor read_descriptor(const json& object, const std::string& where) {
  if (!object.is_object()) throw Error(where + ": not an object");
  Descriptor descriptor;
  if (auto it = object.find("mediaType"); it != object.end() && it->is_string())
    descriptor.media_type = *it;
  auto digest = object.find("digest");
  if (digest == object.end() || !digest->is_string() ||
      !is_sha256_digest(digest->get<std::string>()))
    throw Error(where + ".digest: missing or not a sha256 digest");
  descriptor.digest = *digest;
  auto size = object.find("size");
  if (size == object.end() || !size->is_number_unsigned())
    throw Error(where + ".size: missing or not a size");
  descriptor.size = *size;
  if (auto type = object.find("artifactType"); type != object.end() && type->is_string())
    descriptor.artifact_type = *type;
  if (auto annotations = object.find("annotations");
      annotations != object.end() && annotations->is_object())
    for (const auto& [key, value] : annotations->items())
      if (value.is_string()) descriptor.annotations[key] = value;
  if (auto platform = object.find("platform"); platform != object.end() && platform->is_object()) {
    for (const char* field : {"os", "architecture", "variant"}) {
      auto part = platform->find(field);
      if (part == platform->end() || !part->is_string() || part->get<std::string>().empty())
        continue;
      if (!descriptor.platform.empty()) descriptor.platform += "/";
      descriptor.platform += part->get<std::string>();
    }
  }
  return descriptor;
}

bool is_success(long status) { return status >= 200 && status < 300; }

// fluxopctl asks for no Content-Encoding and decodes none: content a registry
// sends encoded (gzip) anyway is not the bytes its digest is of. Empty when
// the response has none; else what to say of it.
std::string unrequested_encoding(const net::HttpResponse& response) {
  std::string encoding = response.header("content-encoding");
  if (encoding.empty() || lowercase(encoding) == "identity") return "";
  return "sent with Content-Encoding: " + quote(encoding) +
         ", which fluxopctl does not ask for or decode";
}

}  // namespace

// Receives a blob, hashing and counting it as it streams, and keeps its
// bytes (a file, memory).
class VerifyingSink : public net::BodySink {
 public:
  VerifyingSink(std::uint64_t max_bytes, std::string what)
      : max_bytes_(max_bytes), what_(std::move(what)) {}

  void reset() override {
    restart();
    hash_.finish();
    received_ = 0;
  }
  void write(std::string_view bytes) override {
    received_ += bytes.size();
    if (received_ > max_bytes_) {
      throw Error(what_ + ": larger than " + std::to_string(max_bytes_) + " bytes");
    }
    hash_.update(bytes);
    keep(bytes);
  }
  // The digest of what arrived, once it has all arrived.
  std::string finish() {
    done();
    return hash_.finish();
  }
  std::uint64_t received() const { return received_; }
  // Called while the registry has yet to answer: what would otherwise be
  // done as the first bytes arrive.
  virtual void prepare() {}

 protected:
  virtual void restart() = 0;  // a new attempt: what was kept goes
  virtual void keep(std::string_view bytes) = 0;
  virtual void done() {}

 private:
  std::uint64_t max_bytes_;
  std::string what_;
  Sha256 hash_;
  std::uint64_t received_ = 0;
};

namespace {

class VerifyingFileSink final : public VerifyingSink {
 public:
  VerifyingFileSink(std::string path, std::uint64_t max_bytes, std::string what)
      : VerifyingSink(max_bytes, std::move(what)), path_(std::move(path)) {}

 private:
  void restart() override {
    if (opened_) {
      file_.restart();
    } else {
      file_.open(path_);
      opened_ = true;
    }
  }
  void keep(std::string_view bytes) override { file_.write(bytes); }
  void done() override { file_.close(); }

  std::string path_;
  FileWriter file_;
  bool opened_ = false;
};

class VerifyingMemorySink final : public VerifyingSink {
 public:
  VerifyingMemorySink(std::uint64_t size, std::string what)
      : VerifyingSink(size, std::move(what)), size_(size) {}
  std::string bytes;

  // The pages of the string touched now, each a page fault (400 for a
  // 1.6 MB layer, most of a millisecond here), not as the body arrives;
  // what arrived, if anything, is kept.
  void prepare() override {
    std::size_t arrived = bytes.size();
    if (arrived >= size_) return;
    bytes.resize(size_);
    bytes.resize(arrived);
  }

 private:
  void restart() override {
    // Made to measure once the request is sent: the size is checked
    // against the limit by then.
    bytes.clear();
    bytes.reserve(size_);
  }
  void keep(std::string_view more) override { bytes += more; }

  std::uint64_t size_;
};

}  // namespace

std::string describe_failure(const net::HttpResponse& response) {
  std::string message;
  std::string code;
  json body = parse_peer_json(response.body);
  if (body.is_object()) {
    // The registry error format: {"errors":[{"code":"...","message":"..."}]}.
    auto errors = body.find("errors");
    if (errors != body.end() && errors->is_array() && !errors->empty() &&
        errors->front().is_object()) {
      const json& first = errors->front();
      if (auto it = first.find("message"); it != first.end() && it->is_string()) message = *it;
      if (auto it = first.find("code"); it != first.end() && it->is_string()) code = *it;
    } else if (auto it = body.find("details"); it != body.end() && it->is_string()) {
      message = *it;  // token services
    }
  }
  // What Go's HTTPS servers answer a plain HTTP request with.
  if (message.empty() && response.status == 400 &&
      response.body.find("HTTP request to an HTTPS server") != std::string::npos) {
    message =
        "the server speaks HTTPS and was sent plain HTTP (an --insecure-registry host is reached "
        "over plain HTTP)";
  }
  if (message.empty()) {
    switch (response.status) {
      case 401:
        message = "unauthorized";
        break;
      case 403:
        message = "forbidden";
        break;
      case 404:
        message = "not found";
        break;
      default:
        message = "request failed";
    }
  }
  return message + " (HTTP " + std::to_string(response.status) + (code.empty() ? "" : " " + code) +
         ")";
}

RegistryClient::RegistryClient(RegistryOptions options)
    : options_(std::move(options)), http_([this] {
        net::HttpOptions http = options_.http;
        std::vector<std::string> insecure = options_.insecure_registries;
        http.plain_http_allowed = [insecure](std::string_view authority) {
          return plain_http_allowed(authority, insecure);
        };
        return http;
      }()) {}

std::string RegistryClient::scheme(const std::string& registry) {
  if (is_insecure_registry(registry, options_.insecure_registries)) return "http";
  if (!is_loopback_registry(registry)) return "https";
  auto known = loopback_schemes_.find(registry);
  if (known == loopback_schemes_.end()) {
    bool plain = http_.answers_tls_in_plain_http(registry, options_.cancelled);
    known = loopback_schemes_.emplace(registry, plain ? "http" : "https").first;
  }
  return known->second;
}

std::string RegistryClient::base_url(const Reference& ref) {
  return scheme(ref.registry) + "://" + ref.registry + "/v2/" + ref.repository;
}

Credential RegistryClient::credential_for(const Reference& ref) {
  auto it = credentials_.find(ref.registry);
  if (it == credentials_.end()) {
    Credential credential =
        options_.credentials ? options_.credentials(ref.registry) : Credential{};
    it = credentials_.emplace(ref.registry, std::move(credential)).first;
  }
  return it->second;
}

net::HttpResponse RegistryClient::reach(const Reference& ref, const net::HttpRequest& request,
                                        net::BodySink* sink, std::string_view progress) {
  try {
    return http_.send(request, sink, progress);
  } catch (const Error& e) {
    throw Error(ref.str() + ": " + e.what());
  }
}

net::HttpResponse RegistryClient::send(const Reference& ref, net::HttpRequest request,
                                       std::string_view actions, net::BodySink* sink,
                                       std::string_view progress) {
  std::string scope = "repository:" + ref.repository + ":" + std::string(actions);
  std::string key = ref.registry + " " + scope;
  // Issued for the registry: an upload's Location or a redirect to another
  // host goes without it.
  request.authorization.host = ref.registry;
  request.cancelled = options_.cancelled;
  if (auto known = authorizations_.find(key); known != authorizations_.end())
    request.authorization.value = known->second;
  net::HttpResponse response = reach(ref, request, sink, progress);
  if (response.status != 401) return response;
  refuse_foreign_challenge(ref, response);
  request.meanwhile = nullptr;  // ran during the first request, or not at all

  request.authorization.value = authorize(ref, response, scope);
  authorizations_[key] = request.authorization.value;
  response = reach(ref, request, sink, progress);
  if (response.status == 401) {
    refuse_foreign_challenge(ref, response);
    throw Error(ref.str() + ": " + describe_failure(response) + ": the registry refused the " +
                (credential_for(ref).empty() ? "anonymous request" : "credentials") + " for " +
                ref.registry);
  }
  return response;
}

void RegistryClient::refuse_foreign_challenge(const Reference& ref,
                                              const net::HttpResponse& response) {
  // Only the registry's own host may ask for its credentials, and only its
  // challenge names the realm they go to: a 401 from a host a redirect led
  // to (a blob store) would send them to whatever realm that host names.
  if (net::authorization_applies({"-", ref.registry}, response.url)) return;
  throw Error(ref.str() + ": " + net::url_authority(response.url) +
              ", which the registry redirected to, asks for credentials (HTTP 401): "
              "fluxopctl sends the credentials for " +
              ref.registry + " to no other host");
}

std::string RegistryClient::authorize(const Reference& ref,
                                      const net::HttpResponse& challenge_response,
                                      const std::string& scope) {
  std::vector<Challenge> challenges =
      parse_www_authenticate(challenge_response.header("www-authenticate"));
  Credential credential = credential_for(ref);
  for (const Challenge& challenge : challenges) {
    if (challenge.scheme == "bearer" && challenge.params.contains("realm")) {
      return "Bearer " + fetch_token(ref, challenge.params, scope, credential);
    }
  }
  for (const Challenge& challenge : challenges) {
    if (challenge.scheme != "basic") continue;
    if (credential.username.empty() && credential.password.empty()) break;
    return "Basic " + base64_encode(credential.username + ":" + credential.password);
  }
  throw Error(ref.str() + ": " + describe_failure(challenge_response) + ": " +
              (credential.empty() ? "no credentials for " + ref.registry +
                                        " in the Docker config (docker login, or DOCKER_CONFIG)"
                                  : "the registry asks for an authentication scheme fluxopctl "
                                    "does not support"));
}

std::string RegistryClient::fetch_token(const Reference& ref,
                                        const std::map<std::string, std::string>& params,
                                        const std::string& scope, const Credential& credential) {
  net::HttpRequest request;
  request.url = params.at("realm");
  request.max_body = 1 << 20;
  std::string service = params.contains("service") ? params.at("service") : "";
  std::string query = "scope=" + net::url_escape(scope);
  if (!service.empty()) query = "service=" + net::url_escape(service) + "&" + query;
  if (!credential.identity_token.empty()) {
    // An identity token is a refresh token: exchanged with the OAuth2 POST form.
    request.method = "POST";
    request.headers.push_back("Content-Type: application/x-www-form-urlencoded");
    request.body = "grant_type=refresh_token&client_id=fluxopctl&" + query +
                   "&refresh_token=" + net::url_escape(credential.identity_token);
  } else {
    request.url += (request.url.find('?') == std::string::npos ? "?" : "&") + query;
    // The registry's credentials go to the token service it names, as
    // Docker sends them, and to no host that service redirects to.
    if (!credential.username.empty() || !credential.password.empty())
      request.authorization = {
          "Basic " + base64_encode(credential.username + ":" + credential.password),
          net::url_authority(request.url)};
  }
  request.cancelled = options_.cancelled;
  net::HttpResponse response = reach(ref, request);
  std::string where = ref.str() + ": token service " + params.at("realm");
  if (!is_success(response.status)) {
    throw Error(where + ": " + describe_failure(response) +
                (credential.empty() ? ": no credentials for " + ref.registry +
                                          " in the Docker config (docker login, or DOCKER_CONFIG)"
                                    : ": the credentials for " + ref.registry + " were refused"));
  }
  json body = parse_peer_json(response.body);
  for (const char* field : {"token", "access_token"}) {
    if (body.is_object() && body.contains(field) && body[field].is_string() &&
        !body[field].get<std::string>().empty()) {
      return body[field];
    }
  }
  throw Error(where + ": the answer has no token");
}

Manifest parse_manifest(std::string bytes, std::string_view content_type, const std::string& what) {
  Manifest manifest;
  manifest.bytes = std::move(bytes);
  manifest.digest = sha256_digest(manifest.bytes);
  if (manifest.bytes.size() > kMaxManifestBytes)
    throw Error(what + ": larger than " + std::to_string(kMaxManifestBytes) + " bytes");
  std::string why;
  // A manifest is a few levels deep; its values are bounded by its size.
  json document = parse_peer_json(manifest.bytes, &why, {.max_depth = 16});
  if (document.is_discarded()) throw Error(what + ": not JSON: " + why);
  if (!document.is_object()) throw Error(what + ": not a JSON object");
  manifest.media_type = bare_media_type(content_type);
  if (auto it = document.find("mediaType"); it != document.end() && it->is_string())
    manifest.media_type = *it;
  if (auto annotations = document.find("annotations");
      annotations != document.end() && annotations->is_object()) {
    for (const auto& [key, value] : annotations->items()) {
      if (value.is_string()) manifest.annotations[key] = value;
    }
  }
  if (auto type = document.find("artifactType"); type != document.end() && type->is_string())
    manifest.artifact_type = *type;
  if (auto subject = document.find("subject"); subject != document.end())
    manifest.subject = read_descriptor(*subject, what + ": subject");

  if (is_index(manifest.media_type)) {
    auto manifests = document.find("manifests");
    if (manifests == document.end() || !manifests->is_array() || manifests->empty())
      throw Error(what + ": an index without manifests");
    if (manifests->size() > kMaxIndexManifests) {
      throw Error(what + ": an index of more than " + std::to_string(kMaxIndexManifests) +
                  " manifests");
    }
    for (std::size_t i = 0; i < manifests->size(); ++i) {
      manifest.manifests.push_back(
          read_descriptor((*manifests)[i], what + ": manifests[" + std::to_string(i) + "]"));
    }
    return manifest;
  }
  if (manifest.media_type != kOciManifest && manifest.media_type != kDockerManifest) {
    throw Error(what + ": unsupported manifest media type '" + manifest.media_type + "'");
  }
  manifest.config = read_descriptor(document.value("config", json()), what + ": config");
  auto layers = document.find("layers");
  if (layers == document.end() || !layers->is_array()) throw Error(what + ": no layers");
  if (layers->size() > kMaxManifestLayers)
    throw Error(what + ": more than " + std::to_string(kMaxManifestLayers) + " layers");
  for (std::size_t i = 0; i < layers->size(); ++i) {
    manifest.layers.push_back(
        read_descriptor((*layers)[i], what + ": layers[" + std::to_string(i) + "]"));
  }
  return manifest;
}

Manifest RegistryClient::fetch_document(const Reference& ref, const std::string& digest) {
  return fetch_manifest_document(ref, digest, digest, kMaxIndexDepth + 1);
}

std::optional<Manifest> RegistryClient::get_document(const Reference& ref,
                                                     const std::string& identifier,
                                                     const std::string& expected_digest,
                                                     bool missing_ok,
                                                     std::function<void()> meanwhile) {
  net::HttpRequest request;
  request.meanwhile = std::move(meanwhile);
  request.url = base_url(ref) + "/manifests/" + identifier;
  request.headers.push_back(accept_manifests());
  request.max_body = kMaxManifestBytes;
  net::HttpResponse response = send(ref, request, "pull");
  std::string what = ref.str() + ": manifest " + identifier;
  if (missing_ok && response.status == 404) return std::nullopt;
  if (!is_success(response.status)) throw Error(what + ": " + describe_failure(response));
  // Encoded, it can be neither digest-checked nor read.
  if (std::string encoding = unrequested_encoding(response); !encoding.empty())
    throw Error(what + ": " + encoding);

  std::string digest = sha256_digest(response.body);
  if (!expected_digest.empty() && digest != expected_digest) {
    throw Error(what + ": digest mismatch: the registry sent content with digest " + digest);
  }
  std::string announced = response.header("docker-content-digest");
  if (!announced.empty() && announced != digest) {
    throw Error(what + ": digest mismatch: the registry announced " + announced +
                " and sent content with digest " + digest);
  }
  return parse_manifest(std::move(response.body), response.header("content-type"), what);
}

std::optional<Manifest> RegistryClient::find_document(const Reference& ref) {
  return get_document(ref, ref.identifier(), ref.digest, true);
}

std::optional<std::vector<Descriptor>> RegistryClient::fetch_referrers(const Reference& ref,
                                                                       const std::string& digest) {
  net::HttpRequest request;
  request.url = base_url(ref) + "/referrers/" + digest;
  request.headers.push_back("Accept: " + std::string(kOciIndex));
  request.max_body = kMaxManifestBytes;
  net::HttpResponse response = send(ref, request, "pull");
  if (referrers_api_not_served(response.status)) return std::nullopt;
  std::string what = ref.str() + ": referrers of " + digest;
  if (!is_success(response.status)) throw Error(what + ": " + describe_failure(response));
  if (std::string encoding = unrequested_encoding(response); !encoding.empty())
    throw Error(what + ": " + encoding);
  std::string why;
  json index = parse_peer_json(response.body, &why, {.max_depth = 16});
  if (index.is_discarded()) throw Error(what + ": not JSON: " + why);
  if (!index.is_object()) throw Error(what + ": not a JSON object");
  std::vector<Descriptor> referrers;
  auto manifests = index.find("manifests");
  if (manifests == index.end()) return referrers;
  if (!manifests->is_array()) throw Error(what + ": manifests: not an array");
  if (manifests->size() > kMaxIndexManifests)
    throw Error(what + ": more than " + std::to_string(kMaxIndexManifests) + " referrers");
  for (std::size_t i = 0; i < manifests->size(); ++i)
    referrers.push_back(
        read_descriptor((*manifests)[i], what + ": manifests[" + std::to_string(i) + "]"));
  return referrers;
}

Manifest RegistryClient::fetch_manifest_document(const Reference& ref,
                                                 const std::string& identifier,
                                                 const std::string& expected_digest, int indexes,
                                                 std::function<void()> meanwhile) {
  std::string what = ref.str() + ": manifest " + identifier;
  Manifest manifest = *get_document(ref, identifier, expected_digest, false, std::move(meanwhile));
  // Past the depth an index is followed to: fetch_document's, as stored.
  if (!is_index(manifest.media_type) || indexes > kMaxIndexDepth) return manifest;
  if (indexes == kMaxIndexDepth) {
    throw Error(what + ": an index nested more than " + std::to_string(kMaxIndexDepth) +
                " levels deep");
  }
  const std::string& first = manifest.manifests.front().digest;
  return fetch_manifest_document(ref, first, first, indexes + 1);
}

Manifest RegistryClient::fetch_manifest(const Reference& ref, std::function<void()> meanwhile) {
  return fetch_manifest_document(ref, ref.identifier(), ref.digest, 0, std::move(meanwhile));
}

void RegistryClient::receive_blob(const Reference& ref, const Descriptor& blob,
                                  std::uint64_t max_bytes, VerifyingSink& sink,
                                  std::string_view progress) {
  std::string what = ref.str() + ": blob " + blob.digest;
  if (blob.size > max_bytes) {
    throw Error(what + ": " + std::to_string(blob.size) + " bytes, more than the limit of " +
                std::to_string(max_bytes));
  }
  net::HttpRequest request;
  request.url = base_url(ref) + "/blobs/" + blob.digest;
  request.meanwhile = [&sink] { sink.prepare(); };
  // Its errors reach the caller through reach(), which names the reference.
  net::HttpResponse response = send(ref, request, "pull", &sink, progress);
  if (!is_success(response.status)) throw Error(what + ": " + describe_failure(response));
  std::string digest = sink.finish();
  // A blob may be sent with a Content-Encoding that describes it (a .tar.gz
  // as gzip) and arrive whole: only a mismatch makes the encoding the cause.
  std::string encoding = unrequested_encoding(response);
  if (!encoding.empty()) encoding = " (" + encoding + ")";
  if (sink.received() != blob.size) {
    throw Error(what + ": size mismatch: expected " + std::to_string(blob.size) + " bytes, got " +
                std::to_string(sink.received()) + encoding);
  }
  if (digest != blob.digest)
    throw Error(what + ": digest mismatch: received content has " + digest + encoding);
}

void RegistryClient::fetch_blob(const Reference& ref, const Descriptor& blob,
                                const std::string& path, std::uint64_t max_bytes) {
  VerifyingFileSink sink(path, blob.size, "blob " + blob.digest);
  receive_blob(ref, blob, max_bytes, sink, "pulling " + blob.digest.substr(0, 19));
}

std::string RegistryClient::fetch_blob_bytes(const Reference& ref, const Descriptor& blob,
                                             std::uint64_t max_bytes) {
  VerifyingMemorySink sink(blob.size, "blob " + blob.digest);
  receive_blob(ref, blob, max_bytes, sink, {});
  return std::move(sink.bytes);
}

bool RegistryClient::has(const Reference& ref, std::string_view kind, const std::string& digest) {
  net::HttpRequest request;
  request.method = "HEAD";
  request.url = base_url(ref) + "/" + std::string(kind) + "s/" + digest;
  if (kind == "manifest") request.headers.push_back(accept_manifests());
  net::HttpResponse response = send(ref, request, "pull,push");
  if (response.status == 404) return false;
  if (!is_success(response.status)) {
    throw Error(ref.str() + ": " + std::string(kind) + " " + digest + ": " +
                describe_failure(response));
  }
  return true;
}

bool RegistryClient::has_blob(const Reference& ref, const std::string& digest) {
  return has(ref, "blob", digest);
}

bool RegistryClient::has_manifest(const Reference& ref, const std::string& digest) {
  return has(ref, "manifest", digest);
}

bool RegistryClient::mount_blob(const Reference& ref, const std::string& digest,
                                const std::string& from_repository) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = base_url(ref) + "/blobs/uploads/?mount=" + net::url_escape(digest) +
                "&from=" + net::url_escape(from_repository);
  net::HttpResponse response = send(ref, request, "pull,push");
  // 202: an upload session instead, which the caller's push opens anew.
  return response.status == 201;
}

void RegistryClient::push_blob(const Reference& ref, const Descriptor& blob,
                               const std::string& bytes) {
  net::HttpRequest put;
  put.body = bytes;
  upload_blob(ref, blob, std::move(put));
}

void RegistryClient::push_blob_file(const Reference& ref, const Descriptor& blob,
                                    const std::string& path) {
  net::HttpRequest put;
  put.body_file = path;
  upload_blob(ref, blob, std::move(put));
}

void RegistryClient::upload_blob(const Reference& ref, const Descriptor& blob,
                                 net::HttpRequest put) {
  std::string what = ref.str() + ": upload of blob " + blob.digest;
  net::HttpRequest start;
  start.method = "POST";
  start.url = base_url(ref) + "/blobs/uploads/";
  net::HttpResponse session = send(ref, start, "pull,push");
  std::string location = session.header("location");
  if (session.status != 202 || location.empty())
    throw Error(what + ": " + describe_failure(session));

  put.method = "PUT";
  put.url = net::resolve_url(session.url, location);
  put.url += (put.url.find('?') == std::string::npos ? "?" : "&") +
             ("digest=" + net::url_escape(blob.digest));
  put.headers.push_back("Content-Type: application/octet-stream");
  net::HttpResponse done = send(ref, std::move(put), "pull,push");
  if (done.status != 201) throw Error(what + ": " + describe_failure(done));
}

std::string RegistryClient::push_manifest(const Reference& ref, const std::string& bytes,
                                          std::string_view media_type) {
  std::string digest = sha256_digest(bytes);
  put_manifest(ref, bytes, media_type, digest);
  return digest;
}

void RegistryClient::push_manifest(const Reference& ref, const Manifest& manifest,
                                   std::mutex& tag_updates) {
  net::HttpResponse response =
      put_manifest(ref, manifest.bytes, manifest.media_type, manifest.digest);
  if (response.header("oci-subject").empty()) list_in_referrers_tag(ref, manifest, tag_updates);
}

net::HttpResponse RegistryClient::put_manifest(const Reference& ref, const std::string& bytes,
                                               std::string_view media_type,
                                               const std::string& digest) {
  net::HttpRequest put;
  put.method = "PUT";
  put.url = base_url(ref) + "/manifests/" + ref.identifier();
  put.headers.push_back("Content-Type: " + std::string(media_type));
  put.body = bytes;
  net::HttpResponse response = send(ref, put, "pull,push");
  if (response.status != 201)
    throw Error(ref.str() + ": manifest upload: " + describe_failure(response));
  std::string announced = response.header("docker-content-digest");
  if (!announced.empty() && announced != digest) {
    throw Error(ref.str() + ": the registry stored the manifest as " + announced + ", expected " +
                digest);
  }
  return response;
}

void RegistryClient::list_in_referrers_tag(const Reference& ref, const Manifest& manifest,
                                           std::mutex& tag_updates) {
  if (!manifest.subject) return;
  const std::string& subject = manifest.subject->digest;
  // A registry that lists referrers without saying so as they are pushed
  // (go-containerregistry's) needs no tag.
  if (fetch_referrers(ref, subject)) return;
  std::lock_guard<std::mutex> held(tag_updates);
  Reference tag{ref.registry, ref.repository, referrers_tag(subject), ""};
  std::optional<std::string> index = referrers_index_adding(
      find_document(tag), referrer_descriptor(manifest), tag.str() + ": referrers tag");
  if (index) push_manifest(tag, *index, kOciIndex);
}

}  // namespace fluxop::oci
