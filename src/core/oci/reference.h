// An OCI artifact reference, oci://HOST[:PORT]/REPO[:TAG][@sha256:DIGEST],
// and which registries may be reached over plain HTTP.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fluxop::oci {

struct Reference {
  std::string registry;    // "ghcr.io", "127.0.0.1:5000", "[::1]:5000"
  std::string repository;  // "controlplaneio-fluxcd/flux-operator-manifests"
  std::string tag;         // "latest" when neither a tag nor a digest is given
  std::string digest;      // "sha256:<64 hex>", or empty

  // Parses an oci:// URL; throws fluxop::Error("<url>: <what is wrong>").
  static Reference parse(std::string_view url);

  // The digest when there is one, else the tag: what the registry is asked for.
  const std::string& identifier() const { return digest.empty() ? tag : digest; }

  // oci://registry/repository, then :tag and/or @digest.
  std::string str() const;
  // The same reference pinned to `manifest_digest`, without the tag.
  std::string pinned(std::string_view manifest_digest) const;
};

// The registry's host without the port ("[::1]:5000" gives "::1").
std::string registry_host(std::string_view registry);

// A registry on a loopback address (localhost, 127.0.0.0/8, [::1]): reached
// over HTTPS first, and over plain HTTP when it answers the TLS handshake in
// plain HTTP, as docker, containerd and crane reach it.
bool is_loopback_registry(std::string_view registry);

// A registry `insecure` (--insecure-registry: HOST or HOST:PORT) names:
// reached over plain HTTP.
bool is_insecure_registry(std::string_view registry, const std::vector<std::string>& insecure);

// Plain HTTP is allowed for loopback registries and those named in
// `insecure`; every other registry is reached over HTTPS only.
bool plain_http_allowed(std::string_view registry, const std::vector<std::string>& insecure);

// Whether `text` is "sha256:" and 64 lowercase hex digits.
bool is_sha256_digest(std::string_view text);

}  // namespace fluxop::oci
