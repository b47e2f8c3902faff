#include "core/instance/rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/yaml/parse.h"

namespace fluxop::instance {

namespace {

// The CRD's CEL rules. The sync name's immutability (self == oldSelf) is a
// rule about updates, with no meaning for a file.
void check_cel_rules(const FluxInstance& instance, const Diagnostics& diagnostics) {
  if (instance.name != "flux") {
    diagnostics.fail(".metadata.name", "must be flux, the only name the Flux Operator accepts");
  }
  if (instance.sharding && instance.sharding->storage == "persistent" && !instance.storage) {
    diagnostics.fail(".spec.sharding.storage", "persistent requires .spec.storage to be set");
  }
  const Cluster& cluster = instance.cluster;
  if (cluster.multitenant_workload_identity && !cluster.object_level_workload_identity) {
    diagnostics.fail(".spec.cluster.multitenantWorkloadIdentity",
                     "requires .spec.cluster.objectLevelWorkloadIdentity to be true");
  }
  if (const auto& sync = instance.sync) {
    if (sync->provider == "gcp" && sync->kind != "OCIRepository" && sync->kind != "Bucket") {
      diagnostics.fail(".spec.sync.provider", "gcp is only supported for OCIRepository and Bucket");
    }
    if (sync->provider == "github" && sync->kind != "GitRepository") {
      diagnostics.fail(".spec.sync.provider", "github is only supported for GitRepository");
    }
  }
}

// Upstream renders one set of objects per component and per shard: a
// repeated name yields duplicate objects and a failed build, an empty shard
// name a set that overwrites the main one.
void check_names(const std::vector<std::string>& names, std::string_view path,
                 const Diagnostics& diagnostics) {
  // A set, not a search of the names before: the list is as long as the
  // file makes it.
  std::unordered_set<std::string_view> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string item = std::string(path) + "[" + std::to_string(i) + "]";
    if (names[i].empty()) diagnostics.fail(item, "must not be empty");
    if (!seen.insert(names[i]).second) diagnostics.fail(item, "duplicate " + names[i]);
  }
}

// Names that end up in object names, label keys and values or paths: a value
// Kubernetes would refuse is named here rather than failing the apply, and
// one such as "../x" never reaches a path. Empty values take the defaults.
void check_kubernetes_names(const FluxInstance& instance, const Diagnostics& diagnostics) {
  auto check = [&](std::string_view value, std::string_view path, const NameRule& rule) {
    if (!value.empty() && !rule.valid(value)) diagnostics.fail(path, rule.requirement);
  };
  const Distribution& distribution = instance.distribution;
  check(distribution.image_pull_secret, ".spec.distribution.imagePullSecret", kDnsSubdomain);
  check(distribution.artifact_pull_secret, ".spec.distribution.artifactPullSecret", kDnsSubdomain);
  const Cluster& cluster = instance.cluster;
  check(cluster.domain, ".spec.cluster.domain", kDnsSubdomain);
  check(cluster.tenant_default_service_account, ".spec.cluster.tenantDefaultServiceAccount",
        kDnsSubdomain);
  check(cluster.tenant_default_decryption_service_account,
        ".spec.cluster.tenantDefaultDecryptionServiceAccount", kDnsSubdomain);
  check(cluster.tenant_default_kubeconfig_service_account,
        ".spec.cluster.tenantDefaultKubeConfigServiceAccount", kDnsSubdomain);
  if (const auto& sharding = instance.sharding) {
    check(sharding->key, ".spec.sharding.key", kLabelKey);
    // Each shard is a suffix of Deployment and Service names and a label value.
    for (std::size_t i = 0; i < sharding->shards.size(); ++i) {
      check(sharding->shards[i], ".spec.sharding.shards[" + std::to_string(i) + "]", kDnsLabel);
    }
  }
  if (const auto& sync = instance.sync) {
    check(sync->name, ".spec.sync.name", kDnsSubdomain);
    check(sync->pull_secret, ".spec.sync.pullSecret", kDnsSubdomain);
  }
}

// The API server's limit on an object's annotations, keys and values together.
constexpr std::size_t kMaxAnnotationBytes = 256 * 1024;

// Labels and annotations of the instance and of every object rendered
// (commonMetadata): the API server refuses an object with a key that is no
// qualified name, a label value that is no label value, or too much in its
// annotations.
void check_metadata(const StringMap& labels, const StringMap& annotations, std::string_view path,
                    const Diagnostics& diagnostics) {
  std::string labels_path = std::string(path) + ".labels";
  for (const auto& [key, value] : labels) {
    if (!kLabelKey.valid(key)) diagnostics.fail(key_path(labels_path, key), kLabelKey.requirement);
    if (!kLabelValue.valid(value)) {
      diagnostics.fail(key_path(labels_path, key), kLabelValue.requirement);
    }
  }
  std::string annotations_path = std::string(path) + ".annotations";
  std::size_t bytes = 0;
  for (const auto& [key, value] : annotations) {
    if (!kAnnotationKey.valid(key)) {
      diagnostics.fail(key_path(annotations_path, key), kAnnotationKey.requirement);
    }
    bytes += key.size() + value.size();
  }
  if (bytes > kMaxAnnotationBytes) {
    diagnostics.fail(annotations_path, "must be at most 256 KiB, keys and values together (" +
                                           std::to_string(bytes) + " bytes)");
  }
}

// The size of the source-controller's volume claim: a quantity, and a
// storage request the API server takes only when greater than zero.
void check_storage(const Storage& storage, const Diagnostics& diagnostics) {
  if (!kDnsSubdomain.valid(storage.storage_class)) {
    diagnostics.fail(".spec.storage.class", kDnsSubdomain.requirement);
  }
  // Spaces around the size are no part of it: upstream's template, which
  // writes it unquoted, drops them.
  std::string_view text = storage.size;
  text.remove_prefix(std::min(text.find_first_not_of(" \t"), text.size()));
  text.remove_suffix(text.size() - (text.find_last_not_of(" \t") + 1));
  std::optional<Quantity> size = parse_quantity(text);
  if (!size || !is_positive(*size)) {
    diagnostics.fail(
        ".spec.storage.size",
        "must be a quantity greater than zero, such as 10Gi or 500M, not " + quote(storage.size));
  }
}

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; });
}

// Whether `address`, what follows "scheme://" (or a bare endpoint), starts
// with a host: after any user info, before any port, path, query or fragment.
bool has_host(std::string_view address) {
  std::string_view authority = address.substr(0, address.find_first_of("/?#"));
  if (std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority.starts_with('[')  // an IPv6 address
                              ? authority.substr(0, authority.find(']') + 1)
                              : authority.substr(0, authority.find(':'));
  return !host.empty() && host != "[]" && authority.find(' ') == std::string_view::npos;
}

// A port as a URL parser takes it: decimal, 1 to 65535.
bool is_port(std::string_view text) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  int port = std::stoi(std::string(text));
  return port >= 1 && port <= 65535;
}

// A host name or IPv4 address (dot-separated parts of letters, digits and
// '-', not at a part's edges), or an IPv6 address in brackets.
bool is_host(std::string_view host) {
  if (host.starts_with('[')) {
    return host.size() > 2 && host.ends_with(']') &&
           std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
             return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
           });
  }
  if (host.empty() || host.size() > 253) return false;
  for (std::size_t start = 0;;) {
    std::string_view part = host.substr(start, host.find('.', start) - start);
    bool well_formed = !part.empty() && part.front() != '-' && part.back() != '-' &&
                       std::all_of(part.begin(), part.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
                       });
    if (!well_formed) return false;
    start += part.size() + 1;
    if (start > host.size()) return true;
  }
}

// host[:port] and nothing else: what a Bucket's endpoint is to the S3 client
// the source-controller gives it to (no path, no user, a port that exists).
bool is_host_port(std::string_view address) {
  std::size_t colon = address.rfind(':');
  if (colon != std::string_view::npos && address.find(']', colon) == std::string_view::npos) {
    return is_host(address.substr(0, colon)) && is_port(address.substr(colon + 1));
  }
  return is_host(address);
}

// What follows `url`'s scheme when it is one of `schemes`.
std::optional<std::string_view> after_scheme(std::string_view url,
                                             std::span<const std::string_view> schemes) {
  for (std::string_view scheme : schemes) {
    if (url.starts_with(scheme) && url.substr(scheme.size()).starts_with("://")) {
      return url.substr(scheme.size() + 3);
    }
  }
  return std::nullopt;
}

// The sync URL becomes the source's .spec.url, which the CRDs of the Flux
// sources restrict to the schemes below (GitRepository, OCIRepository), or a
// Bucket's .spec.endpoint, a host the source-controller connects to. None of
// them has a control character: Go's URL parser refuses them, and a line
// break would change the rendered source.
void check_sync_url(const Sync& sync, const Diagnostics& diagnostics) {
  static constexpr std::array<std::string_view, 3> kGitSchemes = {"http", "https", "ssh"};
  static constexpr std::array<std::string_view, 1> kOciSchemes = {"oci"};
  static constexpr std::array<std::string_view, 2> kBucketSchemes = {"http", "https"};
  std::string_view url = sync.url;
  std::string requirement;
  std::optional<std::string_view> address;
  if (sync.kind == "GitRepository") {
    address = after_scheme(url, kGitSchemes);
    requirement =
        "must be an http://, https:// or ssh:// URL with a host for a GitRepository "
        "(ssh://git@host/path for git@host:path)";
  } else if (sync.kind == "OCIRepository") {
    address = after_scheme(url, kOciSchemes);
    requirement = "must be an oci:// URL with a host for an OCIRepository";
  } else {
    address = url.find("://") == std::string_view::npos ? url : after_scheme(url, kBucketSchemes);
    requirement = "must be a host, with an optional port or http:// or https://, for a Bucket";
  }
  bool valid = sync.kind == "Bucket" ? address && is_host_port(*address)
                                     : !has_control_character(url) && address && has_host(*address);
  if (!valid) {
    diagnostics.fail(".spec.sync.url", requirement + ", not " + quote(url));
  }
}

// The registry is the start of every image name rendered,
// "<registry>/<component>": with its optional trailing '/', a prefix that
// leaves an image reference's name (is_image_name), at most 255 characters
// long, as a container runtime parses it.
void check_registry(std::string_view registry, const Diagnostics& diagnostics) {
  constexpr std::size_t kMaxNameLength = 255;
  constexpr std::string_view kLongestComponent = "/image-automation-controller";
  constexpr std::size_t kMaxLength = kMaxNameLength - kLongestComponent.size();
  std::string_view prefix =
      registry.ends_with('/') ? registry.substr(0, registry.size() - 1) : registry;
  if (prefix.size() > kMaxLength ||
      !is_image_name(std::string(prefix) + std::string(kLongestComponent))) {
    diagnostics.fail(".spec.distribution.registry",
                     "must be an image repository such as ghcr.io/fluxcd: an optional "
                     "host[:port], then lowercase path components, at most " +
                         std::to_string(kMaxLength) + " characters, not " + quote(registry));
  }
}

// What `value` reads as where the operator writes it unquoted into the
// YAML of the sync objects ("path: <value>"); nullopt when it reads back as
// the same text.
std::optional<std::string> yaml_reading(std::string_view value) {
  yaml::Node read;
  try {
    read = yaml::parse_document("value: " + std::string(value) + "\n", "value");
  } catch (const Error&) {
    return "invalid YAML";
  }
  const yaml::Node* field = read.is_map() ? read.get("value") : nullptr;
  if (!field) return "invalid YAML";
  switch (field->kind()) {
    case yaml::Node::Kind::Null:
      return std::string("null");
    case yaml::Node::Kind::Map:
      return std::string("a map");
    case yaml::Node::Kind::Sequence:
      return std::string("a list");
    case yaml::Node::Kind::Scalar:
      break;
  }
  switch (field->tag()) {
    case yaml::Tag::String:
      if (field->text() == value) return std::nullopt;
      return quote(field->text());
    case yaml::Tag::Int:
      return std::string("an integer");
    case yaml::Tag::Float:
      return std::string("a number");
    case yaml::Tag::Bool:
      return std::string("a boolean");
    case yaml::Tag::Timestamp:
      return std::string("a timestamp");
  }
  return std::nullopt;
}

// The sync fields are written into the rendered source and Kustomization
// as upstream's text template writes them: unquoted. A line break would add
// fields of its own (no Git ref, OCI tag or bucket name has one: git refuses
// control characters in ref names), and a value with a meaning in YAML
// ("a #b", "null", "true", "[a, b]", "1.0") would change the field's text or
// type, or fail as YAML: upstream renders such a value wrong, so it is
// refused here, and every value that passes renders as upstream renders it.
void check_sync_text(const Sync& sync, const Diagnostics& diagnostics) {
  std::string written_into = sync.kind.empty() ? "the sync objects" : "the " + sync.kind;
  for (const auto& [value, path, rendered] :
       {std::tuple{&sync.ref, ".spec.sync.ref", written_into},
        std::tuple{&sync.path, ".spec.sync.path", std::string("the Kustomization")},
        std::tuple{&sync.url, ".spec.sync.url", written_into},
        std::tuple{&sync.name, ".spec.sync.name", written_into + " and the Kustomization"},
        std::tuple{&sync.pull_secret, ".spec.sync.pullSecret", written_into}}) {
    if (has_control_character(*value)) {
      diagnostics.fail(
          path, "must not contain control characters (line breaks, tabs), not " + quote(*value));
    }
    // An empty name or pull secret is not written (the name defaults).
    if (value->empty() && (value == &sync.name || value == &sync.pull_secret)) continue;
    if (std::optional<std::string> reading = yaml_reading(*value)) {
      diagnostics.fail(path,
                       "must read as the same text in YAML, where the operator writes it "
                       "unquoted into " +
                           rendered + ": " + quote(*value) + " reads as " + *reading);
    }
  }
}

}  // namespace

void check_rules(const FluxInstance& instance, const Diagnostics& diagnostics) {
  check_cel_rules(instance, diagnostics);
  check_names(instance.components, ".spec.components", diagnostics);
  if (instance.sharding)
    check_names(instance.sharding->shards, ".spec.sharding.shards", diagnostics);
  check_kubernetes_names(instance, diagnostics);
  check_registry(instance.distribution.registry, diagnostics);
  check_metadata(instance.labels, instance.annotations, ".metadata", diagnostics);
  if (const auto& common = instance.common_metadata) {
    check_metadata(common->labels, common->annotations, ".spec.commonMetadata", diagnostics);
  }
  if (instance.storage) check_storage(*instance.storage, diagnostics);
  if (instance.sync) {
    check_sync_url(*instance.sync, diagnostics);
    check_sync_text(*instance.sync, diagnostics);
  }
}

namespace {

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]+ runs joined by one separator each: '.', '_', "__" or dashes.
bool is_path_component(std::string_view part) {
  std::size_t i = 0;
  for (;;) {
    std::size_t run = i;
    while (i < part.size() && is_lower_alnum(part[i])) ++i;
    if (i == run) return false;
    if (i == part.size()) return true;
    if (part[i] == '.') {
      ++i;
    } else if (part[i] == '_') {
      i += part.substr(i).starts_with("__") ? 2 : 1;
    } else if (part[i] == '-') {
      while (i < part.size() && part[i] == '-') ++i;
    } else {
      return false;
    }
  }
}

bool is_path(std::string_view path) {
  for (;;) {
    std::size_t slash = path.find('/');
    if (!is_path_component(path.substr(0, slash))) return false;
    if (slash == std::string_view::npos) return true;
    path.remove_prefix(slash + 1);
  }
}

// [a-zA-Z0-9] or [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9].
bool is_host_label(std::string_view label) {
  return !label.empty() && is_alnum(label.front()) && is_alnum(label.back()) &&
         std::all_of(label.begin(), label.end(), [](char c) { return is_alnum(c) || c == '-'; });
}

// host[:port]: dot-separated labels, or an IPv6 address in brackets.
bool is_domain(std::string_view domain) {
  std::string_view host = domain;
  std::string_view rest;
  if (domain.starts_with('[')) {
    std::size_t close = domain.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    bool address = std::all_of(domain.begin() + 1, domain.begin() + close, [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
    });
    if (!address) return false;
    rest = domain.substr(close + 1);
  } else {
    std::size_t colon = domain.find(':');
    host = domain.substr(0, colon);
    rest = colon == std::string_view::npos ? "" : domain.substr(colon);
    for (std::size_t start = 0;;) {
      std::size_t dot = host.find('.', start);
      if (!is_host_label(host.substr(start, dot - start))) return false;
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
  }
  if (rest.empty()) return true;
  return rest.size() > 1 && rest.front() == ':' &&
         std::all_of(rest.begin() + 1, rest.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

bool is_image_name(std::string_view name) {
  if (is_path(name)) return true;
  std::size_t slash = name.find('/');
  return slash != std::string_view::npos && is_domain(name.substr(0, slash)) &&
         is_path(name.substr(slash + 1));
}

}  // namespace fluxop::instance
