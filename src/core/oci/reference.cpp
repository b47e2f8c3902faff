#include "core/oci/reference.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace fluxop::oci {

namespace {

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One path component of a repository name, as the distribution spec allows:
// lowercase alphanumerics joined by '.', '_', '__' or runs of '-'.
bool valid_component(std::string_view component) {
  if (component.empty() || !is_lower_alnum(component.front()) ||
      !is_lower_alnum(component.back())) {
    return false;
  }
  for (std::size_t i = 0; i < component.size(); ++i) {
    char c = component[i];
    if (is_lower_alnum(c) || c == '-') continue;
    if (c == '.' && is_lower_alnum(component[i + 1])) continue;
    if (c == '_' && (is_lower_alnum(component[i + 1]) ||
                     (component[i + 1] == '_' && is_lower_alnum(component[i + 2])))) {
      i += component[i + 1] == '_' ? 1 : 0;
      continue;
    }
    return false;
  }
  return true;
}

bool valid_repository(std::string_view repository) {
  if (repository.empty() || repository.size() > 255) return false;
  for (std::size_t start = 0;;) {
    std::size_t end = repository.find('/', start);
    if (!valid_component(repository.substr(start, end - start))) return false;
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

bool valid_tag(std::string_view tag) {
  if (tag.empty() || tag.size() > 128 || tag.front() == '.' || tag.front() == '-') return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

bool valid_port(std::string_view port) {
  return !port.empty() && port.size() <= 5 &&
         std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// HOST, HOST:PORT, [IPv6] or [IPv6]:PORT, with a DNS name or IPv4 host.
bool valid_registry(std::string_view registry) {
  std::string_view host = registry;
  std::string_view port;
  if (registry.starts_with('[')) {
    std::size_t close = registry.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    std::string_view address = registry.substr(1, close - 1);
    if (!std::all_of(address.begin(), address.end(), [](char c) {
          return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
        })) {
      return false;
    }
    std::string_view rest = registry.substr(close + 1);
    if (rest.empty()) return true;
    return rest.front() == ':' && valid_port(rest.substr(1));
  }
  if (std::size_t colon = registry.find(':'); colon != std::string_view::npos) {
    host = registry.substr(0, colon);
    port = registry.substr(colon + 1);
    if (!valid_port(port)) return false;
  }
  if (host.empty() || host.front() == '.' || host.back() == '.' || host.front() == '-')
    return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
  });
}

// 127.0.0.0/8 written as a dotted IPv4 address (not a name starting "127.").
bool is_ipv4_loopback(std::string_view host) {
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3 && !host.ends_with('.') && host.find("..") == std::string_view::npos;
}

}  // namespace

bool is_sha256_digest(std::string_view text) {
  if (!text.starts_with("sha256:") || text.size() != 7 + 64) return false;
  return std::all_of(text.begin() + 7, text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Reference Reference::parse(std::string_view url) {
  auto fail = [&](const std::string& what) -> Reference {
    throw Error(std::string(url) + ": " + what);
  };
  constexpr std::string_view kScheme = "oci://";
  if (!url.starts_with(kScheme)) return fail("not an oci:// URL");
  std::string_view rest = url.substr(kScheme.size());
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return fail("no repository after the registry");

  Reference ref;
  ref.registry = rest.substr(0, slash);
  if (!valid_registry(ref.registry)) return fail("invalid registry '" + ref.registry + "'");
  std::string_view path = rest.substr(slash + 1);

  if (std::size_t at = path.find('@'); at != std::string_view::npos) {
    ref.digest = path.substr(at + 1);
    path = path.substr(0, at);
    if (!is_sha256_digest(ref.digest)) {
      return fail("invalid digest '" + ref.digest + "' (expected sha256: and 64 hex digits)");
    }
  }
  // A ':' after the last '/' separates the tag.
  std::size_t colon = path.rfind(':');
  if (colon != std::string_view::npos && path.find('/', colon) == std::string_view::npos) {
    ref.tag = path.substr(colon + 1);
    path = path.substr(0, colon);
    if (!valid_tag(ref.tag)) return fail("invalid tag '" + ref.tag + "'");
  }
  ref.repository = path;
  if (!valid_repository(ref.repository)) {
    return fail("invalid repository '" + ref.repository +
                "' (lowercase letters, digits and . _ - separators, '/' between components)");
  }
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

std::string Reference::str() const {
  std::string out = "oci://" + registry + "/" + repository;
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

std::string Reference::pinned(std::string_view manifest_digest) const {
  return "oci://" + registry + "/" + repository + "@" + std::string(manifest_digest);
}

std::string registry_host(std::string_view registry) {
  if (registry.starts_with('[')) {
    std::size_t close = registry.find(']');
    return std::string(registry.substr(1, close == std::string_view::npos ? close : close - 1));
  }
  return std::string(registry.substr(0, registry.find(':')));
}

bool is_loopback_registry(std::string_view registry) {
  std::string host = registry_host(registry);
  return host == "localhost" || host == "::1" || is_ipv4_loopback(host);
}

bool is_insecure_registry(std::string_view registry, const std::vector<std::string>& insecure) {
  std::string host = registry_host(registry);
  return std::any_of(insecure.begin(), insecure.end(),
                     [&](const std::string& entry) { return entry == registry || entry == host; });
}

bool plain_http_allowed(std::string_view registry, const std::vector<std::string>& insecure) {
  return is_loopback_registry(registry) || is_insecure_registry(registry, insecure);
}

}  // namespace fluxop::oci
