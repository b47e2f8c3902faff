// One object kept as the API server has it, the way controllers do: a list,
// then a watch from the list's resourceVersion (with bookmarks, so that a
// quiet object's watch can resume without listing again), a new list when the
// server answers 410 Gone, and reconnection with backoff when the connection
// ends or fails. It runs on a thread of its own with a client of its own and
// says when the object changed; never a poll.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "core/kube/client.h"
#include "core/kube/cluster.h"

namespace fluxop::kube {

struct WatchOptions {
  // How long one watch request lasts before it is made again (the server
  // ends it then; the client gives it a minute more).
  std::chrono::seconds watch_timeout{300};
  // A watch that receives nothing for this long, not even the bookmark the
  // API server sends every minute, is dead: it is made again.
  std::chrono::seconds stall_timeout{150};
  std::chrono::milliseconds first_backoff{1'000};
  std::chrono::milliseconds max_backoff{30'000};
};

class ObjectWatch final : public ObjectView {
 public:
  // `key` names the object (its kind and namespace, and name); `on_change`
  // is called from the watch's thread after the first list and every change;
  // `on_error` with a one-line message when a list or watch fails (it is
  // retried).
  ObjectWatch(ClusterAccess access, ObjectKey key, std::function<void()> on_change,
              std::function<void(const std::string&)> on_error, WatchOptions options = {});
  ~ObjectWatch() override;  // stops it within about a tenth of a second
  ObjectWatch(const ObjectWatch&) = delete;
  ObjectWatch& operator=(const ObjectWatch&) = delete;

  std::optional<nlohmann::json> object() const override;
  // Whether a list has succeeded: object() tells what is there.
  bool synced() const override;
  // Lists and watch requests sent so far.
  int requests() const { return requests_; }

 private:
  void run();
  // Lists the object; its resourceVersion to watch from.
  std::string list(KubeClient& client);
  // Watches from `resource_version` until the request ends; the version to
  // go on from, empty when the server said to list again.
  std::string watch(KubeClient& client, std::string resource_version);
  void set(std::optional<nlohmann::json> object);
  // Waits `delay` unless stopped first; false when stopped.
  bool pause(std::chrono::milliseconds delay);

  ClusterAccess access_;
  ObjectKey key_;
  std::function<void()> on_change_;
  std::function<void(const std::string&)> on_error_;
  WatchOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable stopped_;
  std::optional<nlohmann::json> object_;
  bool synced_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

}  // namespace fluxop::kube
