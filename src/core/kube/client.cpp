#include "core/kube/client.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "core/kube/answer.h"
#include "core/kube/meta.h"
#include "core/net/http.h"

namespace fluxop::kube {

namespace {

using nlohmann::json;

// "AlreadyExists" -> "already exists".
std::string reason_words(std::string_view reason) {
  std::string words;
  for (char c : reason) {
    if (std::isupper(static_cast<unsigned char>(c)) && !words.empty()) words += ' ';
    words += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return words;
}

// The server's message without the object's name it starts with, which the
// caller's name replaces: `deployments.apps "x" is forbidden: User ...` ->
// `User ...`; `configmaps "x" not found` -> ``.
std::string strip_object_name(std::string message) {
  for (std::string_view marker : {" is forbidden: ", " is invalid: ", "\": "}) {
    if (std::size_t at = message.find(marker); at != std::string::npos && at < 300)
      return message.substr(at + marker.size());
  }
  for (std::string_view ending : {"\" not found", "\" already exists"}) {
    if (message.ends_with(ending)) return "";
  }
  return message;
}

// At most this many causes of an error are quoted in its message.
constexpr std::size_t kCausesShown = 3;

std::string first_line(std::string_view text, std::size_t limit) {
  text = text.substr(0, text.find('\n'));
  return std::string(text.substr(0, limit));
}

bool namespaced_without_name(const ResourceMapping& mapping, const ObjectKey& key) {
  return mapping.namespaced && key.ns.empty();
}

std::string join_query(std::initializer_list<std::string> parts) {
  std::string query;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    query += (query.empty() ? "" : "&") + part;
  }
  return query;
}

std::string dry_run_query(const WriteOptions& options) {
  return options.dry_run ? "dryRun=All" : "";
}

std::string field_manager_query(const WriteOptions& options) {
  return "fieldManager=" + net::url_escape(options.field_manager);
}

}  // namespace

ApiError api_error(std::string_view what, long status, std::string_view body) {
  // Not JSON, or beyond the bounds: its first line is quoted instead.
  json answer = parse_peer_json(body, nullptr, kAnswerBounds);
  std::string reason, message;
  std::vector<StatusCause> causes;
  if (answer.is_object() && string_member(answer, "kind") == "Status") {
    reason = string_member(answer, "reason");
    message = strip_object_name(string_member(answer, "message"));
    json details = answer.value("details", json::object());
    if (details.is_object() && details.value("causes", json()).is_array()) {
      for (const json& cause : details["causes"]) {
        if (!cause.is_object()) continue;
        causes.push_back({string_member(cause, "reason"), string_member(cause, "message"),
                          string_member(cause, "field")});
      }
    }
  } else {
    message = first_line(body, 200);  // a proxy's page, a plain-text error
  }
  std::string text(what);
  text += ": " + (reason.empty() ? "HTTP " + std::to_string(status) : reason_words(reason));
  if (!message.empty() && reason_words(reason) != message) text += ": " + message;
  // A generic message ("the server rejected our request due to an error in
  // our request", a failed JSON patch test) says what happened only in its
  // causes.
  for (std::size_t i = 0; i < causes.size() && i < kCausesShown; ++i) {
    if (!causes[i].message.empty() && message.find(causes[i].message) == std::string::npos)
      text += " (" + first_line(causes[i].message, 200) + ")";
  }
  return ApiError(text, status, reason, std::move(causes));
}

KubeClient::KubeClient(ClusterAccess access, ClientOptions options)
    : access_(std::move(access)),
      options_(options),
      identity_headers_(impersonation_headers(access_.impersonate, access_.impersonate_origin)),
      auth_(access_),
      mapper_(*this) {}

KubeClient::~KubeClient() = default;

int KubeClient::requests_sent() const {
  return earlier_requests_ + (http_ ? http_->requests_sent() : 0);
}

net::HttpClient& KubeClient::http_for(const RequestCredentials& credentials) {
  // The client certificate is part of the TLS setup: a plugin that hands
  // out a new one needs a new connection pool.
  if (!http_ || credentials.client_cert_pem != http_cert_pem_) {
    net::HttpOptions http;
    http.plain_http_allowed = [](std::string_view) { return true; };  // the kubeconfig says so
    http.connect_timeout = options_.connect_timeout;
    http.request_timeout = options_.request_timeout;
    http.attempts = options_.attempts;
    http.backoff = options_.backoff;
    http.tls.ca_pem = access_.ca_pem;
    http.tls.insecure_skip_verify = access_.insecure_skip_tls_verify;
    http.tls.client_cert_pem = credentials.client_cert_pem;
    http.tls.client_key_pem = credentials.client_key_pem;
    http.proxy = access_.proxy_url;
    earlier_requests_ = requests_sent();
    http_ = std::make_unique<net::HttpClient>(std::move(http));
    http_cert_pem_ = credentials.client_cert_pem;
  }
  return *http_;
}

std::vector<Response> KubeClient::send(const std::vector<Request>& requests,
                                       const RequestCredentials& credentials,
                                       const std::vector<net::BodySink*>& sinks) {
  // A request sent once the stop is asked (an apply's release of its lock)
  // is neither cancelled nor retried through an outage: it ends in seconds.
  bool after_stop = options_.cancelled && options_.cancelled();
  std::vector<net::HttpRequest> http_requests;
  for (const Request& one : requests) {
    net::HttpRequest request;
    request.method = one.method;
    request.url = access_.server + one.path + (one.query.empty() ? "" : "?" + one.query);
    request.headers = identity_headers_;
    request.headers.push_back("Accept: " + one.accept);
    if (!one.body.empty()) request.headers.push_back("Content-Type: " + one.content_type);
    request.authorization = {credentials.authorization, net::url_authority(access_.server)};
    request.body = one.body;
    request.max_body = kMaxAnswerBytes;
    request.idempotent = one.method != "POST";
    request.timeout = one.timeout;
    if (!after_stop) request.cancelled = options_.cancelled;
    if (answered_ && options_.retry_until && !after_stop) {
      request.retry_for = std::max(std::chrono::milliseconds(0),
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       *options_.retry_until - std::chrono::steady_clock::now()));
    }
    http_requests.push_back(std::move(request));
  }
  std::vector<net::HttpResponse> http_responses =
      http_for(credentials).send_all(http_requests, options_.concurrency, sinks);
  answered_ = true;
  std::vector<Response> responses;
  for (net::HttpResponse& response : http_responses) {
    responses.push_back(
        Response{response.status, response.header("content-type"), std::move(response.body)});
  }
  return responses;
}

std::vector<Response> KubeClient::request_all(const std::vector<Request>& requests,
                                              const std::vector<net::BodySink*>& sinks) {
  std::vector<Response> responses;
  try {
    responses = send(requests, auth_.current(), sinks);
    std::vector<std::size_t> unauthorized;
    for (std::size_t i = 0; i < responses.size(); ++i) {
      if (responses[i].status == 401) unauthorized.push_back(i);
    }
    if (!unauthorized.empty() && auth_.forget()) {
      std::vector<Request> again;
      std::vector<net::BodySink*> again_sinks;
      for (std::size_t i : unauthorized) {
        again.push_back(requests[i]);
        if (!sinks.empty()) again_sinks.push_back(sinks[i]);
      }
      std::vector<Response> answers = send(again, auth_.current(), again_sinks);
      for (std::size_t i = 0; i < unauthorized.size(); ++i) {
        responses[unauthorized[i]] = std::move(answers[i]);
      }
    }
  } catch (const Error& e) {
    // The URL names the server; the context says which kubeconfig entry it is.
    throw Error(std::string(e.what()) +
                (access_.context.empty() ? "" : " (context \"" + access_.context + "\")"));
  }
  return responses;
}

Response KubeClient::request(std::string_view method, const std::string& path,
                             const std::string& query, const std::string& body,
                             std::string_view content_type, std::string_view accept) {
  return std::move(request_all({Request{std::string(method), path, query, body,
                                        std::string(content_type), std::string(accept)}})
                       .front());
}

Response KubeClient::stream(const std::string& path, const std::string& query, net::BodySink& sink,
                            std::chrono::milliseconds timeout, std::chrono::seconds stall_timeout,
                            const std::function<bool()>& cancelled) {
  auto once = [&](const RequestCredentials& credentials) {
    net::HttpRequest request;
    request.url = access_.server + path + (query.empty() ? "" : "?" + query);
    request.headers = identity_headers_;
    request.headers.push_back("Accept: application/json");
    request.authorization = {credentials.authorization, net::url_authority(access_.server)};
    request.timeout = timeout;
    request.stall = net::StallBound{.bytes_per_second = 1, .time = stall_timeout};
    request.cancelled = cancelled;
    net::HttpResponse response = http_for(credentials).send(request, &sink);
    return Response{response.status, response.header("content-type"), std::move(response.body)};
  };
  try {
    Response response = once(auth_.current());
    if (response.status == 401 && auth_.forget()) response = once(auth_.current());
    answered_ = true;
    return response;
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                (access_.context.empty() ? "" : " (context \"" + access_.context + "\")"));
  }
}

std::string KubeClient::object_path(const ObjectKey& key, std::string_view subresource) {
  const ResourceMapping& mapping = mapper_.mapping(key.group, key.version, key.kind);
  std::string_view ns = namespaced_without_name(mapping, key) ? access_.default_namespace : key.ns;
  return resource_path(mapping, ns, key.name, subresource);
}

KubeClient::Request KubeClient::write_request(std::string_view method, const ObjectKey& key,
                                              std::string_view subresource, const json& body,
                                              std::string_view content_type, std::string query) {
  std::string path;
  try {
    // A POST creates in the collection; everything else names the object.
    ObjectKey target = key;
    if (method == "POST") target.name.clear();
    path = object_path(target, subresource);
  } catch (const ApiError&) {
    throw;
  } catch (const Error& e) {
    throw Error(display_name(key) + ": " + e.what());
  }
  return {std::string(method), path, std::move(query), body.dump(), std::string(content_type),
          "application/json"};
}

json KubeClient::written(const Request& request, const ObjectKey& key, const Response& response) {
  if (!response.ok()) throw api_error(display_name(key), response.status, response.body);
  try {
    return decode_answer(request.method + " " + request.path, response.body);
  } catch (const Error& e) {
    throw Error(display_name(key) + ": " + e.what());
  }
}

json KubeClient::write(std::string_view method, const ObjectKey& key, std::string_view subresource,
                       const json& body, std::string_view content_type, std::string query) {
  Request request = write_request(method, key, subresource, body, content_type, std::move(query));
  return written(request, key, request_all({request}).front());
}

std::vector<WriteResult> KubeClient::write_all(
    const std::vector<ObjectKey>& keys, const std::function<Request(std::size_t)>& request_for) {
  std::vector<WriteResult> results(keys.size());
  std::vector<Request> requests;
  std::vector<std::size_t> sent;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    try {
      requests.push_back(request_for(i));
      sent.push_back(i);
    } catch (const Error&) {
      results[i].error = std::current_exception();
    }
  }
  std::vector<Response> responses = request_all(requests);
  for (std::size_t j = 0; j < sent.size(); ++j) {
    try {
      results[sent[j]].object = written(requests[j], keys[sent[j]], responses[j]);
    } catch (const Error&) {
      results[sent[j]].error = std::current_exception();
    }
  }
  return results;
}

std::vector<WriteResult> KubeClient::apply_all(const std::vector<json>& objects,
                                               const WriteOptions& options) {
  std::vector<ObjectKey> keys;
  for (const json& object : objects) keys.push_back(object_key(object));
  std::string query =
      join_query({dry_run_query(options), field_manager_query(options), "force=true"});
  return write_all(keys, [&](std::size_t i) {
    return write_request("PATCH", keys[i], {}, objects[i], "application/apply-patch+yaml", query);
  });
}

std::vector<WriteResult> KubeClient::patch_all(const std::vector<ObjectPatch>& patches,
                                               const WriteOptions& options) {
  std::vector<ObjectKey> keys;
  for (const ObjectPatch& patch : patches) keys.push_back(patch.key);
  std::string query = join_query({dry_run_query(options), field_manager_query(options)});
  return write_all(keys, [&](std::size_t i) {
    const ObjectPatch& patch = patches[i];
    Request request =
        write_request("PATCH", patch.key, {}, patch.patch,
                      patch.type == ObjectPatch::Type::Json ? "application/json-patch+json"
                                                            : "application/merge-patch+json",
                      query);
    // The server encodes and we decode the metadata alone, not the
    // whole object; a server that cannot answers the whole object.
    request.accept =
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
    return request;
  });
}

std::optional<json> KubeClient::get(const ObjectKey& key) {
  std::string path;
  try {
    path = object_path(key);
  } catch (const Error& e) {
    throw Error(display_name(key) + ": " + e.what());
  }
  Response response = request("GET", path);
  if (response.status == 404) return std::nullopt;
  if (!response.ok()) throw api_error(display_name(key), response.status, response.body);
  try {
    return decode_answer("GET " + path, response.body);
  } catch (const Error& e) {
    throw Error(display_name(key) + ": " + e.what());
  }
}

std::vector<json> KubeClient::list(const ObjectKey& kind, const Labels& selector) {
  return std::move(list_all({{kind, selector, ""}}).front());
}

std::vector<std::vector<json>> KubeClient::list_all(const std::vector<ListQuery>& queries) {
  std::vector<std::vector<json>> lists(queries.size());
  read_lists(queries, ListReading::kept_whole,
             [&](std::size_t query, json&& object) { lists[query].push_back(std::move(object)); });
  return lists;
}

void KubeClient::list_each(const std::vector<ListQuery>& queries, const ListVisitor& each) {
  read_lists(queries, ListReading::paged, each);
}

void KubeClient::list_streamed(const std::vector<ListQuery>& queries, const ListVisitor& each) {
  read_lists(queries, ListReading::streamed, each);
}

std::vector<KubeClient::Listing> KubeClient::listings(const std::vector<ListQuery>& queries) {
  std::vector<Listing> listings;
  for (const ListQuery& query : queries) {
    const ObjectKey& kind = query.kind;
    Listing& listing = listings.emplace_back();
    listing.what = kind.kind + (kind.ns.empty() ? "" : " in " + kind.ns);
    const ResourceMapping* mapping = nullptr;
    try {
      mapping = &mapper_.mapping(kind.group, kind.version, kind.kind);
    } catch (const Error& e) {
      throw Error(listing.what + ": " + e.what());
    }
    // One object by name is a GET: a LIST with a field selector may skip
    // the API server's cache.
    std::string labels;
    for (const auto& [key, value] : query.selector) {
      labels += (labels.empty() ? "" : ",") + key + "=" + value;
    }
    listing.selector =
        join_query({labels.empty() ? "" : "labelSelector=" + net::url_escape(labels),
                    query.fields.empty() ? "" : "fieldSelector=" + net::url_escape(query.fields)});
    listing.api_version = kube::api_version(kind);
    listing.kind = kind.kind;
    listing.named = !query.name.empty();
    ObjectKey named = kind;
    named.name = query.name;
    listing.path = listing.named ? object_path(named) : resource_path(*mapping, kind.ns);
  }
  return listings;
}

namespace {

// One list's answer decoded as it arrives: each object handed over as soon
// as its last byte is in.
class StreamedList : public net::BodySink {
 public:
  StreamedList(std::string what, std::string request, std::function<void(json&&)> each)
      : what_(std::move(what)), request_(std::move(request)), each_(std::move(each)) {}

  void reset() override {
    // A retry would hand the objects over again: the list is refused.
    if (decoder_ && decoder_->elements() > 0) handed_before_retry_ = decoder_->elements();
    PeerJsonArrayStream::Options options;
    options.member = "items";
    options.bounds = kAnswerBounds;
    options.max_element_bytes = kMaxAnswerBytes;
    // Most of an object's bytes, and read by no one who reads many.
    options.dropped = {"/metadata/managedFields"};
    decoder_.emplace(std::move(options), [this](json&& item) {
      try {
        each_(std::move(item));
      } catch (...) {
        visitor_failed_ = true;
        throw;
      }
    });
  }

  void write(std::string_view bytes) override {
    if (handed_before_retry_ > 0)
      throw Error(what_ + ": the API server's answer to " + request_ + " broke off after " +
                  std::to_string(handed_before_retry_) + " objects");
    try {
      decoder_->write(bytes);
    } catch (const Error& e) {
      if (visitor_failed_) throw;
      throw Error(what_ + ": the API server's answer to " + request_ + ": " + e.what());
    }
  }

  // The continue token of the list once its answer is whole: empty but for
  // a server that pages unasked, whose next page is read with this sink too.
  std::string finish() {
    try {
      json envelope = decoder_->finish();
      decoder_.reset();  // the next page's objects are new ones
      auto items = envelope.is_object() ? envelope.find("items") : envelope.end();
      if (items == envelope.end() || !items->is_array()) throw Error("not a list");
      std::string next;
      auto metadata = envelope.find("metadata");
      if (metadata != envelope.end() && metadata->is_object()) {
        auto token = metadata->find("continue");
        if (token != metadata->end() && token->is_string()) next = token->get<std::string>();
      }
      return next;
    } catch (const Error& e) {
      throw Error(what_ + ": the API server's answer to " + request_ + ": " + e.what());
    }
  }

 private:
  std::string what_;
  std::string request_;
  std::function<void(json&&)> each_;
  std::optional<PeerJsonArrayStream> decoder_;
  std::size_t handed_before_retry_ = 0;
  bool visitor_failed_ = false;
};

}  // namespace

void KubeClient::read_lists(const std::vector<ListQuery>& queries, ListReading reading,
                            const ListVisitor& each) {
  // Each list is read one page (or, streamed, one whole answer) at a time,
  // the lists' requests sent together.
  struct Paging {
    std::string next;       // the continue token of the page to ask for
    std::size_t bytes = 0;  // of the pages read
    std::size_t values = 0;
    std::size_t pages = 0;
  };
  std::vector<Listing> listings = this->listings(queries);
  // Items of a list carry no apiVersion nor kind: each object is handed
  // over whole.
  auto hand_over = [&](std::size_t i, const std::string& request, json&& object) {
    const Listing& listing = listings[i];
    if (!object.is_object())
      throw Error(listing.what + ": the API server's answer to " + request + ": not an object");
    object["apiVersion"] = listing.api_version;
    object["kind"] = listing.kind;
    each(i, std::move(object));
  };
  bool streamed = reading == ListReading::streamed;
  std::vector<std::unique_ptr<StreamedList>> streams(listings.size());
  if (streamed) {
    for (std::size_t i = 0; i < listings.size(); ++i) {
      std::string request = "GET " + listings[i].path;
      streams[i] = std::make_unique<StreamedList>(
          listings[i].what, request,
          [&hand_over, i, request](json&& item) { hand_over(i, request, std::move(item)); });
    }
  }
  // A whole list takes as long as the API server lets it (its
  // --request-timeout, a minute by default), not a page's bound.
  std::chrono::milliseconds timeout{0};
  if (streamed && options_.request_timeout.count() > 0)
    timeout = std::max(options_.request_timeout, std::chrono::milliseconds(60'000));
  std::vector<Paging> pagings(listings.size());
  std::vector<std::size_t> pending(listings.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  while (!pending.empty()) {
    std::vector<Request> requests;
    std::vector<net::BodySink*> sinks;
    for (std::size_t i : pending) {
      const Listing& listing = listings[i];
      std::string page = listing.named || streamed ? "" : "limit=" + std::to_string(kListPageItems);
      const std::string& token = pagings[i].next;
      std::string next = token.empty() ? "" : "continue=" + net::url_escape(token);
      Request& request = requests.emplace_back(Request{"GET", listing.path,
                                                       join_query({listing.selector, page, next}),
                                                       "", "application/json", "application/json"});
      request.timeout = timeout;
      // One object by name is decoded once it is whole.
      sinks.push_back(listing.named ? nullptr : streams[i].get());
    }
    std::vector<Response> responses = request_all(requests, sinks);
    std::vector<std::size_t> more;
    for (std::size_t j = 0; j < pending.size(); ++j) {
      std::size_t i = pending[j];
      const Listing& listing = listings[i];
      Paging& paging = pagings[i];
      Response& response = responses[j];
      if (listing.named && response.status == 404) continue;
      if (!response.ok()) throw api_error(listing.what, response.status, response.body);
      std::string request = "GET " + listing.path;
      auto beyond = [&](const std::string& bound) {
        return Error(listing.what + ": the API server's answer to " + request +
                     ": a list of more than " + bound);
      };
      if (streams[i] && !listing.named) {
        paging.next = streams[i]->finish();
      } else {
        bool kept = reading == ListReading::kept_whole;
        paging.bytes += response.body.size();
        if (kept && paging.bytes > kMaxListBytes)
          throw beyond(std::to_string(kMaxListBytes >> 20) + " MiB");
        ListPage page;
        try {
          if (listing.named) {
            page.items.push_back(
                decode_answer(request, response.body, kAnswerBounds, &page.values));
          } else {
            page = decode_list_page(request, response.body);
          }
        } catch (const Error& e) {
          throw Error(listing.what + ": " + e.what());
        }
        std::string().swap(response.body);  // the decoded page replaces its text
        paging.values += page.values;
        if (kept && paging.values > kMaxListValues)
          throw beyond(std::to_string(kMaxListValues) + " values");
        for (json& item : page.items) hand_over(i, request, std::move(item));
        paging.next = std::move(page.next);
      }
      if (paging.next.empty()) continue;
      if (++paging.pages >= kMaxListPages) throw beyond(std::to_string(kMaxListPages) + " pages");
      more.push_back(i);
    }
    pending = std::move(more);
  }
}

json KubeClient::create(const json& object, const WriteOptions& options) {
  return write("POST", object_key(object), {}, object, "application/json",
               join_query({dry_run_query(options), field_manager_query(options)}));
}

json KubeClient::apply(const json& object, const WriteOptions& options) {
  WriteResult result = std::move(apply_all({object}, options).front());
  if (result.error) std::rethrow_exception(result.error);
  return std::move(result.object);
}

json KubeClient::apply_status(const json& object, const WriteOptions& options) {
  return write("PATCH", object_key(object), "status", object, "application/apply-patch+yaml",
               join_query({dry_run_query(options), field_manager_query(options), "force=true"}));
}

json KubeClient::update(const json& object, const WriteOptions& options) {
  return write("PUT", object_key(object), {}, object, "application/json",
               join_query({dry_run_query(options), field_manager_query(options)}));
}

json KubeClient::update_status(const json& object, const WriteOptions& options) {
  return write("PUT", object_key(object), "status", object, "application/json",
               join_query({dry_run_query(options), field_manager_query(options)}));
}

json KubeClient::merge_patch(const ObjectKey& key, const json& patch, const WriteOptions& options,
                             std::string_view subresource) {
  return write("PATCH", key, subresource, patch, "application/merge-patch+json",
               join_query({dry_run_query(options), field_manager_query(options)}));
}

json KubeClient::json_patch(const ObjectKey& key, const json& patch, const WriteOptions& options) {
  return write("PATCH", key, {}, patch, "application/json-patch+json",
               join_query({dry_run_query(options), field_manager_query(options)}));
}

bool KubeClient::remove(const ObjectKey& key, std::string_view propagation,
                        const WriteOptions& options) {
  json body = {{"apiVersion", "v1"},
               {"kind", "DeleteOptions"},
               {"propagationPolicy", std::string(propagation)}};
  // With a body, the API server reads the options from it, not the query.
  if (options.dry_run) body["dryRun"] = {"All"};
  try {
    write("DELETE", key, {}, body, "application/json", dry_run_query(options));
  } catch (const ApiError& e) {
    if (e.status() == 404) return false;
    throw;
  }
  return true;
}

}  // namespace fluxop::kube
