#include "core/net/http.h"

#include <curl/curl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "core/ascii.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/file.h"
#include "core/net/proxy.h"
#include "core/net/text.h"
#include "core/redact.h"

namespace fluxop::net {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                           text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

namespace {

constexpr int kMaxRedirects = 5;
// Retries wait at most this long between attempts: a long retry window
// (HttpRequest::retry_for) keeps probing.
constexpr std::chrono::milliseconds kMaxBackoff{2'000};
constexpr curl_off_t kProgressThreshold = 1 << 20;
// A response's header block, interim (1xx) responses included: registries
// and API servers send a few KiB; more is a peer making us hold it.
constexpr std::size_t kMaxResponseHeaderBytes = 64 * 1024;

CURL* handle(void* curl) { return static_cast<CURL*>(curl); }

std::string_view url_scheme(std::string_view url) {
  std::size_t end = url.find("://");
  return end == std::string_view::npos ? std::string_view{} : url.substr(0, end);
}

}  // namespace

std::string resolve_url(const std::string& base, const std::string& location) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> url(curl_url(), curl_url_cleanup);
  char* resolved = nullptr;
  if (!url || curl_url_set(url.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK ||
      curl_url_set(url.get(), CURLUPART_URL, location.c_str(), 0) != CURLUE_OK ||
      curl_url_get(url.get(), CURLUPART_URL, &resolved, 0) != CURLUE_OK) {
    throw Error(base + ": invalid redirect location '" + location + "'");
  }
  std::string out = resolved;
  curl_free(resolved);
  return out;
}

std::string url_escape(std::string_view text) {
  char* escaped = curl_easy_escape(nullptr, text.data(), static_cast<int>(text.size()));
  if (!escaped) throw Error("out of memory");
  std::string out = escaped;
  curl_free(escaped);
  return out;
}

std::string url_unescape_form(std::string_view text) {
  std::string spaced(text);
  std::replace(spaced.begin(), spaced.end(), '+', ' ');
  int length = 0;
  char* unescaped =
      curl_easy_unescape(nullptr, spaced.data(), static_cast<int>(spaced.size()), &length);
  if (!unescaped) throw Error("out of memory");
  std::string out(unescaped, static_cast<std::size_t>(length));
  curl_free(unescaped);
  return out;
}

namespace {

// A complete TLS 1.2 ClientHello record (two cipher suites, no extensions),
// what the scheme probe sends: a TLS server answers it at once, with a
// ServerHello or an alert. Its random holds CR LF CR LF, so that a plain
// HTTP server reads a whole (bad) request in it and answers at once.
constexpr unsigned char kTlsClientHello[] = {
    0x16, 0x03, 0x01, 0x00, 0x2f,  // handshake record, 47 bytes
    0x01, 0x00, 0x00, 0x2b,        // ClientHello, 43 bytes
    0x03, 0x03,                    // TLS 1.2
    // random, 32 bytes
    '\r', '\n', '\r', '\n', 0x66, 0x6c, 0x75, 0x78, 0x6f, 0x70, 0x63, 0x74, 0x6c, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00,                                // no session id
    0x00, 0x04, 0x13, 0x01, 0xc0, 0x2f,  // TLS_AES_128_GCM_SHA256, ECDHE_RSA_AES_128_GCM_SHA256
    0x01, 0x00,                          // no compression
};
static_assert(sizeof kTlsClientHello == 5 + 0x2f && 0x2f == 4 + 0x2b);

// The scheme probe's bound: the connect bound, or the request's when lower.
std::chrono::milliseconds probe_bound(const HttpOptions& options) {
  std::chrono::milliseconds bound = options.connect_timeout;
  if (options.request_timeout.count() > 0) bound = std::min(bound, options.request_timeout);
  return bound;
}

// OpenSSL's words when an HTTPS request reaches a plain-HTTP server: its
// answer is no TLS record.
bool is_plain_http_answer(CURLcode code, std::string_view message) {
  return code == CURLE_SSL_CONNECT_ERROR &&
         message.find("wrong version number") != std::string::npos;
}

bool retryable_status(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

// What an outage looks like: no answer, or one saying "later" (a 500 may
// well be the same every time).
bool looks_like_outage(const HttpResponse& response) {
  return response.status <= 0 || (retryable_status(response.status) && response.status != 500);
}

bool retryable_curl_error(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

// Retry-After in seconds (the HTTP-date form is not used by registries).
std::chrono::milliseconds retry_delay(const HttpResponse& response,
                                      std::chrono::milliseconds backoff,
                                      std::chrono::milliseconds max_retry_after) {
  std::string value = response.header("retry-after");
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return backoff;
  auto seconds = std::chrono::seconds(std::min<long long>(std::atoll(value.c_str()), 3600));
  return std::min<std::chrono::milliseconds>(seconds, max_retry_after);
}

// curl's words without the time the attempt took ("Failed to connect to
// h port 1 after 3 ms: Couldn't connect to server"): the same failure reads
// the same every time, so that an Event about it is counted, not written
// anew for every retry.
std::string without_elapsed(std::string words) {
  constexpr std::string_view kAfter = " after ";
  for (std::size_t at = words.find(kAfter); at != std::string::npos;
       at = words.find(kAfter, at + 1)) {
    std::size_t digits = at + kAfter.size();
    std::size_t end = words.find_first_not_of("0123456789", digits);
    if (end == digits || end == std::string::npos) continue;
    for (std::string_view unit : {" ms", " milliseconds"}) {
      if (words.compare(end, unit.size(), unit) == 0) {
        words.erase(at, end + unit.size() - at);
        break;
      }
    }
  }
  return words;
}

std::string human_size(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  return text;
}

}  // namespace

std::string HttpResponse::header(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? "" : it->second;
}

std::string url_authority(std::string_view url) {
  std::size_t start = url.find("://");
  if (start == std::string_view::npos) return "";
  start += 3;
  std::size_t end = url.find_first_of("/?#", start);
  std::string_view authority = url.substr(start, end == std::string_view::npos ? end : end - start);
  if (std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  return std::string(authority);
}

namespace {

// HOST[:PORT] lowercased, without the port a URL of `scheme` has by default.
std::string canonical_authority(std::string_view authority, std::string_view scheme) {
  std::string out = lowercase(authority);
  std::string default_port = scheme == "https" ? ":443" : scheme == "http" ? ":80" : "";
  if (!default_port.empty() && out.ends_with(default_port))
    out.resize(out.size() - default_port.size());
  return out;
}

}  // namespace

bool authorization_applies(const HostAuthorization& authorization, std::string_view url) {
  if (authorization.value.empty() || authorization.host.empty()) return false;
  std::string scheme = lowercase(url_scheme(url));
  std::string authority = url_authority(url);
  return !authority.empty() &&
         canonical_authority(authority, scheme) == canonical_authority(authorization.host, scheme);
}

// State shared with libcurl's callbacks during one attempt.
struct HttpClient::Attempt {
  CURL* curl = nullptr;
  HttpResponse* response = nullptr;
  BodySink* sink = nullptr;
  std::size_t max_body = 0;
  std::size_t max_error_body = 0;
  // The bounds it runs under, for the message when one ends it: its own
  // (zero: none), and the request's it is part of.
  std::chrono::milliseconds timeout{0};
  std::chrono::milliseconds request_timeout{0};
  StallBound stall;
  bool answered = false;  // a status line arrived
  bool body_too_large = false;
  std::size_t header_bytes = 0;
  bool headers_too_large = false;
  bool body_started = false;
  std::exception_ptr sink_error;
  std::string progress;
  bool progress_shown = false;
  int progress_percent = -1;
  // The request body: the string, or the open file it is read from.
  const std::string* body = nullptr;
  std::size_t body_offset = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> body_file{nullptr, &std::fclose};
  struct curl_slist* headers = nullptr;
  // CAs trusted beside the system's for this attempt's host, added to the
  // TLS context by on_ssl_context.
  std::string added_ca_pem;
  char error_buffer[CURL_ERROR_SIZE] = "";

  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self) {
    auto* attempt = static_cast<Attempt*>(self);
    std::string_view line(data, size * count);
    attempt->header_bytes += line.size();
    if (attempt->header_bytes > kMaxResponseHeaderBytes) {
      attempt->headers_too_large = true;
      return 0;  // aborts the transfer
    }
    if (line.starts_with("HTTP/")) {
      attempt->answered = true;
      attempt->response->headers.clear();  // an interim (1xx) response came first
    } else if (std::size_t colon = line.find(':'); colon != std::string_view::npos) {
      attempt->response->headers[lowercase(trim(line.substr(0, colon)))] =
          std::string(trim(line.substr(colon + 1)));
    }
    return size * count;
  }

  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* self) {
    auto* attempt = static_cast<Attempt*>(self);
    attempt->body_started = true;
    std::size_t bytes = size * count;
    long status = 0;
    curl_easy_getinfo(attempt->curl, CURLINFO_RESPONSE_CODE, &status);
    bool success = status >= 200 && status < 300;
    if (success && attempt->sink) {
      try {
        attempt->sink->write({data, bytes});
      } catch (...) {
        attempt->sink_error = std::current_exception();
        return 0;  // aborts the transfer
      }
      return bytes;
    }
    std::string& body = attempt->response->body;
    std::size_t limit = success ? attempt->max_body : attempt->max_error_body;
    if (body.size() + bytes > limit) {
      if (success) {
        attempt->body_too_large = true;
        return 0;
      }
      body.append(data, limit - body.size());  // enough of an error to quote it
      return bytes;
    }
    body.append(data, bytes);
    return bytes;
  }

  static std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* self) {
    auto* attempt = static_cast<Attempt*>(self);
    std::size_t room = size * count;
    if (attempt->body_file) {
      std::size_t read = std::fread(buffer, 1, room, attempt->body_file.get());
      return std::ferror(attempt->body_file.get()) ? CURL_READFUNC_ABORT : read;
    }
    std::size_t n = std::min(room, attempt->body->size() - attempt->body_offset);
    attempt->body->copy(buffer, n, attempt->body_offset);
    attempt->body_offset += n;
    return n;
  }

  // libcurl rewinds the body to send it again on a fresh connection (one it
  // reused died, an HTTP/2 stream was refused): without this, such a retry
  // fails "necessary data rewind wasn't possible".
  static int on_seek(void* self, curl_off_t offset, int origin) {
    auto* attempt = static_cast<Attempt*>(self);
    if (origin != SEEK_SET || offset < 0) return CURL_SEEKFUNC_CANTSEEK;
    if (attempt->body_file)
      return std::fseek(attempt->body_file.get(), static_cast<long>(offset), SEEK_SET) == 0
                 ? CURL_SEEKFUNC_OK
                 : CURL_SEEKFUNC_FAIL;
    if (static_cast<std::size_t>(offset) > attempt->body->size()) return CURL_SEEKFUNC_FAIL;
    attempt->body_offset = static_cast<std::size_t>(offset);
    return CURL_SEEKFUNC_OK;
  }

  static CURLcode on_ssl_context(CURL*, void* ssl_ctx, void* self) {
    // Called once libcurl has loaded the default CAs into the context.
    return add_trusted_certificates(ssl_ctx, static_cast<Attempt*>(self)->added_ca_pem)
               ? CURLE_OK
               : CURLE_SSL_CACERT_BADFILE;
  }

  static int on_progress(void* self, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
    auto* attempt = static_cast<Attempt*>(self);
    if (total < kProgressThreshold) return 0;
    int percent = static_cast<int>(now * 100 / total);
    if (percent == attempt->progress_percent) return 0;  // curl calls far more often
    attempt->progress_percent = percent;
    std::cerr << "\r" << attempt->progress << " " << percent << "% of "
              << human_size(static_cast<double>(total)) << "\x1b[K" << std::flush;
    attempt->progress_shown = true;
    return 0;
  }
};

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)) {
  static const CURLcode global = curl_global_init(CURL_GLOBAL_DEFAULT);
  multi_ = global == CURLE_OK ? curl_multi_init() : nullptr;
  if (!multi_) throw Error("libcurl could not be initialised");
  // Concurrent requests to one host share an HTTP/2 connection.
  curl_multi_setopt(static_cast<CURLM*>(multi_), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
}

HttpClient::~HttpClient() {
  for (void* easy : easy_) curl_easy_cleanup(handle(easy));
  curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

void HttpClient::set_proxy_options(void* curl_handle, const std::string& url) const {
  CURL* curl = handle(curl_handle);
  // Decided here, as kubectl decides it; "" turns off libcurl's own reading
  // of the environment.
  std::string proxy =
      options_.proxy.empty() ? proxy_for(url, ProxyEnvironment::current()) : options_.proxy;
  curl_easy_setopt(curl, CURLOPT_PROXY, proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "");
  if (proxy.empty()) return;
  // Through a CONNECT tunnel, and the request's headers (its Authorization,
  // for the server only) never sent to the proxy itself.
  curl_easy_setopt(curl, CURLOPT_HTTPPROXYTUNNEL, 1L);
  curl_easy_setopt(curl, CURLOPT_HEADEROPT, CURLHEADER_SEPARATE);
}

void HttpClient::set_tls_options(void* curl_handle, Attempt& attempt,
                                 const std::string& url) const {
  CURL* curl = handle(curl_handle);
  TlsOptions tls = options_.tls;
  auto set_blob = [curl](CURLoption option, const std::string& pem) {
    curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(curl, option, &blob);
  };
  if (options_.host_trust && lowercase(url_scheme(url)) == "https") {
    HostTrust trust = options_.host_trust(url_authority(url));
    if (!trust.client_cert_pem.empty()) {
      tls.client_cert_pem = std::move(trust.client_cert_pem);
      tls.client_key_pem = std::move(trust.client_key_pem);
    }
    attempt.added_ca_pem = std::move(trust.ca_pem);
  }
  if (!attempt.added_ca_pem.empty()) {
    // Beside the system's CAs, not instead: added to the context once they
    // are loaded. libcurl's CA cache would share the grown store with
    // other hosts' connections; it is off for these.
    curl_easy_setopt(curl, CURLOPT_CA_CACHE_TIMEOUT, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, &Attempt::on_ssl_context);
    curl_easy_setopt(curl, CURLOPT_SSL_CTX_DATA, &attempt);
  }
  if (!tls.ca_pem.empty()) {
    // Only the given CAs, as Go's RootCAs: no system bundle or directory besides.
    curl_easy_setopt(curl, CURLOPT_CAINFO, nullptr);
    curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr);
    set_blob(CURLOPT_CAINFO_BLOB, tls.ca_pem);
  } else {
    // libcurl does not read OpenSSL's variables itself; honour them as curl(1) does.
    if (const char* ca_file = std::getenv("SSL_CERT_FILE"); ca_file && *ca_file)
      curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    if (const char* ca_dir = std::getenv("SSL_CERT_DIR"); ca_dir && *ca_dir)
      curl_easy_setopt(curl, CURLOPT_CAPATH, ca_dir);
  }
  if (!tls.client_cert_pem.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    set_blob(CURLOPT_SSLCERT_BLOB, tls.client_cert_pem);
  }
  if (!tls.client_key_pem.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    set_blob(CURLOPT_SSLKEY_BLOB, tls.client_key_pem);
  }
  if (tls.insecure_skip_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

// One request from its first attempt to its answer: retries and redirects.
struct HttpClient::Exchange {
  HttpRequest current;
  BodySink* sink = nullptr;
  std::string progress;
  std::string first_url;
  int attempt = 1;
  int redirects = 0;
  std::chrono::milliseconds delay{0};
  std::chrono::steady_clock::time_point retry_until;
  std::chrono::steady_clock::time_point not_before;  // of the next attempt
  std::chrono::milliseconds timeout{0};              // the request's bound; zero: none
  // From its first attempt: one queued behind others (send_all) has not
  // begun.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  StallBound stall;
  HttpResponse response;
  Failure failure;
  bool running = false;  // an attempt is under way
  bool done = false;
};

void HttpClient::start(void* easy_handle, Attempt& attempt, const HttpRequest& request) const {
  CURL* curl = handle(easy_handle);
  curl_easy_reset(curl);
  attempt.curl = curl;
  attempt.body = &request.body;
  curl_easy_setopt(curl, CURLOPT_PRIVATE, &attempt);
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, attempt.error_buffer);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
  curl_easy_setopt(curl, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "fluxopctl/" FLUXOPCTL_VERSION);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(attempt.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, attempt.stall.bytes_per_second);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(attempt.stall.time.count()));
  // A peer that vanished without a word (a host down) ends the connection.
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  set_tls_options(curl, attempt, request.url);
  set_proxy_options(curl, request.url);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Attempt::on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &attempt);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Attempt::on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &attempt);
  if (!attempt.progress.empty() && isatty(STDERR_FILENO)) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &Attempt::on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &attempt);
  }

  attempt.headers = curl_slist_append(nullptr, "Expect:");
  for (const std::string& header : request.headers)
    attempt.headers = curl_slist_append(attempt.headers, header.c_str());
  // The one place a credential leaves: to the host it was issued for.
  std::string authorization = "Authorization: " + request.authorization.value;
  if (authorization_applies(request.authorization, request.url))
    attempt.headers = curl_slist_append(attempt.headers, authorization.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, attempt.headers);

  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method != "GET") {
    curl_off_t size = static_cast<curl_off_t>(request.body.size());
    if (!request.body_file.empty()) {
      // A file that cannot be opened sends nothing: the server then answers
      // a short body with an error, which names the request.
      try {
        InputFile body(request.body_file, std::numeric_limits<std::uint64_t>::max());
        size = static_cast<curl_off_t>(body.size());
        attempt.body_file.reset(body.release());
      } catch (const Error&) {
        size = 0;
      }
    }
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, &Attempt::on_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &attempt);
    curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, &Attempt::on_seek);
    curl_easy_setopt(curl, CURLOPT_SEEKDATA, &attempt);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, size);
  }
}

std::string HttpClient::timeout_message(const Attempt& attempt) const {
  // Which bound ended it, from libcurl's words (stable since 7.x): a stall
  // ("Operation too slow"), connecting ("Connection timed out", "Failed to
  // connect", "Resolving timed out"), else the attempt's own bound.
  std::string_view curl_words = attempt.error_buffer;
  auto go = [](std::chrono::milliseconds duration) { return format_go_duration(duration); };
  if (curl_words.starts_with("Operation too slow")) {
    const StallBound& stall = attempt.stall;
    return stall.bytes_per_second <= 1
               ? "stalled: nothing received for " + go(stall.time)
               : "stalled: less than " + std::to_string(stall.bytes_per_second) + " bytes/s for " +
                     go(stall.time);
  }
  if (!curl_words.starts_with("Operation timed out")) {
    bool request_bound = attempt.timeout.count() > 0 && attempt.timeout < options_.connect_timeout;
    return "no connection within " +
           go(request_bound ? attempt.request_timeout : options_.connect_timeout);
  }
  // The attempt's bound is what was left of the request's.
  return (attempt.answered ? "response not complete within " : "no response within ") +
         go(attempt.request_timeout);
}

void HttpClient::finish(Attempt& attempt, const HttpRequest& request, int result,
                        HttpResponse& response, Failure& failure) const {
  auto code = static_cast<CURLcode>(result);
  curl_slist_free_all(attempt.headers);
  attempt.headers = nullptr;
  if (attempt.progress_shown) std::cerr << "\r\x1b[K" << std::flush;
  if (attempt.sink_error) std::rethrow_exception(attempt.sink_error);
  if (attempt.body_too_large) {
    throw Error(request.url + ": response larger than " + std::to_string(request.max_body) +
                " bytes");
  }
  // libcurl refuses a single header line past its own bound (100 KiB) as
  // "out of memory", before our callback sees it.
  bool header_line_refused = code == CURLE_OUT_OF_MEMORY && !attempt.body_started;
  if (attempt.headers_too_large || header_line_refused) {
    throw Error(request.url + ": response headers larger than " +
                std::to_string(kMaxResponseHeaderBytes) + " bytes");
  }
  if (code != CURLE_OK) {
    response.status = 0;
    failure.message = code == CURLE_OPERATION_TIMEDOUT ? timeout_message(attempt)
                      : *attempt.error_buffer          ? without_elapsed(attempt.error_buffer)
                                                       : curl_easy_strerror(code);
    // A name mismatch says so in curl's own words; the hints are for an
    // untrusted signer.
    bool name_mismatch = failure.message.find("host name") != std::string::npos;
    if ((code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE) &&
        !name_mismatch) {
      failure.message +=
          !options_.tls.ca_pem.empty()
              ? " (the server's certificate is not signed by the given CA)"
              : " (the server's certificate is not trusted: " +
                    (options_.untrusted_hint.empty()
                         ? std::string("set SSL_CERT_FILE to a CA bundle that has its CA")
                         : options_.untrusted_hint) +
                    ")";
    }
    if (is_plain_http_answer(code, failure.message))
      failure.message +=
          " (the server may speak plain HTTP; for a registry, see --insecure-registry)";
    // A server that wants a client certificate, or refuses the one sent,
    // says so in a TLS alert (after the handshake, with TLS 1.3): nothing
    // a retry changes.
    bool client_certificate_refused =
        failure.message.find("alert certificate required") != std::string::npos ||
        failure.message.find("alert bad certificate") != std::string::npos;
    if (client_certificate_refused) {
      failure.message +=
          " (the server requires a client certificate it trusts" +
          (options_.client_certificate_hint.empty() ? std::string()
                                                    : ": " + options_.client_certificate_hint) +
          ")";
    }
    failure.retryable = retryable_curl_error(code) && !client_certificate_refused;
    failure.unsent = code == CURLE_COULDNT_CONNECT;
    return;
  }
  curl_easy_getinfo(handle(attempt.curl), CURLINFO_RESPONSE_CODE, &response.status);
}

std::chrono::milliseconds HttpClient::attempt_timeout(
    const Exchange& exchange, std::chrono::steady_clock::time_point now) const {
  if (exchange.timeout.count() == 0) return exchange.timeout;
  // What is left of the request's time, or of an outage's retry window,
  // each attempt bounded by the request's timeout all the same.
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::max(*exchange.deadline, exchange.retry_until) - now);
  return std::clamp(left, std::chrono::milliseconds(1), exchange.timeout);
}

bool HttpClient::should_retry(const HttpRequest& request, const HttpResponse& response,
                              const Failure& failure) const {
  if (!request.idempotent) return response.status == 429 || failure.unsent;
  return failure.retryable || retryable_status(response.status);
}

namespace {

bool has_line_break_or_nul(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// A header value with CR, LF or NUL would end the header early and add
// headers of its own; whatever produced it (a token file, a Docker config,
// a registry's realm or token), it is refused, named but never quoted.
void check_header_values(const HttpRequest& request) {
  if (has_line_break_or_nul(request.url))
    throw Error("URL: contains a line break or NUL (refused)");
  for (const std::string& header : request.headers) {
    if (has_line_break_or_nul(header)) {
      std::string_view name = std::string_view(header).substr(0, header.find(':'));
      throw Error(request.url + ": header " +
                  (has_line_break_or_nul(name) ? std::string("name") : std::string(name)) +
                  ": contains a line break or NUL (refused)");
    }
  }
  if (has_line_break_or_nul(request.authorization.value))
    throw Error(request.url + ": header Authorization: contains a line break or NUL (refused)");
}

}  // namespace

void HttpClient::check_scheme(const std::string& url) const {
  std::string scheme = lowercase(url_scheme(url));
  if (scheme == "http" &&
      (!options_.plain_http_allowed || !options_.plain_http_allowed(url_authority(url)))) {
    throw Error(url +
                ": plain HTTP refused for this host (HTTPS is required except "
                "for loopback registries and --insecure-registry hosts)");
  }
  if (scheme != "http" && scheme != "https") throw Error(url + ": not an HTTP URL");
  // A proxy that cannot be used is a configuration error: said once, the
  // proxy's password redacted, never retried.
  if (options_.proxy.empty()) {
    std::string proxy = proxy_for(url, ProxyEnvironment::current());
    if (std::string problem = proxy_url_problem(proxy); !problem.empty()) {
      throw Error(std::string(scheme == "https" ? "HTTPS_PROXY" : "HTTP_PROXY") + ": " +
                  redact_secrets(proxy) + ": " + problem);
    }
  }
}

void HttpClient::after_attempt(Exchange& exchange) const {
  const HttpResponse& response = exchange.response;
  auto now = std::chrono::steady_clock::now();
  std::chrono::milliseconds wait =
      response.status > 0 ? retry_delay(response, exchange.delay, options_.max_retry_after)
                          : exchange.delay;
  // Past `attempts`, only what an outage looks like goes on.
  bool outage = looks_like_outage(response);
  bool in_time = exchange.timeout.count() == 0 || now + wait < *exchange.deadline;
  bool more = (exchange.attempt < options_.attempts && in_time) ||
              (outage && now + wait < exchange.retry_until);
  if (more && should_retry(exchange.current, response, exchange.failure)) {
    ++exchange.attempt;
    exchange.not_before = now + wait;
    exchange.delay = std::min(exchange.delay * 2, kMaxBackoff);
    return;
  }
  if (response.status <= 0) {
    throw Error(
        exchange.current.url + ": " + exchange.failure.message +
        (exchange.attempt > 1 ? " (after " + std::to_string(exchange.attempt) + " attempts)" : ""));
  }
  bool redirect = response.status == 301 || response.status == 302 || response.status == 303 ||
                  response.status == 307 || response.status == 308;
  std::string location = response.header("location");
  if (!redirect || location.empty()) {
    exchange.done = true;
    return;
  }
  if (++exchange.redirects > kMaxRedirects) {
    throw Error(exchange.first_url + ": more than " + std::to_string(kMaxRedirects) + " redirects");
  }
  HttpRequest& current = exchange.current;
  current.url = resolve_url(current.url, location);
  if (response.status == 303) {
    current.method = "GET";
    current.body.clear();
  }
  check_scheme(current.url);
  exchange.attempt = 1;
  exchange.delay = options_.backoff;
  exchange.retry_until = now + current.retry_for;
  exchange.not_before = now;
}

std::vector<HttpResponse> HttpClient::exchange_all(std::vector<Exchange>& exchanges,
                                                   std::size_t max_concurrent) {
  if (exchanges.empty()) return {};
  auto* multi = static_cast<CURLM*>(multi_);
  auto now = std::chrono::steady_clock::now();
  for (Exchange& exchange : exchanges) {
    check_header_values(exchange.current);
    check_scheme(exchange.current.url);
    exchange.first_url = exchange.current.url;
    exchange.delay = options_.backoff;
    exchange.retry_until = now + exchange.current.retry_for;
    exchange.not_before = now;
    exchange.timeout =
        exchange.current.timeout.count() > 0 ? exchange.current.timeout : options_.request_timeout;
    exchange.stall = exchange.current.stall.value_or(options_.stall);
  }
  max_concurrent = std::clamp<std::size_t>(max_concurrent, 1, exchanges.size());
  while (easy_.size() < max_concurrent) {
    CURL* easy = curl_easy_init();
    if (!easy) throw Error("libcurl could not be initialised");
    easy_.push_back(easy);
  }
  // The attempt each easy handle carries, and its exchange; a handle is
  // free when its exchange is null.
  std::vector<Attempt> attempts(max_concurrent);
  std::vector<Exchange*> running(max_concurrent, nullptr);
  // An outage is the server's, not one request's: once an attempt meets
  // one, no attempt of the batch starts before `outage_until`, which backs
  // off as a request's delay does, so that a page of 500 requests probes a
  // server that is down with at most `max_concurrent` connections each
  // time, not with every request in turn.
  std::chrono::steady_clock::time_point outage_until{};
  std::chrono::milliseconds outage_delay = options_.backoff;
  auto stop_all = [&] {
    for (std::size_t slot = 0; slot < running.size(); ++slot) {
      if (!running[slot]) continue;
      curl_multi_remove_handle(multi, handle(easy_[slot]));
      curl_slist_free_all(attempts[slot].headers);
      running[slot] = nullptr;
    }
  };
  try {
    for (;;) {
      for (const Exchange& exchange : exchanges) {
        if (!exchange.done && exchange.current.cancelled && exchange.current.cancelled())
          throw Error(exchange.current.url + ": cancelled");
      }
      // Start what is due, in order, while handles are free.
      now = std::chrono::steady_clock::now();
      std::optional<std::chrono::steady_clock::time_point> next;
      std::size_t active = 0;
      for (Exchange* exchange : running) active += exchange != nullptr;
      for (Exchange& exchange : exchanges) {
        if (exchange.done || exchange.running) continue;
        auto due = std::max(exchange.not_before, outage_until);
        if (due > now) {
          if (!next || due < *next) next = due;
          continue;
        }
        if (active == max_concurrent) break;
        std::size_t slot = 0;
        while (running[slot]) ++slot;
        if (exchange.sink) exchange.sink->reset();
        exchange.response = HttpResponse{};
        exchange.response.url = exchange.current.url;
        exchange.failure = Failure{};
        exchange.running = true;
        Attempt& attempt = attempts[slot] = Attempt{};
        attempt.response = &exchange.response;
        attempt.sink = exchange.sink;
        attempt.max_body = exchange.current.max_body;
        attempt.max_error_body = options_.max_error_body;
        attempt.progress = exchange.progress;
        if (!exchange.deadline) exchange.deadline = now + exchange.timeout;
        attempt.timeout = attempt_timeout(exchange, now);
        attempt.request_timeout = exchange.timeout;
        attempt.stall = exchange.stall;
        start(easy_[slot], attempt, exchange.current);
        curl_multi_add_handle(multi, handle(easy_[slot]));
        running[slot] = &exchange;
        ++active;
        ++requests_sent_;
      }
      if (active == 0) {
        if (!next) break;
        // A cancellable request is checked while it waits for its retry.
        std::this_thread::sleep_until(std::min(*next, now + std::chrono::milliseconds(100)));
        continue;
      }
      int still_running = 0;
      CURLMcode code = curl_multi_perform(multi, &still_running);
      if (code == CURLM_OK && still_running > 0) {
        // Sent (libcurl sends the request in the step that times the
        // transfer's start) and not yet answered (no byte of the answer
        // has arrived): a meanwhile never sees part of a body.
        for (std::size_t slot = 0; slot < running.size(); ++slot) {
          if (!running[slot] || !running[slot]->current.meanwhile) continue;
          curl_off_t sent = 0, answered = 0;
          CURL* easy = handle(easy_[slot]);
          if (curl_easy_getinfo(easy, CURLINFO_PRETRANSFER_TIME_T, &sent) != CURLE_OK ||
              curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &answered) != CURLE_OK ||
              sent == 0 || answered != 0)
            continue;
          std::exchange(running[slot]->current.meanwhile, nullptr)();
        }
        code = curl_multi_poll(multi, nullptr, 0, 100, nullptr);
      }
      if (code != CURLM_OK) throw Error(std::string("libcurl: ") + curl_multi_strerror(code));
      int left = 0;
      while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
        if (message->msg != CURLMSG_DONE) continue;
        std::size_t slot = 0;
        while (slot < running.size() && handle(easy_[slot]) != message->easy_handle) ++slot;
        if (slot == running.size() || !running[slot]) continue;
        Exchange& exchange = *running[slot];
        CURLcode result = message->data.result;
        curl_multi_remove_handle(multi, handle(easy_[slot]));
        running[slot] = nullptr;
        exchange.running = false;
        finish(attempts[slot], exchange.current, result, exchange.response, exchange.failure);
        int attempt = exchange.attempt;
        after_attempt(exchange);
        if (!looks_like_outage(exchange.response)) {
          outage_delay = options_.backoff;
        } else if (exchange.attempt > attempt) {
          auto ended = std::chrono::steady_clock::now();
          if (ended >= outage_until) {
            outage_until = ended + outage_delay;
            outage_delay = std::min(outage_delay * 2, kMaxBackoff);
          }
          outage_until = std::max(outage_until, exchange.not_before);
        }
      }
    }
  } catch (...) {
    stop_all();
    throw;
  }
  std::vector<HttpResponse> responses;
  responses.reserve(exchanges.size());
  for (Exchange& exchange : exchanges) responses.push_back(std::move(exchange.response));
  return responses;
}

bool HttpClient::answers_tls_in_plain_http(std::string_view host_port,
                                           const std::function<bool()>& cancelled) const {
  std::string url = "https://" + std::string(host_port) + "/";
  auto deadline = std::chrono::steady_clock::now() + probe_bound(options_);
  // Connected through libcurl as plain HTTP, which sends nothing of its
  // own: no TLS library is started for a server that may not speak it.
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw Error("libcurl could not be initialised");
  std::string connect_url = "http://" + std::string(host_port) + "/";
  long bound = static_cast<long>(probe_bound(options_).count());
  curl_easy_setopt(curl.get(), CURLOPT_URL, connect_url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(curl.get(), CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT_MS, bound);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, bound);
  set_proxy_options(curl.get(), url);
  // Through a multi handle of its own, polled as a request is, so that a
  // command stopped meanwhile does not wait for the bound.
  std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(),
                                                              curl_multi_cleanup);
  if (!multi) throw Error("libcurl could not be initialised");
  auto stop_if_cancelled = [&] {
    if (cancelled && cancelled()) throw Error(url + ": cancelled");
  };
  // In the multi handle until the end: the connection is found through it.
  curl_multi_add_handle(multi.get(), curl.get());
  std::unique_ptr<CURL, std::function<void(CURL*)>> added(
      curl.get(), [&multi](CURL* easy) { curl_multi_remove_handle(multi.get(), easy); });
  CURLcode connected = CURLE_OK;
  for (bool done = false; !done;) {
    stop_if_cancelled();
    int running = 0;
    CURLMcode polled = curl_multi_perform(multi.get(), &running);
    if (polled == CURLM_OK && running > 0)
      polled = curl_multi_poll(multi.get(), nullptr, 0, 100, nullptr);
    if (polled != CURLM_OK) throw Error(std::string("libcurl: ") + curl_multi_strerror(polled));
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi.get(), &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      connected = message->data.result;
      done = true;
    }
  }
  curl_socket_t socket = CURL_SOCKET_BAD;
  if (connected != CURLE_OK ||
      curl_easy_getinfo(curl.get(), CURLINFO_ACTIVESOCKET, &socket) != CURLE_OK ||
      socket == CURL_SOCKET_BAD)
    return false;
  // Waits, a tenth of a second at a time, until the socket is ready for
  // `events`; false past the bound.
  auto wait_for = [&](short events) {
    for (;;) {
      stop_if_cancelled();
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd ready{socket, events, 0};
      int waited = poll(&ready, 1, static_cast<int>(std::min<long>(left.count(), 100)));
      if (waited > 0) return true;
      if (waited < 0 && errno != EINTR) return false;
    }
  };
  std::string_view hello(reinterpret_cast<const char*>(kTlsClientHello), sizeof kTlsClientHello);
  while (!hello.empty()) {
    std::size_t sent = 0;
    CURLcode code = curl_easy_send(curl.get(), hello.data(), hello.size(), &sent);
    if (code == CURLE_AGAIN) {
      if (!wait_for(POLLOUT)) return false;
      continue;
    }
    if (code != CURLE_OK) return false;
    hello.remove_prefix(sent);
  }
  // The first two bytes of the answer: a TLS record's content type (20 to
  // 23) and major version (3), or anything else, which is no TLS (a plain
  // HTTP status line, or only the body of an error, as Python's http.server
  // answers a request line it cannot read).
  std::string answer;
  while (answer.size() < 2) {
    char buffer[2];
    std::size_t received = 0;
    CURLcode code = curl_easy_recv(curl.get(), buffer, 2 - answer.size(), &received);
    if (code == CURLE_AGAIN) {
      if (!wait_for(POLLIN)) break;
      continue;
    }
    if (code != CURLE_OK || received == 0) break;
    answer.append(buffer, received);
  }
  if (answer.empty()) return false;
  auto type = static_cast<unsigned char>(answer[0]);
  bool tls = type >= 20 && type <= 23 && (answer.size() < 2 || answer[1] == 3);
  return !tls;
}

HttpResponse HttpClient::send(const HttpRequest& request, BodySink* sink,
                              std::string_view progress) {
  std::vector<Exchange> exchanges(1);
  exchanges[0].current = request;
  exchanges[0].sink = sink;
  exchanges[0].progress = progress;
  return std::move(exchange_all(exchanges, 1).front());
}

std::vector<HttpResponse> HttpClient::send_all(const std::vector<HttpRequest>& requests,
                                               std::size_t max_concurrent,
                                               const std::vector<BodySink*>& sinks) {
  std::vector<Exchange> exchanges(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    exchanges[i].current = requests[i];
    if (i < sinks.size()) exchanges[i].sink = sinks[i];
  }
  return exchange_all(exchanges, max_concurrent);
}

}  // namespace fluxop::net
