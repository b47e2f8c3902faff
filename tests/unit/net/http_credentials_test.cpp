// What the HTTP client sends and accepts in headers: a credential goes to the
// host it was issued for and nowhere else, whatever redirects; a header value
// that would add headers of its own is refused; a response's header block is
// bounded.
#include <doctest/doctest.h>
#include <atomic>
#include <chrono>
#include <string>

#include "core/error.h"
#include "core/net/http.h"
#include "misbehaving_server.h"

namespace {

using namespace std::chrono_literals;
using fluxop::testing::MisbehavingServer;
using fluxop::testing::send_text;

fluxop::net::HttpOptions plain_http() {
  fluxop::net::HttpOptions options;
  options.plain_http_allowed = [](std::string_view) { return true; };
  options.attempts = 1;
  options.request_timeout = 10s;
  return options;
}

MisbehavingServer::Behaviour answer(const std::string& status_and_headers) {
  return [status_and_headers](int fd, const std::atomic<bool>&) {
    send_text(fd, "HTTP/1.1 " + status_and_headers +
                      "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  };
}

bool has_authorization(const std::string& request) {
  return request.find("\r\nAuthorization:") != std::string::npos;
}

// The error `request` ends in; empty when it succeeds.
std::string error_of(const fluxop::net::HttpRequest& request) {
  fluxop::net::HttpClient client(plain_http());
  try {
    client.send(request);
  } catch (const fluxop::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("http: a credential goes to the host it was issued for, never to a redirect's host") {
  MisbehavingServer elsewhere(answer("201 Created"));
  SUBCASE("another host: sent to the first, not to the second") {
    MisbehavingServer registry(
        answer("307 Temporary Redirect\r\nLocation: " + elsewhere.url("/upload")));
    fluxop::net::HttpClient client(plain_http());
    fluxop::net::HttpRequest request;
    request.method = "PUT";
    request.url = registry.url("/v2/flux/blobs/uploads/1");
    request.body = "layer";
    request.authorization = {"Basic c2VjcmV0", registry.authority()};
    CHECK(client.send(request).status == 201);
    REQUIRE(registry.requests().size() == 1);
    CHECK(has_authorization(registry.requests()[0]));
    REQUIRE(elsewhere.requests().size() == 1);
    CHECK_FALSE(has_authorization(elsewhere.requests()[0]));
  }
  SUBCASE("a URL on another host than the credential's (an upload's Location): not sent") {
    fluxop::net::HttpClient client(plain_http());
    fluxop::net::HttpRequest request;
    request.url = elsewhere.url("/upload");
    request.authorization = {"Bearer token", "127.0.0.1:1"};
    CHECK(client.send(request).status == 201);
    REQUIRE(elsewhere.requests().size() == 1);
    CHECK_FALSE(has_authorization(elsewhere.requests()[0]));
  }
  SUBCASE("the same host: sent again after the redirect") {
    MisbehavingServer registry(answer("201 Created"));
    MisbehavingServer first(answer("302 Found\r\nLocation: " + registry.url("/v2/")));
    fluxop::net::HttpClient client(plain_http());
    fluxop::net::HttpRequest request;
    request.url = first.url("/v2/");
    request.authorization = {"Bearer token", registry.authority()};
    CHECK(client.send(request).status == 201);
    CHECK_FALSE(has_authorization(first.requests().at(0)));
    CHECK(has_authorization(registry.requests().at(0)));
  }
}

TEST_CASE("http: a credential's host matches regardless of letter case and the default port") {
  using fluxop::net::authorization_applies;
  CHECK(authorization_applies({"Bearer t", "Registry.example"}, "https://registry.example/v2/"));
  CHECK(
      authorization_applies({"Bearer t", "registry.example"}, "https://registry.example:443/v2/"));
  CHECK(authorization_applies({"Bearer t", "registry.example:80"}, "http://registry.example/v2/"));
  CHECK_FALSE(authorization_applies({"Bearer t", "registry.example"}, "https://evil.example/"));
  CHECK_FALSE(authorization_applies({"Bearer t", "registry.example"},
                                    "https://registry.example.evil.example/"));
  CHECK_FALSE(
      authorization_applies({"Bearer t", "registry.example"}, "https://registry.example:5000/"));
  CHECK_FALSE(authorization_applies({"Bearer t", "registry.example"},
                                    "https://registry.example@evil.example/"));
  CHECK_FALSE(authorization_applies({"Bearer t", ""}, "https://registry.example/"));
  CHECK_FALSE(authorization_applies({"", "registry.example"}, "https://registry.example/"));
}

TEST_CASE("http: a header value with CR, LF or NUL is refused, named but not quoted") {
  MisbehavingServer server(answer("200 OK"));
  fluxop::net::HttpRequest request;
  request.url = server.url("/api");
  std::string refused = ": contains a line break or NUL (refused)";
  for (std::string bad :
       {std::string("tok\r\nX-Injected: 1"), std::string("tok\nen"), std::string("tok\0en", 6)}) {
    CAPTURE(bad);
    fluxop::net::HttpRequest with_authorization = request;
    with_authorization.authorization = {"Bearer " + bad, server.authority()};
    CHECK(error_of(with_authorization) == request.url + ": header Authorization" + refused);
    fluxop::net::HttpRequest with_header = request;
    with_header.headers.push_back("Accept: " + bad);
    CHECK(error_of(with_header) == request.url + ": header Accept" + refused);
  }
  CHECK(server.requests().empty());
}

TEST_CASE("http: a response's header block beyond its bound ends the attempt, naming the URL") {
  for (std::size_t line_size : {std::size_t(2000), std::size_t(1 << 20)}) {
    CAPTURE(line_size);
    // Many modest lines, or one line past libcurl's own bound.
    MisbehavingServer server([line_size](int fd, const std::atomic<bool>&) {
      std::string headers = "HTTP/1.1 200 OK\r\n";
      std::string line = "X-Filler: " + std::string(line_size, 'a') + "\r\n";
      while (headers.size() < (2u << 20)) headers += line;
      send_text(fd, headers + "Content-Length: 0\r\n\r\n");
    });
    fluxop::net::HttpRequest request;
    request.url = server.url("/v2/");
    CHECK(error_of(request) == server.url("/v2/") + ": response headers larger than 65536 bytes");
  }
}
