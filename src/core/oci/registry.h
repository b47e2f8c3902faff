// A client of the OCI Distribution API v2, enough to pull and push one
// artifact or copy an image: manifests by tag or digest (OCI and Docker v2
// manifests; an index or manifest list resolves to its first manifest, or is
// read as it is), blobs streamed to a file, and the upload and cross-repository
// mount of blobs and manifests. Every byte received is checked
// against its digest. Authentication as Docker does it: the anonymous or
// credentialed bearer-token flow a registry's WWW-Authenticate asks for, or
// HTTP Basic.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/net/http.h"
#include "core/oci/credentials.h"
#include "core/oci/reference.h"
#include "core/oci/www_authenticate.h"

namespace fluxop::oci {

inline constexpr std::string_view kOciManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view kOciIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view kDockerManifest =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view kDockerManifestList =
    "application/vnd.docker.distribution.manifest.list.v2+json";

// What a manifest or index may hold before it is refused: an artifact has
// one layer and an index one manifest per platform, so these are far above
// any real one and keep a hostile registry from making us fetch or hold more.
inline constexpr std::uint64_t kMaxManifestBytes = 4 << 20;
inline constexpr int kMaxIndexDepth = 4;  // indexes followed before a manifest
inline constexpr std::size_t kMaxIndexManifests = 1000;
inline constexpr std::size_t kMaxManifestLayers = 128;

struct Descriptor {
  std::string media_type;
  std::string digest;
  std::uint64_t size = 0;
  std::string platform;       // an index's child: "os/architecture[/variant]", or empty
  std::string artifact_type;  // a referrer's (an index's child)
  std::map<std::string, std::string> annotations;  // cosign's signature layers carry its proofs
};

struct Manifest {
  std::string digest;  // sha256 of `bytes`
  std::string media_type;
  std::string bytes;
  Descriptor config;
  std::vector<Descriptor> layers;
  std::vector<Descriptor> manifests;  // an index's children
  std::map<std::string, std::string> annotations;
  std::string artifact_type;          // an artifact's (OCI 1.1)
  std::optional<Descriptor> subject;  // what a referrer (a signature, an SBOM) refers to
};

struct RegistryOptions {
  std::vector<std::string> insecure_registries;  // HOST or HOST:PORT reached over plain HTTP
  // The credential for HOST[:PORT]; none when empty or unset.
  std::function<Credential(std::string_view registry)> credentials;
  net::HttpOptions http;  // its plain_http_allowed is set from insecure_registries
  // Polled while each request runs: true ends it with an Error (a command
  // stopped by a signal); unset: never.
  std::function<bool()> cancelled;
};

class VerifyingSink;  // registry.cpp's: a blob received, checked as it streams

class RegistryClient {
 public:
  explicit RegistryClient(RegistryOptions options);

  // The image manifest `ref` names, verified against the reference's digest
  // and the registry's Docker-Content-Digest. `meanwhile`, when set, runs
  // while the registry answers the first request (net::HttpRequest::meanwhile).
  Manifest fetch_manifest(const Reference& ref, std::function<void()> meanwhile = {});
  // The manifest or index `digest` in the reference's repository as stored,
  // an index not followed, verified against the digest.
  Manifest fetch_document(const Reference& ref, const std::string& digest);
  bool has_manifest(const Reference& ref, const std::string& digest);
  // The manifest or index the reference names (by tag or digest), as
  // stored, an index not followed; nullopt when the registry has none (404).
  std::optional<Manifest> find_document(const Reference& ref);
  // The manifests in the reference's repository whose subject is `digest`
  // (the referrers API); nullopt when the registry does not serve that API,
  // which the referrers tag fallback (sha256-<hex>) stands in for.
  std::optional<std::vector<Descriptor>> fetch_referrers(const Reference& ref,
                                                         const std::string& digest);

  // Streams the blob into `path`, checking its size and digest as it arrives;
  // throws (leaving a partial file for the caller to remove) on a mismatch.
  void fetch_blob(const Reference& ref, const Descriptor& blob, const std::string& path,
                  std::uint64_t max_bytes);

  // A blob in memory (a signature's payload, a layer to index before it is
  // written whole), at most `max_bytes`, checked against its size and digest.
  std::string fetch_blob_bytes(const Reference& ref, const Descriptor& blob,
                               std::uint64_t max_bytes);

  bool has_blob(const Reference& ref, const std::string& digest);
  void push_blob(const Reference& ref, const Descriptor& blob, const std::string& bytes);
  // The same from a file, streamed.
  void push_blob_file(const Reference& ref, const Descriptor& blob, const std::string& path);
  // Asks the registry to link the blob `digest` of its repository
  // `from_repository` into the reference's; false when it will not (it
  // does not have the blob there, or does not mount).
  bool mount_blob(const Reference& ref, const std::string& digest,
                  const std::string& from_repository);
  // Puts the manifest under the reference's tag (or digest); returns its
  // digest.
  std::string push_manifest(const Reference& ref, const std::string& bytes,
                            std::string_view media_type);
  // Puts a manifest read from another registry (its digest is known). A referrer (it has a
  // subject) that the registry does not list through the referrers API (its
  // answer has no OCI-Subject, and the API is not served) is added to the
  // subject's referrers tag, as the OCI distribution spec asks of the client.
  // The tag is read, added to and written back while `tag_updates` is held:
  // the clients that push referrers of the same subject at once (a mirror's
  // workers, each with a client of its own) share one, so that none drops
  // another's referrer. (Another process writing the same tag at once still can.)
  void push_manifest(const Reference& ref, const Manifest& manifest, std::mutex& tag_updates);

  // Lists `manifest`, a referrer in the reference's repository (it has a
  // subject; else nothing to do), in its subject's referrers tag, unless the
  // registry serves the referrers API or the tag lists it already;
  // `tag_updates` as push_manifest's.
  void list_in_referrers_tag(const Reference& ref, const Manifest& manifest,
                             std::mutex& tag_updates);

  int requests_sent() const { return http_.requests_sent(); }

 private:
  // PUTs the manifest `bytes`, whose sha256 is `digest`; its answer.
  net::HttpResponse put_manifest(const Reference& ref, const std::string& bytes,
                                 std::string_view media_type, const std::string& digest);
  // Sends through the HTTP client; its errors are prefixed with the reference.
  net::HttpResponse reach(const Reference& ref, const net::HttpRequest& request,
                          net::BodySink* sink = nullptr, std::string_view progress = {});
  // Sends with the authorization for `actions` on the repository, obtained
  // when the registry asks for it.
  net::HttpResponse send(const Reference& ref, net::HttpRequest request, std::string_view actions,
                         net::BodySink* sink = nullptr, std::string_view progress = {});
  // Throws unless the 401 `response` came from the registry's own host.
  static void refuse_foreign_challenge(const Reference& ref, const net::HttpResponse& response);
  std::string authorize(const Reference& ref, const net::HttpResponse& challenge_response,
                        const std::string& scope);
  std::string fetch_token(const Reference& ref, const std::map<std::string, std::string>& params,
                          const std::string& scope, const Credential& credential);
  // Receives the blob into `sink`, refusing it larger than `max_bytes`,
  // then checks its size and digest.
  void receive_blob(const Reference& ref, const Descriptor& blob, std::uint64_t max_bytes,
                    VerifyingSink& sink, std::string_view progress);
  // A monolithic upload: a session, then `put` (its body set) to its location.
  void upload_blob(const Reference& ref, const Descriptor& blob, net::HttpRequest put);
  // HEAD of a "blob" or "manifest".
  bool has(const Reference& ref, std::string_view kind, const std::string& digest);
  // The document `identifier` names, checked against `expected_digest`
  // (when set) and the registry's Docker-Content-Digest; nullopt for a 404
  // when `missing_ok`. `meanwhile`: net::HttpRequest::meanwhile.
  std::optional<Manifest> get_document(const Reference& ref, const std::string& identifier,
                                       const std::string& expected_digest, bool missing_ok,
                                       std::function<void()> meanwhile = {});
  // `indexes`: the indexes followed to reach it.
  Manifest fetch_manifest_document(const Reference& ref, const std::string& identifier,
                                   const std::string& expected_digest, int indexes,
                                   std::function<void()> meanwhile = {});
  std::string base_url(const Reference& ref);
  // "http" or "https": plain HTTP for an --insecure-registry host, and for a
  // loopback one that answers a TLS handshake in plain HTTP (tried once).
  std::string scheme(const std::string& registry);
  Credential credential_for(const Reference& ref);

  RegistryOptions options_;
  net::HttpClient http_;
  std::map<std::string, std::string> authorizations_;    // "registry scope" -> Authorization
  std::map<std::string, Credential> credentials_;        // per registry, looked up once
  std::map<std::string, std::string> loopback_schemes_;  // per loopback registry, tried once
};

// "<what>: <registry's message> (HTTP <status> <code>)" for a failed response.
std::string describe_failure(const net::HttpResponse& response);

// The image manifest or index in `bytes` (its media type from the document,
// else `content_type`), decoded within the bounds above; an index has its
// children in `manifests`. Throws fluxop::Error prefixed with `what`.
Manifest parse_manifest(std::string bytes, std::string_view content_type, const std::string& what);

}  // namespace fluxop::oci
