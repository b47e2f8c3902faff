#include "core/net/http.h"

#include <curl/curl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <thread>

#include "core/error.h"

namespace fluxop::net {

namespace {

constexpr int kMaxRedirects = 5;
// Retries wait at most this long between attempts: a long retry window
// (HttpRequest::retry_for) keeps probing.
constexpr std::chrono::milliseconds kMaxBackoff{2'000};
constexpr std::chrono::seconds kMaxRetryAfter{30};
constexpr curl_off_t kProgressThreshold = 1 << 20;

CURL* handle(void* curl) { return static_cast<CURL*>(curl); }

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                           text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

std::string_view url_scheme(std::string_view url) {
  std::size_t end = url.find("://");
  return end == std::string_view::npos ? std::string_view{} : url.substr(0, end);
}

// scheme://authority: requests to another origin get no credentials.
std::string url_origin(std::string_view url) {
  return lowercase(url_scheme(url)) + "://" + lowercase(url_authority(url));
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

namespace {

bool retryable_status(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
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
                                      std::chrono::milliseconds backoff) {
  std::string value = response.header("retry-after");
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return backoff;
  auto seconds = std::chrono::seconds(std::min<long long>(std::atoll(value.c_str()), 3600));
  return std::min<std::chrono::milliseconds>(seconds, kMaxRetryAfter);
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

// State shared with libcurl's callbacks during one attempt.
struct HttpClient::Attempt {
  CURL* curl = nullptr;
  HttpResponse* response = nullptr;
  BodySink* sink = nullptr;
  std::size_t max_body = 0;
  std::size_t max_error_body = 0;
  bool body_too_large = false;
  std::exception_ptr sink_error;
  std::string progress;
  bool progress_shown = false;
  int progress_percent = -1;
  // The request body.
  const std::string* body = nullptr;
  std::size_t body_offset = 0;

  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self) {
    auto* attempt = static_cast<Attempt*>(self);
    std::string_view line(data, size * count);
    if (line.starts_with("HTTP/")) {
      attempt->response->headers.clear();  // an interim (1xx) response came first
    } else if (std::size_t colon = line.find(':'); colon != std::string_view::npos) {
      attempt->response->headers[lowercase(trim(line.substr(0, colon)))] =
          std::string(trim(line.substr(colon + 1)));
    }
    return size * count;
  }

  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* self) {
    auto* attempt = static_cast<Attempt*>(self);
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
    std::size_t n = std::min(room, attempt->body->size() - attempt->body_offset);
    attempt->body->copy(buffer, n, attempt->body_offset);
    attempt->body_offset += n;
    return n;
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
  curl_ = global == CURLE_OK ? curl_easy_init() : nullptr;
  if (!curl_) throw Error("libcurl could not be initialised");
}

HttpClient::~HttpClient() { curl_easy_cleanup(handle(curl_)); }

void HttpClient::set_tls_options(void* curl_handle) const {
  CURL* curl = handle(curl_handle);
  const TlsOptions& tls = options_.tls;
  auto set_blob = [curl](CURLoption option, const std::string& pem) {
    curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(curl, option, &blob);
  };
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

HttpResponse HttpClient::perform(const HttpRequest& request, BodySink* sink,
                                 std::string_view progress, Failure& failure) {
  CURL* curl = handle(curl_);
  curl_easy_reset(curl);  // keeps the connection cache
  HttpResponse response;
  response.url = request.url;
  Attempt attempt;
  attempt.curl = curl;
  attempt.response = &response;
  attempt.sink = sink;
  attempt.max_body = request.max_body;
  attempt.max_error_body = options_.max_error_body;
  attempt.progress = progress;
  attempt.body = &request.body;

  char error_buffer[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "fluxopctl/" FLUXOPCTL_VERSION);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  set_tls_options(curl);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Attempt::on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &attempt);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Attempt::on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &attempt);
  if (!progress.empty() && isatty(STDERR_FILENO)) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &Attempt::on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &attempt);
  }

  struct curl_slist* headers = curl_slist_append(nullptr, "Expect:");
  for (const std::string& header : request.headers)
    headers = curl_slist_append(headers, header.c_str());
  std::string authorization = "Authorization: " + request.authorization;
  if (!request.authorization.empty()) headers = curl_slist_append(headers, authorization.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method != "GET") {
    curl_off_t size = static_cast<curl_off_t>(request.body.size());
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, &Attempt::on_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &attempt);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, size);
  }

  ++requests_sent_;
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (attempt.progress_shown) std::cerr << "\r\x1b[K" << std::flush;
  if (attempt.sink_error) std::rethrow_exception(attempt.sink_error);
  if (attempt.body_too_large) {
    throw Error(request.url + ": response larger than " + std::to_string(request.max_body) +
                " bytes");
  }
  if (code != CURLE_OK) {
    failure.message = *error_buffer ? error_buffer : curl_easy_strerror(code);
    // A name mismatch says so in curl's own words; the hints are for an
    // untrusted signer.
    bool name_mismatch = failure.message.find("host name") != std::string::npos;
    if ((code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE) &&
        !name_mismatch) {
      failure.message += options_.tls.ca_pem.empty()
                             ? " (the server's certificate is not trusted: set SSL_CERT_FILE to "
                               "a CA bundle that has its CA)"
                             : " (the server's certificate is not signed by the given CA)";
    }
    // OpenSSL's words when an HTTPS request reaches a plain-HTTP server.
    if (code == CURLE_SSL_CONNECT_ERROR &&
        failure.message.find("wrong version number") != std::string::npos)
      failure.message +=
          " (the server may speak plain HTTP; for a registry, see --insecure-registry)";
    failure.retryable = retryable_curl_error(code);
    failure.unsent = code == CURLE_COULDNT_CONNECT;
    return response;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

bool HttpClient::should_retry(const HttpRequest& request, const HttpResponse& response,
                              const Failure& failure) const {
  if (!request.idempotent) return response.status == 429 || failure.unsent;
  return failure.retryable || retryable_status(response.status);
}

HttpResponse HttpClient::send(const HttpRequest& request, BodySink* sink,
                              std::string_view progress) {
  const std::string origin = url_origin(request.url);
  HttpRequest current = request;
  for (int redirects = 0; redirects <= kMaxRedirects; ++redirects) {
    std::string scheme = lowercase(url_scheme(current.url));
    if (scheme == "http" && (!options_.plain_http_allowed ||
                             !options_.plain_http_allowed(url_authority(current.url)))) {
      throw Error(current.url +
                  ": plain HTTP refused for this host (HTTPS is required except "
                  "for loopback registries and --insecure-registry hosts)");
    }
    if (scheme != "http" && scheme != "https") throw Error(current.url + ": not an HTTP URL");

    HttpResponse response;
    std::chrono::milliseconds delay = options_.backoff;
    Failure failure;
    int attempt = 1;
    auto retry_until = std::chrono::steady_clock::now() + current.retry_for;
    for (;; ++attempt) {
      if (sink) sink->reset();
      failure = Failure{};
      response = perform(current, sink, progress, failure);
      std::chrono::milliseconds wait = response.status > 0 ? retry_delay(response, delay) : delay;
      // Past `attempts`, only what an outage looks like goes on: no answer,
      // or one saying "later" (a 500 may well be the same every time).
      bool outage =
          response.status <= 0 || (retryable_status(response.status) && response.status != 500);
      bool more = attempt < options_.attempts ||
                  (outage && std::chrono::steady_clock::now() + wait < retry_until);
      if (!more || !should_retry(current, response, failure)) break;
      std::this_thread::sleep_for(wait);
      delay = std::min(delay * 2, kMaxBackoff);
    }
    if (response.status <= 0) {
      throw Error(current.url + ": " + failure.message +
                  (attempt > 1 ? " (after " + std::to_string(attempt) + " attempts)" : ""));
    }

    bool redirect = response.status == 301 || response.status == 302 || response.status == 303 ||
                    response.status == 307 || response.status == 308;
    std::string location = response.header("location");
    if (!redirect || location.empty()) return response;
    current.url = resolve_url(current.url, location);
    if (url_origin(current.url) != origin) current.authorization.clear();
    if (response.status == 303) {
      current.method = "GET";
      current.body.clear();
    }
  }
  throw Error(request.url + ": more than " + std::to_string(kMaxRedirects) + " redirects");
}

}  // namespace fluxop::net
