#include "core/kube/client.h"

#include "core/kube/answer.h"
#include "core/net/http.h"

namespace fluxop::kube {

namespace {

using nlohmann::json;

std::string string_at(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

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
  if (answer.is_object() && string_at(answer, "kind") == "Status") {
    reason = string_at(answer, "reason");
    message = strip_object_name(string_at(answer, "message"));
    json details = answer.value("details", json::object());
    if (details.is_object() && details.value("causes", json()).is_array()) {
      for (const json& cause : details["causes"]) {
        if (!cause.is_object()) continue;
        causes.push_back(
            {string_at(cause, "reason"), string_at(cause, "message"), string_at(cause, "field")});
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
                                       const RequestCredentials& credentials) {
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
    if (!after_stop) request.cancelled = options_.cancelled;
    if (answered_ && options_.retry_until && !after_stop) {
      request.retry_for = std::max(std::chrono::milliseconds(0),
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       *options_.retry_until - std::chrono::steady_clock::now()));
    }
    http_requests.push_back(std::move(request));
  }
  std::vector<net::HttpResponse> http_responses =
      http_for(credentials).send_all(http_requests, options_.concurrency);
  answered_ = true;
  std::vector<Response> responses;
  for (net::HttpResponse& response : http_responses) {
    responses.push_back(
        Response{response.status, response.header("content-type"), std::move(response.body)});
  }
  return responses;
}

std::vector<Response> KubeClient::request_all(const std::vector<Request>& requests) {
  std::vector<Response> responses;
  try {
    responses = send(requests, auth_.current());
    std::vector<std::size_t> unauthorized;
    for (std::size_t i = 0; i < responses.size(); ++i) {
      if (responses[i].status == 401) unauthorized.push_back(i);
    }
    if (!unauthorized.empty() && auth_.forget()) {
      std::vector<Request> again;
      for (std::size_t i : unauthorized) again.push_back(requests[i]);
      std::vector<Response> answers = send(again, auth_.current());
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
  read_lists(queries, true,
             [&](std::size_t query, json&& object) { lists[query].push_back(std::move(object)); });
  return lists;
}

void KubeClient::list_each(const std::vector<ListQuery>& queries, const ListVisitor& each) {
  read_lists(queries, false, each);
}

void KubeClient::read_lists(const std::vector<ListQuery>& queries, bool kept,
                            const ListVisitor& each) {
  // Each list is read in pages, one page of each list at a time, sent
  // together: memory is bounded per page, and per list only when the caller
  // keeps the whole list.
  struct Listing {
    std::string what;  // "Deployment in flux-system"
    std::string path;
    std::string selector;
    std::string api_version;  // items of a list carry none; callers want whole objects
    bool named = false;       // one object by name: a GET, not paged
    std::string next;         // the continue token of the page to ask for
    std::size_t bytes = 0;    // of the pages read
    std::size_t values = 0;
    std::size_t pages = 0;
  };
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
    listing.api_version = kind.group.empty() ? kind.version : kind.group + "/" + kind.version;
    listing.named = !query.name.empty();
    ObjectKey named = kind;
    named.name = query.name;
    listing.path = listing.named ? object_path(named) : resource_path(*mapping, kind.ns);
  }
  std::vector<std::size_t> pending(listings.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  while (!pending.empty()) {
    std::vector<Request> requests;
    for (std::size_t i : pending) {
      const Listing& listing = listings[i];
      std::string page = listing.named ? "" : "limit=" + std::to_string(kListPageItems);
      std::string next = listing.next.empty() ? "" : "continue=" + net::url_escape(listing.next);
      requests.push_back({"GET", listing.path, join_query({listing.selector, page, next}), "",
                          "application/json", "application/json"});
    }
    std::vector<Response> responses = request_all(requests);
    std::vector<std::size_t> more;
    for (std::size_t j = 0; j < pending.size(); ++j) {
      Listing& listing = listings[pending[j]];
      Response& response = responses[j];
      if (listing.named && response.status == 404) continue;
      if (!response.ok()) throw api_error(listing.what, response.status, response.body);
      std::string request = "GET " + listing.path;
      auto beyond = [&](const std::string& bound) {
        return Error(listing.what + ": the API server's answer to " + request +
                     ": a list of more than " + bound);
      };
      listing.bytes += response.body.size();
      if (kept && listing.bytes > kMaxListBytes)
        throw beyond(std::to_string(kMaxListBytes >> 20) + " MiB");
      ListPage page;
      try {
        if (listing.named) {
          page.items.push_back(decode_answer(request, response.body, kAnswerBounds, &page.values));
        } else {
          page = decode_list_page(request, response.body);
        }
      } catch (const Error& e) {
        throw Error(listing.what + ": " + e.what());
      }
      std::string().swap(response.body);  // the decoded page replaces its text
      listing.values += page.values;
      if (kept && listing.values > kMaxListValues)
        throw beyond(std::to_string(kMaxListValues) + " values");
      for (json& item : page.items) {
        if (!item.is_object())
          throw Error(listing.what + ": the API server's answer to " + request + ": not an object");
      }
      for (json& item : page.items) {
        item["apiVersion"] = listing.api_version;
        item["kind"] = queries[pending[j]].kind.kind;
        each(pending[j], std::move(item));
      }
      listing.next = std::move(page.next);
      if (listing.next.empty()) continue;
      if (++listing.pages >= kMaxListPages) throw beyond(std::to_string(kMaxListPages) + " pages");
      more.push_back(pending[j]);
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
