#include "core/kube/watch.h"

#include "core/error.h"
#include "core/kube/answer.h"
#include "core/kube/discovery.h"
#include "core/net/http.h"

namespace fluxop::kube {

namespace {

using nlohmann::json;

// A watch event is one JSON document per line; one larger than this is not
// an object the instance could be.
constexpr std::size_t kMaxEventLine = 16 << 20;

// The lines of a streaming body, each handed on as it completes.
class LineSink : public net::BodySink {
 public:
  explicit LineSink(std::function<void(std::string_view)> on_line) : on_line_(std::move(on_line)) {}
  void reset() override { pending_.clear(); }
  void write(std::string_view bytes) override {
    std::size_t start = 0;
    for (std::size_t end; (end = bytes.find('\n', start)) != std::string_view::npos;
         start = end + 1) {
      pending_.append(bytes.substr(start, end - start));
      if (!pending_.empty()) on_line_(pending_);
      pending_.clear();
    }
    pending_.append(bytes.substr(start));
    if (pending_.size() > kMaxEventLine)
      throw Error("a watch event larger than " + std::to_string(kMaxEventLine) + " bytes");
  }

 private:
  std::function<void(std::string_view)> on_line_;
  std::string pending_;
};

std::string name_selector(const std::string& name) {
  return "fieldSelector=" + net::url_escape("metadata.name=" + name);
}

}  // namespace

ObjectWatch::ObjectWatch(ClusterAccess access, ObjectKey key, std::function<void()> on_change,
                         std::function<void(const std::string&)> on_error, WatchOptions options)
    : access_(std::move(access)),
      key_(std::move(key)),
      on_change_(std::move(on_change)),
      on_error_(std::move(on_error)),
      options_(options),
      thread_([this] { run(); }) {}

ObjectWatch::~ObjectWatch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_.notify_all();
  thread_.join();
}

std::optional<json> ObjectWatch::object() const {
  std::lock_guard lock(mutex_);
  return object_;
}

bool ObjectWatch::synced() const {
  std::lock_guard lock(mutex_);
  return synced_;
}

void ObjectWatch::set(std::optional<json> object) {
  {
    std::lock_guard lock(mutex_);
    object_ = std::move(object);
    synced_ = true;
  }
  on_change_();
}

bool ObjectWatch::pause(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  return !stopped_.wait_for(lock, delay, [this] { return stopping_.load(); });
}

std::string ObjectWatch::list(KubeClient& client) {
  const ResourceMapping& mapping = client.mapper().mapping(key_.group, key_.version, key_.kind);
  ++requests_;
  std::string path = resource_path(mapping, key_.ns);
  Response response = client.request("GET", path, name_selector(key_.name));
  if (!response.ok()) throw api_error(display_name(key_), response.status, response.body);
  ListPage page = decode_list_page("GET " + path, response.body);
  std::optional<json> found;
  for (json& item : page.items) {
    // A list's items carry no apiVersion and kind; the watch's objects do.
    item["apiVersion"] = kube::api_version(key_);
    item["kind"] = key_.kind;
    found = std::move(item);
  }
  set(std::move(found));
  return page.version;
}

std::string ObjectWatch::watch(KubeClient& client, std::string version) {
  const ResourceMapping& mapping = client.mapper().mapping(key_.group, key_.version, key_.kind);
  bool gone = false;
  std::string path = resource_path(mapping, key_.ns);
  LineSink sink([&](std::string_view line) {
    WatchEvent event = decode_watch_event("GET " + path + " (watch)", line);
    const std::string& type = event.type;
    json& object = event.object;
    if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
      version = resource_version(object);
      set(type == "DELETED" ? std::nullopt : std::optional<json>(std::move(object)));
    } else if (type == "BOOKMARK") {
      version = resource_version(object);
    } else if (type == "ERROR" && event.code == 410) {
      gone = true;  // the version is too old: list again
    } else if (type == "ERROR") {
      throw api_error(display_name(key_), event.code, object.dump());
    } else {
      throw Error(display_name(key_) + ": a watch event of type " + quote(type));
    }
  });
  std::string query =
      "watch=1&allowWatchBookmarks=true&resourceVersion=" + net::url_escape(version) +
      "&timeoutSeconds=" + std::to_string(options_.watch_timeout.count()) + "&" +
      name_selector(key_.name);
  ++requests_;
  Response response =
      client.stream(path, query, sink, options_.watch_timeout + std::chrono::seconds(60),
                    options_.stall_timeout, [this] { return stopping_.load(); });
  if (response.status == 410 || gone) return "";
  if (!response.ok()) throw api_error(display_name(key_), response.status, response.body);
  return version;
}

void ObjectWatch::run() {
  // A client of its own: KubeClient is not shared between threads. One
  // attempt per request: this loop retries, with its own backoff.
  ClientOptions client_options;
  client_options.attempts = 1;
  KubeClient client(access_, client_options);
  std::chrono::milliseconds backoff = options_.first_backoff;
  std::string version;
  while (!stopping_) {
    try {
      if (version.empty()) version = list(client);
      auto started = std::chrono::steady_clock::now();
      version = watch(client, version);
      backoff = options_.first_backoff;  // the watch ran its course
      // A server (or proxy) that ends watches at once is not asked again at once.
      if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1) &&
          !pause(options_.first_backoff))
        break;
    } catch (const Error& e) {
      if (stopping_) break;
      on_error_(e.what());
      // Discovery may be what changed (the CRD was deleted and created).
      client.mapper().refresh();
      version.clear();
      if (!pause(backoff)) break;
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
  }
}

}  // namespace fluxop::kube
