// HTTP for the registry and Kubernetes clients, over libcurl: one connection
// pool per client, redirects followed by hand so that credentials never reach
// another host, retries with backoff on 429, 5xx and network errors, and
// timeouts on everything: connecting, a transfer that stalls, and the
// request as a whole, its retries included.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/net/trust.h"

namespace fluxop::net {

// TLS beyond the defaults (the system CAs, or SSL_CERT_FILE/SSL_CERT_DIR, and
// verification on), as a kubeconfig describes it.
struct TlsOptions {
  std::string ca_pem;           // the only CAs trusted when set (PEM)
  std::string client_cert_pem;  // a client certificate (PEM), with
  std::string client_key_pem;   // its private key (PEM)
  bool insecure_skip_verify = false;
  // No server name override (kubeconfig's tls-server-name): libcurl 7.88 has
  // no option to set the SNI and verified name apart from the URL's host.
};

// A transfer (the wait for the response included) that moves fewer than
// `bytes_per_second` for `time` has stalled: the attempt fails, and may be
// retried.
struct StallBound {
  long bytes_per_second = 1024;
  std::chrono::seconds time{30};
};

struct HttpOptions {
  // Whether a URL's HOST[:PORT] may be reached over plain HTTP; HTTPS otherwise,
  // redirects included.
  std::function<bool(std::string_view host_port)> plain_http_allowed;
  std::chrono::milliseconds connect_timeout{10'000};
  // A request's bound from its first attempt to its response, transfer,
  // retries, waits between them and redirects included (HttpRequest::retry_for
  // extends it for an outage, each attempt still bounded by it). Zero: none,
  // and the connect and stall bounds still end a request nothing answers.
  std::chrono::milliseconds request_timeout{30'000};
  StallBound stall;
  int attempts = 5;                                   // the first and four retries
  std::chrono::milliseconds backoff{200};             // doubled after every retry
  std::chrono::milliseconds max_retry_after{30'000};  // the longest Retry-After honoured
  std::size_t max_error_body = 64 * 1024;             // kept of a non-2xx body
  TlsOptions tls;
  // What a host (HOST[:PORT]) is trusted with beyond the system's CAs (a
  // registry's --ca-file and certificates directory); unset: nothing.
  std::function<HostTrust(std::string_view host_port)> host_trust;
  // How to trust a server whose certificate is not, in the message saying
  // so; empty: SSL_CERT_FILE.
  std::string untrusted_hint;
  // How to give a client certificate, in the message saying a server
  // requires one; empty: nothing more.
  std::string client_certificate_hint;
  // The proxy every request goes through (a kubeconfig's proxy-url), the
  // environment and NO_PROXY aside. Empty: the environment's (net/proxy.h).
  std::string proxy;
};

// An Authorization header's value together with the HOST[:PORT] it was
// issued for. HttpClient sends it to that host only, for the first URL and for
// every redirect, so that no URL a peer names (a redirect, an upload's
// Location) can carry it to another host.
struct HostAuthorization {
  std::string value;  // "Bearer ...", "Basic ..."; empty: none
  std::string host;   // HOST[:PORT]; empty: sent nowhere
};

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, PATCH
  std::string url;
  std::vector<std::string> headers;  // "Accept: ...", never credentials
  HostAuthorization authorization;
  std::string body;  // request body
  // When set, the body is this file's bytes, read as they are sent (an
  // image layer may be far larger than is worth holding in memory).
  std::string body_file;
  std::size_t max_body = 4 << 20;  // largest body read into HttpResponse::body
  // Whether sending it twice does no harm. When not (a POST that creates),
  // it is retried only when it cannot have reached the server: no connection,
  // or 429 Too Many Requests.
  bool idempotent = true;
  // When set, failures that look like an outage (no connection, 429, 502,
  // 503, 504) are retried until this long has passed since the first
  // attempt, beyond HttpOptions::attempts.
  std::chrono::milliseconds retry_for{0};
  // The request's bound when not HttpOptions::request_timeout, and its stall
  // bound when not HttpOptions::stall (a watch streams for minutes, quiet
  // between its events).
  std::chrono::milliseconds timeout{0};
  std::optional<StallBound> stall;
  // Polled about ten times a second while the request runs or waits to be
  // retried: true ends it with an Error ("...: cancelled").
  std::function<bool()> cancelled;
  // Local work run once, as soon as the request has been sent, while its
  // answer is awaited: not at all when the answer's first byte came first.
  // The time a server takes to answer is spent on it. What it throws ends
  // the request.
  std::function<void()> meanwhile;
};

struct HttpResponse {
  long status = 0;
  std::string url;                             // after redirects
  std::map<std::string, std::string> headers;  // names lowercased, last value kept
  std::string body;                            // unless a sink took a 2xx body

  std::string header(const std::string& lowercase_name) const;
};

// Takes a 2xx response body as it streams; reset() comes before every attempt,
// so a retried download starts over.
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual void reset() = 0;
  virtual void write(std::string_view bytes) = 0;
};

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends the request, following redirects and retrying; returns the last
  // response, whatever its status. Throws fluxop::Error naming the URL when
  // no response arrives (after the retries) or a redirect is refused.
  // `progress` labels a progress line on stderr for large bodies when stderr
  // is a terminal.
  HttpResponse send(const HttpRequest& request, BodySink* sink = nullptr,
                    std::string_view progress = {});
  // Sends the requests together, at most `max_concurrent` at a time (as
  // streams of one HTTP/2 connection where the server speaks it), each
  // retried and redirected as send() does; the responses in the requests'
  // order. Throws as send() does when one of them gets no response.
  // `sinks`, when given, takes each request's 2xx body (null: none), as
  // send() does.
  std::vector<HttpResponse> send_all(const std::vector<HttpRequest>& requests,
                                     std::size_t max_concurrent,
                                     const std::vector<BodySink*>& sinks = {});

  // Whether the server at HOST[:PORT] answers a TLS ClientHello with
  // anything but a TLS record (it speaks plain HTTP only): one canned
  // ClientHello sent over a plain connection, within the connect bound and
  // the request's, and the answer's first bytes read, so that no TLS library
  // is started (0.3 ms where a handshake's start costs 1.5 and a verified
  // HTTPS request a hundred). False for a server that answers in TLS, or
  // not at all, or cannot be reached. `cancelled`, when set, is polled as
  // HttpRequest::cancelled is.
  bool answers_tls_in_plain_http(std::string_view host_port,
                                 const std::function<bool()>& cancelled = {}) const;

  // The number of requests sent so far, retries and redirects included.
  int requests_sent() const { return requests_sent_; }

 private:
  struct Attempt;
  struct Exchange;
  // Why no response arrived.
  struct Failure {
    std::string message;
    bool retryable = false;  // a network error that may pass
    bool unsent = false;     // the request cannot have reached the server
  };
  // Runs the exchanges, at most `max_concurrent` attempts at a time, each
  // started as soon as one ends and it is due.
  std::vector<HttpResponse> exchange_all(std::vector<Exchange>& exchanges,
                                         std::size_t max_concurrent);
  void start(void* curl, Attempt& attempt, const HttpRequest& request) const;
  // What is left of the exchange's time for its next attempt; zero for none.
  std::chrono::milliseconds attempt_timeout(const Exchange& exchange,
                                            std::chrono::steady_clock::time_point now) const;
  // Why the attempt timed out: the connect, stall or request bound.
  std::string timeout_message(const Attempt& attempt) const;
  // The attempt's outcome: a response's status, or 0 and `failure` set when
  // no response arrived.
  void finish(Attempt& attempt, const HttpRequest& request, int result, HttpResponse& response,
              Failure& failure) const;
  // Done, a retry, or a redirect to follow; throws when no response came.
  void after_attempt(Exchange& exchange) const;
  void check_scheme(const std::string& url) const;
  void set_tls_options(void* curl, Attempt& attempt, const std::string& url) const;
  void set_proxy_options(void* curl, const std::string& url) const;
  bool should_retry(const HttpRequest& request, const HttpResponse& response,
                    const Failure& failure) const;

  HttpOptions options_;
  void* multi_;              // CURLM*, kept between requests for its connections
  std::vector<void*> easy_;  // CURL*, one per concurrent request
  int requests_sent_ = 0;
};

// "HOST[:PORT]" of a URL, empty when it has none.
std::string url_authority(std::string_view url);

// Whether `authorization` may go with a request to `url`: the URL's host is
// the one it was issued for (letter case and the scheme's default port aside).
bool authorization_applies(const HostAuthorization& authorization, std::string_view url);

// `location` (absolute, or relative as in a Location header) resolved against `base`.
std::string resolve_url(const std::string& base, const std::string& location);

// `text` percent-encoded for a query string.
std::string url_escape(std::string_view text);
// A query string's value decoded, as a form sends it: "%XX" its byte, "+" a
// space.
std::string url_unescape_form(std::string_view text);

}  // namespace fluxop::net
