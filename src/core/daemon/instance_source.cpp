#include "core/daemon/instance_source.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/digest.h"
#include "core/error.h"
#include "core/reconcile/instance_object.h"
#include "core/reconcile/instance_requests.h"
#include "core/yaml/json.h"

namespace fluxop::daemon {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Empties a non-blocking descriptor's pending notifications.
void drain(int fd) {
  char buffer[4096];
  while (::read(fd, buffer, sizeof buffer) > 0) {
  }
}

}  // namespace

FileSource::FileSource(std::string path, instance::LoadOptions options)
    : path_(std::move(path)), options_(options) {
  inotify_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_ < 0) throw Error(path_ + ": inotify: " + std::strerror(errno));
  watch_directory_of(path_);
}

FileSource::~FileSource() { close(inotify_); }

void FileSource::watch_directory_of(const std::string& path) {
  fs::path directory = fs::absolute(path).parent_path();
  if (std::find(watched_.begin(), watched_.end(), directory.string()) != watched_.end()) return;
  constexpr std::uint32_t kChanges =
      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MODIFY;
  if (inotify_add_watch(inotify_, directory.c_str(), kChanges) < 0)
    throw Error(path_ + ": cannot watch " + directory.string() + ": " + std::strerror(errno));
  watched_.push_back(directory.string());
}

Observed FileSource::read() {
  drain(inotify_);
  Observed observed;
  try {
    // The file a symlink resolves to may live elsewhere (a ConfigMap
    // volume's ..data/...): its directory is watched too.
    std::error_code error;
    fs::path target = fs::canonical(path_, error);
    if (!error) watch_directory_of(target.string());
    instance::FluxInstance flux = instance::load_instance_file(path_, options_, observed.warnings);
    observed.key = sha256_digest(reconcile::instance_object(flux).dump());
    observed.flux = std::move(flux);
  } catch (const Error& e) {
    observed.problem = e.what();
  }
  return observed;
}

namespace {

// An eventfd, and the watch of the instance `flux` in `ns` that writes to it.
std::unique_ptr<kube::ObjectView> watch_instance(kube::Cluster& cluster, const std::string& ns,
                                                 int& event,
                                                 std::function<void(const std::string&)> on_error) {
  event = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event < 0) throw Error(std::string("eventfd: ") + std::strerror(errno));
  return cluster.watch(
      reconcile::instance_ref(ns, "flux"),
      [fd = event] {
        std::uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(fd, &one, sizeof one);
      },
      std::move(on_error));
}

}  // namespace

ClusterSource::ClusterSource(kube::Cluster& cluster, std::string ns,
                             std::function<void(const std::string&)> on_error)
    : ns_(std::move(ns)) {
  watch_ = watch_instance(cluster, ns_, event_, std::move(on_error));
}

ClusterSource::~ClusterSource() {
  watch_.reset();  // its thread writes to event_
  close(event_);
}

Observed ClusterSource::read() {
  drain(event_);
  Observed observed;
  std::string name = "FluxInstance/" + ns_ + "/flux";
  std::optional<json> live = watch_->object();
  if (live) live = reconcile::conform_instance(std::move(*live));
  if (!live) {
    // Before the watch's first list nothing is known, which is no problem:
    // the list wakes the daemon (change_fd) with the answer.
    if (watch_->synced()) {
      observed.problem = name + ": not found";
      observed.missing = true;
    }
    return observed;
  }
  // Conformed: metadata is an object or absent, its fields of their types.
  json metadata = live->value("metadata", json::object());
  json object = reconcile::instance_object(*live, metadata.value("name", ""), ns_);
  // The uid too: an instance deleted and created again starts at the same
  // generation.
  observed.uid = metadata.value("uid", "");
  observed.generation = metadata.value("generation", std::int64_t{0});
  observed.deleting = metadata.contains("deletionTimestamp");
  observed.key = observed.uid + " " + std::to_string(metadata.value("generation", 0)) + " " +
                 metadata.value("annotations", json::object()).dump() +
                 (observed.deleting ? " deleting" : "");
  try {
    observed.flux = instance::load_instance(yaml::from_json(nlohmann::ordered_json(object)), name,
                                            {.allow_unknown_fields = true}, observed.warnings);
  } catch (const Error& e) {
    observed.problem = e.what();
  }
  return observed;
}

WithClusterRequests::WithClusterRequests(std::unique_ptr<InstanceSource> inner,
                                         kube::Cluster& cluster, std::string ns,
                                         std::function<void(const std::string&)> on_error)
    : inner_(std::move(inner)) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) throw Error(std::string("epoll: ") + std::strerror(errno));
  watch_ = watch_instance(cluster, ns, event_, std::move(on_error));
  for (int fd : {inner_->change_fd(), event_}) {
    epoll_event readable{};
    readable.events = EPOLLIN;
    readable.data.fd = fd;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &readable) < 0)
      throw Error(std::string("epoll: ") + std::strerror(errno));
  }
}

WithClusterRequests::~WithClusterRequests() {
  watch_.reset();  // its thread writes to event_
  close(event_);
  close(epoll_);
}

Observed WithClusterRequests::read() {
  drain(event_);
  Observed observed = inner_->read();
  std::optional<json> live = watch_->object();
  if (!observed.flux || !live) return observed;
  std::map<std::string, std::string> annotations = reconcile::annotations_of(*live);
  for (std::string_view request :
       {reconcile::kRequestedAtAnnotation, reconcile::kForceAtAnnotation}) {
    auto found = annotations.find(std::string(request));
    if (found != annotations.end())
      observed.key += " " + std::string(request) + "=" + found->second;
  }
  return observed;
}

}  // namespace fluxop::daemon
