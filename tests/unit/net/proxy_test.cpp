#include "core/net/proxy.h"

#include <doctest/doctest.h>

using fluxop::net::proxy_for;
using fluxop::net::ProxyEnvironment;

TEST_CASE("proxy: the environment's proxy for the URL's scheme") {
  ProxyEnvironment env{"http://secure:3128", "http://plain:3128", ""};
  CHECK(proxy_for("https://api.example.com:6443/version", env) == "http://secure:3128");
  CHECK(proxy_for("http://api.example.com/version", env) == "http://plain:3128");
  CHECK(proxy_for("https://api.example.com", ProxyEnvironment{"", "http://plain:3128", ""}) == "");
}

TEST_CASE("proxy: loopback is never proxied, as in Go") {
  ProxyEnvironment env{"http://secure:3128", "", ""};
  for (const char* url : {"https://127.0.0.1:6443", "https://127.1.2.3", "https://[::1]:6443/x",
                          "https://localhost:6443", "https://LOCALHOST"}) {
    CAPTURE(url);
    CHECK(proxy_for(url, env) == "");
  }
  CHECK(proxy_for("https://128.0.0.1", env) == "http://secure:3128");
}

TEST_CASE("proxy: NO_PROXY's hosts, domains, addresses, ranges and ports") {
  auto through = [](const char* no_proxy, const char* url) {
    return !proxy_for(url, ProxyEnvironment{"http://p:1", "http://p:1", no_proxy}).empty();
  };
  CHECK_FALSE(through("*", "https://anything"));
  CHECK_FALSE(through("example.com", "https://example.com"));
  CHECK_FALSE(through("example.com", "https://api.example.com"));
  CHECK(through("example.com", "https://notexample.com"));
  CHECK(through(".example.com", "https://example.com"));
  CHECK_FALSE(through(".example.com", "https://api.example.com"));
  CHECK_FALSE(through("*.example.com", "https://api.EXAMPLE.com"));
  CHECK_FALSE(through(" other , 10.0.0.1", "https://10.0.0.1:6443"));
  CHECK(through("10.0.0.1", "https://10.0.0.2:6443"));
  CHECK_FALSE(through("10.0.0.0/8", "https://10.20.30.40:6443"));
  CHECK(through("10.0.0.0/8", "https://11.0.0.1"));
  CHECK_FALSE(through("fd00::/8", "https://[fd00::1]:6443"));
  CHECK_FALSE(through("example.com:6443", "https://example.com:6443"));
  CHECK(through("example.com:6443", "https://example.com"));
  CHECK_FALSE(through("example.com:443", "https://example.com"));
}

TEST_CASE("proxy: a proxy URL is http, https or socks5") {
  using fluxop::net::proxy_url_problem;
  CHECK(proxy_url_problem("") == "");
  CHECK(proxy_url_problem("http://proxy:3128") == "");
  CHECK(proxy_url_problem("socks5://proxy:1080") == "");
  CHECK(proxy_url_problem("ftp://proxy") == "not an http://, https:// or socks5:// URL");
  CHECK(proxy_url_problem("http://") == "has no host");
  CHECK(proxy_url_problem("http://p\r\n:1") == "holds a control character");
  // What libcurl would refuse with the URL, its password included, in its
  // message (issue 41): said without it.
  CHECK(proxy_url_problem("htps://flux:secret@proxy:3128") ==
        "not an http://, https:// or socks5:// URL");
  CHECK(proxy_url_problem("http://flux:secret@proxy:x") ==
        "has a port that is not a number up to 65535");
  CHECK(proxy_url_problem("http://flux:secret@:3128") == "has no host");
  CHECK(proxy_url_problem("http://flux:secret@proxy:3128/") == "");
  // Without a scheme, the environment's proxy is http://, as Go reads it.
  CHECK(fluxop::net::proxy_for("https://api.example.com",
                               ProxyEnvironment{"flux:secret@proxy:3128", "", ""}) ==
        "http://flux:secret@proxy:3128");
}
