// Which proxy a request goes through, as kubectl (Go's net/http) decides it,
// so that fluxopctl and kubectl reach a cluster the same way; libcurl's own
// reading of the environment differs (it proxies loopback, ignores
// HTTP_PROXY) and is turned off.
#pragma once

#include <string>
#include <string_view>

namespace fluxop::net {

// The proxy settings of the environment, read as Go's net/http (kubectl,
// the upstream operator) reads them: the upper-case name first.
struct ProxyEnvironment {
  std::string https_proxy;  // HTTPS_PROXY, https_proxy
  std::string http_proxy;   // HTTP_PROXY, http_proxy
  std::string no_proxy;     // NO_PROXY, no_proxy

  static ProxyEnvironment current();
};

// The proxy for a request to `url` when no proxy is configured: the
// environment's for its scheme (http:// when it has none, as Go reads it); none ("") for a loopback
// host (as Go) or a host NO_PROXY names: "*", a domain and its subdomains ("example.com"), only its
// subdomains (".example.com", "*.example.com"), an IP, a CIDR range; an entry's :PORT must match
// too.
std::string proxy_for(std::string_view url, const ProxyEnvironment& env);

// What makes `url` unfit as a proxy (not http://, https:// or socks5://, no
// host, a port that is no port, a control character), empty when nothing or
// when `url` is empty. It never quotes `url`, which may hold a password.
std::string proxy_url_problem(std::string_view url);

}  // namespace fluxop::net
