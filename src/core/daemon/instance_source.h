// Where the daemon reads the FluxInstance it keeps applied, and how it hears
// that the instance changed: a file (re-read when it changes, a mounted
// ConfigMap's symlink swap included) or the FluxInstance object in the
// cluster (a watch). Never a poll: the loop waits on change_fd().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/instance/instance.h"
#include "core/kube/cluster.h"

namespace fluxop::daemon {

// One reading of the instance.
struct Observed {
  std::optional<instance::FluxInstance> flux;
  // Changes when what decides a reconcile does (the spec, the annotations);
  // empty when there is no instance. An object in the cluster that does not
  // load has one too: its failure is recorded on it once per key.
  std::string key;
  std::string uid;              // the object's, when read from the cluster
  std::int64_t generation = 0;  // the object's, when read from the cluster
  bool deleting = false;        // the object is being deleted: uninstall
  // When there is no instance: why (one line; empty while nothing is known
  // yet), and whether that is because it does not exist (rather than
  // failing to load).
  std::string problem;
  bool missing = false;
  std::vector<std::string> warnings;  // of loading it
};

class InstanceSource {
 public:
  virtual ~InstanceSource() = default;
  // A descriptor that turns readable when the instance may have changed.
  virtual int change_fd() const = 0;
  // The instance as it is now; clears change_fd()'s readiness first, so a
  // change made while it reads is not missed.
  virtual Observed read() = 0;
};

// The FluxInstance in a file. Its directory is watched (inotify), and the
// directory of the file it resolves to: an editor's rename, a rewrite in
// place and a ConfigMap volume's swap of its `..data` symlink are all seen.
class FileSource final : public InstanceSource {
 public:
  FileSource(std::string path, instance::LoadOptions options);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  int change_fd() const override { return inotify_; }
  Observed read() override;

 private:
  void watch_directory_of(const std::string& path);

  std::string path_;
  instance::LoadOptions options_;
  int inotify_ = -1;
  std::vector<std::string> watched_;
};

// The FluxInstance `flux` in a namespace, as the operator reads it: a watch
// on the API server. Fields the instance does not know (a newer CRD's) are
// warnings, not errors.
class ClusterSource final : public InstanceSource {
 public:
  // `on_error` hears, from the watch's thread, of lists and watches that
  // failed (they are retried).
  ClusterSource(kube::Cluster& cluster, std::string ns,
                std::function<void(const std::string&)> on_error);
  ~ClusterSource() override;
  ClusterSource(const ClusterSource&) = delete;
  ClusterSource& operator=(const ClusterSource&) = delete;

  int change_fd() const override { return event_; }
  Observed read() override;

 private:
  std::string ns_;
  int event_ = -1;
  std::unique_ptr<kube::ObjectView> watch_;
};

// The instance of another source (a file), with the requests users make of
// its object in the cluster (`fluxopctl reconcile`, `resume`, the upstream
// CLI's: the requestedAt and forceAt annotations): a new one changes the key,
// so that the daemon reconciles at once, as for the file's own change.
class WithClusterRequests final : public InstanceSource {
 public:
  WithClusterRequests(std::unique_ptr<InstanceSource> inner, kube::Cluster& cluster, std::string ns,
                      std::function<void(const std::string&)> on_error);
  ~WithClusterRequests() override;
  WithClusterRequests(const WithClusterRequests&) = delete;
  WithClusterRequests& operator=(const WithClusterRequests&) = delete;

  // Readable when the inner source's is or the object changed.
  int change_fd() const override { return epoll_; }
  Observed read() override;

 private:
  std::unique_ptr<InstanceSource> inner_;
  int event_ = -1;
  int epoll_ = -1;
  std::unique_ptr<kube::ObjectView> watch_;
};

}  // namespace fluxop::daemon
