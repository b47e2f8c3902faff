#include "core/net/proxy.h"

#include <arpa/inet.h>

#include <array>
#include <cstdlib>
#include <optional>

#include "core/ascii.h"
#include "core/net/text.h"

namespace fluxop::net {

namespace {

std::string first_set(const char* upper, const char* lower) {
  for (const char* name : {upper, lower}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return "";
}

struct HostPort {
  std::string host;  // lowercased, without an IPv6 address's brackets
  std::string port;  // empty when none is written
};

HostPort split_host_port(std::string_view authority) {
  HostPort out;
  if (authority.starts_with('[')) {
    std::size_t close = authority.find(']');
    out.host = lowercase(authority.substr(1, close == std::string_view::npos ? close : close - 1));
    if (close != std::string_view::npos && authority.substr(close + 1).starts_with(':'))
      out.port = authority.substr(close + 2);
    return out;
  }
  std::size_t colon = authority.rfind(':');
  // More than one colon and no brackets: an IPv6 address without a port.
  if (colon == std::string_view::npos || authority.find(':') != colon) {
    out.host = lowercase(authority);
    return out;
  }
  out.host = lowercase(authority.substr(0, colon));
  out.port = authority.substr(colon + 1);
  return out;
}

// An IPv4 or IPv6 address's bytes (4 or 16 of them), nullopt when not one.
struct Address {
  std::array<unsigned char, 16> bytes{};
  std::size_t size = 0;
};

std::optional<Address> parse_address(const std::string& text) {
  Address address;
  if (inet_pton(AF_INET, text.c_str(), address.bytes.data()) == 1) {
    address.size = 4;
    return address;
  }
  if (inet_pton(AF_INET6, text.c_str(), address.bytes.data()) == 1) {
    address.size = 16;
    return address;
  }
  return std::nullopt;
}

bool loopback(const std::string& host) {
  if (host == "localhost") return true;
  std::optional<Address> address = parse_address(host);
  if (!address) return false;
  if (address->size == 4) return address->bytes[0] == 127;
  std::array<unsigned char, 16> one{};
  one[15] = 1;
  return address->bytes == one;
}

// Whether the first `bits` bits of `a` and `b` agree.
bool same_prefix(const Address& a, const Address& b, std::size_t bits) {
  if (a.size != b.size || bits > a.size * 8) return false;
  for (std::size_t i = 0; i < bits; ++i) {
    unsigned char mask = static_cast<unsigned char>(0x80 >> (i % 8));
    if ((a.bytes[i / 8] & mask) != (b.bytes[i / 8] & mask)) return false;
  }
  return true;
}

bool in_cidr(const std::string& cidr, const std::string& host) {
  std::size_t slash = cidr.find('/');
  std::optional<Address> network = parse_address(cidr.substr(0, slash));
  std::optional<Address> address = parse_address(host);
  if (!network || !address) return false;
  std::string bits = cidr.substr(slash + 1);
  if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  return same_prefix(*network, *address, std::stoul(bits));
}

// Whether one NO_PROXY entry names `target` (whose port is the URL's, or
// its scheme's default).
bool no_proxy_names(std::string_view entry, const HostPort& target) {
  if (entry.find('/') != std::string_view::npos) return in_cidr(std::string(entry), target.host);
  HostPort named = split_host_port(entry);
  if (!named.port.empty() && named.port != target.port) return false;
  if (parse_address(named.host)) return named.host == target.host;
  if (named.host.starts_with("*.")) named.host.erase(0, 1);
  if (named.host.starts_with('.')) return target.host.ends_with(named.host);
  return target.host == named.host || target.host.ends_with("." + named.host);
}

}  // namespace

ProxyEnvironment ProxyEnvironment::current() {
  return {first_set("HTTPS_PROXY", "https_proxy"), first_set("HTTP_PROXY", "http_proxy"),
          first_set("NO_PROXY", "no_proxy")};
}

std::string proxy_for(std::string_view url, const ProxyEnvironment& env) {
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return "";
  std::string scheme = lowercase(url.substr(0, scheme_end));
  std::string proxy = scheme == "https" ? env.https_proxy : env.http_proxy;
  if (proxy.empty()) return "";
  // "proxy:3128" is http://proxy:3128, as Go reads it.
  if (proxy.find("://") == std::string::npos) proxy = "http://" + proxy;
  std::string_view authority = url.substr(scheme_end + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (std::size_t at = authority.rfind('@'); at != std::string_view::npos)
    authority.remove_prefix(at + 1);
  HostPort target = split_host_port(authority);
  if (target.port.empty()) target.port = scheme == "https" ? "443" : "80";
  if (loopback(target.host)) return "";
  std::string_view entries = env.no_proxy;
  while (!entries.empty()) {
    std::size_t comma = entries.find(',');
    std::string entry = lowercase(trim(entries.substr(0, comma)));
    entries = comma == std::string_view::npos ? std::string_view() : entries.substr(comma + 1);
    if (entry == "*") return "";
    if (!entry.empty() && no_proxy_names(entry, target)) return "";
  }
  return proxy;
}

std::string proxy_url_problem(std::string_view url) {
  if (url.empty()) return "";
  for (char c : url) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "holds a control character";
  }
  std::string lower = lowercase(url);
  for (std::string_view scheme : {"http://", "https://", "socks5://"}) {
    if (!lower.starts_with(scheme)) continue;
    std::string_view authority = url.substr(scheme.size());
    authority = authority.substr(0, authority.find_first_of("/?#"));
    if (std::size_t at = authority.rfind('@'); at != std::string_view::npos)
      authority.remove_prefix(at + 1);
    HostPort host = split_host_port(authority);
    if (host.host.empty()) return "has no host";
    if (!host.port.empty() &&
        (host.port.size() > 5 || host.port.find_first_not_of("0123456789") != std::string::npos ||
         std::stoul(host.port) > 65535))
      return "has a port that is not a number up to 65535";
    return "";
  }
  // Not quoted: a proxy URL may hold the proxy's password.
  return "not an http://, https:// or socks5:// URL";
}

}  // namespace fluxop::net
