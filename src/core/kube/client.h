// A client of the Kubernetes API server over the shared HTTP client: raw
// requests with the kubeconfig's credentials (a 401 runs an exec plugin
// again), bounded retries with backoff on 429, 5xx and connection errors, a
// timeout per request, and JSON helpers for objects (get, create,
// server-side apply, patches, update, delete, list) whose errors are one line
// naming the object: `Deployment/flux-system/source-controller: forbidden: ...`.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/kube/auth.h"
#include "core/kube/discovery.h"
#include "core/kube/kubeconfig.h"
#include "core/kube/object.h"

namespace fluxop::net {
class BodySink;
class HttpClient;
}  // namespace fluxop::net

namespace fluxop::kube {

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{5'000};
  // A request's bound, its retries included (net::HttpOptions::request_timeout);
  // zero: none, the connect and stall bounds still apply.
  std::chrono::milliseconds request_timeout{30'000};
  // An API server that is down is reported after about 3 s: the first
  // attempt and three retries, 250 ms apart and doubling.
  int attempts = 4;
  std::chrono::milliseconds backoff{250};
  // Once the server has answered, an outage (it restarts, is overloaded:
  // no connection, 429, 502-504) is retried until then: an outage in the
  // middle of an apply does not end it before its deadline. An API server
  // never reached fails as above.
  std::optional<std::chrono::steady_clock::time_point> retry_until;
  // Requests sent together (apply_all) go at most this many at a time.
  std::size_t concurrency = 8;
  // Polled while a request runs or waits to be retried: true ends it with
  // an Error (SIGTERM does not wait for an outage to end). A request sent
  // when it is already true (cleanup, such as releasing a lock) is not
  // cancelled, and not retried beyond `attempts`.
  std::function<bool()> cancelled;
};

// The error for a failed response: "<what>: <reason>: <the server's message
// without the object's name repeated>".
ApiError api_error(std::string_view what, long status, std::string_view body);

struct Response {
  long status = 0;
  std::string content_type;
  std::string body;

  bool ok() const { return status >= 200 && status < 300; }
};

// What a write does beyond its defaults.
struct WriteOptions {
  bool dry_run = false;  // dryRun=All: the server checks, and changes nothing
  std::string field_manager = "fluxopctl";
};

class KubeClient {
 public:
  explicit KubeClient(ClusterAccess access, ClientOptions options = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  struct Request {
    std::string method;
    std::string path;
    std::string query;  // already escaped
    std::string body;
    std::string content_type;
    std::string accept;
    // The request's bound when not ClientOptions::request_timeout.
    std::chrono::milliseconds timeout{0};
  };
  // Several requests, sent together; the answers in their order. `sinks`,
  // when given, takes each request's 2xx body as it arrives (null: none).
  std::vector<Response> request_all(const std::vector<Request>& requests,
                                    const std::vector<net::BodySink*>& sinks = {});

  // One request: `path` such as "/api/v1/namespaces", `query` already
  // escaped ("a=b&c=d"). Returns any HTTP status; throws fluxop::Error when
  // no answer arrives after the retries, or the credentials cannot be had.
  Response request(std::string_view method, const std::string& path, const std::string& query = "",
                   const std::string& body = "", std::string_view content_type = "application/json",
                   std::string_view accept = "application/json");

  // A GET whose 2xx body streams into `sink` as it arrives (a watch) for at
  // most `timeout`, ended with an Error when nothing arrives for
  // `stall_timeout` (the stream is dead) or as soon as `cancelled` turns
  // true. A non-2xx answer is returned with its body.
  Response stream(const std::string& path, const std::string& query, net::BodySink& sink,
                  std::chrono::milliseconds timeout, std::chrono::seconds stall_timeout,
                  const std::function<bool()>& cancelled);

  // The object; nullopt when it does not exist.
  std::optional<nlohmann::json> get(const ObjectKey& key);
  // The objects of a kind: in `ns` (all namespaces when empty) for
  // namespaced kinds, with every label of `selector`.
  std::vector<nlohmann::json> list(const ObjectKey& kind, const Labels& selector = {});
  // Several lists, sent concurrently; each answer in the queries' order.
  std::vector<std::vector<nlohmann::json>> list_all(const std::vector<ListQuery>& queries);
  // The same lists, each object handed to `each` as its page arrives and
  // dropped after: memory holds a page, not a list.
  void list_each(const std::vector<ListQuery>& queries, const ListVisitor& each);
  // The same lists, each read whole in one request (which costs the API
  // server less than pages of 500: docs/benchmarks.md) and decoded as it
  // arrives: each object is handed to `each` as soon as its last byte is in,
  // without its metadata.managedFields, while the answers still stream, so
  // `each` must send no request. Memory holds an object, not a page.
  void list_streamed(const std::vector<ListQuery>& queries, const ListVisitor& each);
  nlohmann::json create(const nlohmann::json& object, const WriteOptions& options = {});
  // Server-side apply with force=true (the object sent as JSON, which is YAML).
  nlohmann::json apply(const nlohmann::json& object, const WriteOptions& options = {});
  // Server-side applies of the objects, sent concurrently.
  std::vector<WriteResult> apply_all(const std::vector<nlohmann::json>& objects,
                                     const WriteOptions& options = {});
  // Server-side apply of {"apiVersion", "kind", "metadata", "status"} to the
  // status subresource.
  nlohmann::json apply_status(const nlohmann::json& object, const WriteOptions& options = {});
  // PUT at the object's metadata.resourceVersion; a Conflict ApiError when it moved.
  nlohmann::json update(const nlohmann::json& object, const WriteOptions& options = {});
  // Patches of many objects (a migration, finalizers removed), sent
  // concurrently; each answer only the object's metadata
  // (PartialObjectMetadata), all a caller of thousands of writes needs.
  std::vector<WriteResult> patch_all(const std::vector<ObjectPatch>& patches,
                                     const WriteOptions& options = {});
  nlohmann::json update_status(const nlohmann::json& object, const WriteOptions& options = {});
  // A JSON merge patch of the object, or of its `subresource` ("status").
  nlohmann::json merge_patch(const ObjectKey& key, const nlohmann::json& patch,
                             const WriteOptions& options = {}, std::string_view subresource = {});
  nlohmann::json json_patch(const ObjectKey& key, const nlohmann::json& patch,
                            const WriteOptions& options = {});
  // Deletes with propagationPolicy Background, Foreground or Orphan; false
  // when the object was already gone.
  bool remove(const ObjectKey& key, std::string_view propagation = "Background",
              const WriteOptions& options = {});

  RestMapper& mapper() { return mapper_; }
  const ClusterAccess& access() const { return access_; }
  // HTTP requests sent so far, retries included.
  int requests_sent() const;

 private:
  // The object's URL path, in the context's namespace when it names none.
  std::string object_path(const ObjectKey& key, std::string_view subresource = {});
  Request write_request(std::string_view method, const ObjectKey& key, std::string_view subresource,
                        const nlohmann::json& body, std::string_view content_type,
                        std::string query);
  // The object a write answered; throws the error it answered instead.
  static nlohmann::json written(const Request& request, const ObjectKey& key,
                                const Response& response);
  // The writes `request_for` makes of each key (what it throws is that
  // write's error), sent concurrently.
  std::vector<WriteResult> write_all(const std::vector<ObjectKey>& keys,
                                     const std::function<Request(std::size_t)>& request_for);
  nlohmann::json write(std::string_view method, const ObjectKey& key, std::string_view subresource,
                       const nlohmann::json& body, std::string_view content_type,
                       std::string query);
  // What a list is read with: its path, its selectors' query.
  struct Listing {
    std::string what;  // "Deployment in flux-system"
    std::string path;
    std::string selector;
    std::string api_version;  // items of a list carry none; callers want whole objects
    std::string kind;
    bool named = false;  // one object by name: a GET, not a list
  };
  std::vector<Listing> listings(const std::vector<ListQuery>& queries);
  // How the lists are read: in pages the caller keeps (so the bounds of a
  // whole list apply), in pages it drops, or each in one answer decoded as
  // it streams.
  enum class ListReading { kept_whole, paged, streamed };
  // The one list path under list_all, list_each and list_streamed.
  void read_lists(const std::vector<ListQuery>& queries, ListReading reading,
                  const ListVisitor& each);
  std::vector<Response> send(const std::vector<Request>& requests,
                             const RequestCredentials& credentials,
                             const std::vector<net::BodySink*>& sinks);
  net::HttpClient& http_for(const RequestCredentials& credentials);

  ClusterAccess access_;
  ClientOptions options_;
  // Impersonate-* headers, sent with every request.
  std::vector<std::string> identity_headers_;
  Authenticator auth_;
  RestMapper mapper_;
  std::unique_ptr<net::HttpClient> http_;
  std::string http_cert_pem_;  // the client certificate http_ was made with
  int earlier_requests_ = 0;   // of the HTTP clients replaced
  bool answered_ = false;      // the server has answered a request
};

}  // namespace fluxop::kube
