#include "core/reconcile/lease_lock.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <thread>

#include "core/error.h"

namespace fluxop::reconcile {

using nlohmann::json;

namespace {

std::string hostname() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

// A MicroTime: RFC 3339 with microseconds.
std::string micro_time(std::chrono::system_clock::time_point time) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch());
  std::time_t seconds = static_cast<std::time_t>(micros.count() / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%06lldZ",
                static_cast<long long>(micros.count() % 1'000'000));
  return text;
}

std::chrono::system_clock::time_point parse_time(const std::string& text) {
  std::tm utc{};
  if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &utc)) return {};
  return std::chrono::system_clock::from_time_t(timegm(&utc));
}

// Whether the holder ran on this host in a process that is gone.
bool holder_died_here(const std::string& holder) {
  std::string prefix = hostname() + "/";
  if (!holder.starts_with(prefix)) return false;
  std::string rest = holder.substr(prefix.size());
  pid_t pid = static_cast<pid_t>(std::atol(rest.c_str()));
  return pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

LeaseLock::LeaseLock(kube::Cluster& cluster, std::string ns, std::string name,
                     std::function<void(const std::string&)> progress)
    : cluster_(cluster),
      ref_{"coordination.k8s.io", "v1", "Lease", std::move(ns), std::move(name)},
      progress_(std::move(progress)),
      identity_(hostname() + "/" + std::to_string(getpid())) {}

LeaseLock::~LeaseLock() {
  try {
    release();
  } catch (const std::exception& e) {
    if (progress_) {
      progress_("warning: " + display_name(ref_) + ": not released (" + e.what() +
                "); it expires in " + std::to_string(kDuration.count()) + "s");
    }
  }
}

json LeaseLock::lease_object(const std::string& resource_version) const {
  std::string now = micro_time(std::chrono::system_clock::now());
  json metadata = {{"name", ref_.name}, {"namespace", ref_.ns}};
  if (!resource_version.empty()) metadata["resourceVersion"] = resource_version;
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", metadata},
          {"spec",
           {{"holderIdentity", identity_},
            {"leaseDurationSeconds", kDuration.count()},
            {"acquireTime", now},
            {"renewTime", now}}}};
}

bool LeaseLock::write_ours(bool holding) {
  json lease = lease_object(resource_version_);
  if (!holding) lease["spec"]["holderIdentity"] = "";
  std::optional<json> written =
      resource_version_.empty() ? cluster_.create(lease) : cluster_.replace(lease);
  if (!written) return false;
  resource_version_ = written->value("metadata", json::object()).value("resourceVersion", "");
  return true;
}

bool LeaseLock::try_take(const std::optional<json>& live) {
  resource_version_.clear();
  if (live) {
    const json& spec = live->value("spec", json::object());
    std::string holder = spec.value("holderIdentity", "");
    auto renewed = parse_time(spec.value("renewTime", ""));
    auto duration = std::chrono::seconds(spec.value("leaseDurationSeconds", 0));
    bool free = holder.empty() || holder == identity_ ||
                renewed + duration < std::chrono::system_clock::now() || holder_died_here(holder);
    if (!free) return false;
    resource_version_ = live->at("metadata").value("resourceVersion", "");
  }
  return write_ours(true);
}

void LeaseLock::acquire(std::chrono::seconds timeout, std::optional<json> lease) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool told = false;
  while (!try_take(lease)) {
    std::string holder =
        lease ? lease->value("spec", json::object()).value("holderIdentity", "") : "";
    if (std::chrono::steady_clock::now() >= deadline) {
      throw Error(display_name(ref_) + ": held by " + holder +
                  ": another apply of this instance is " + "running (waited " +
                  std::to_string(timeout.count()) + "s, see --lock-timeout)");
    }
    if (!told) {
      if (progress_) progress_("waiting for " + display_name(ref_) + ", held by " + holder);
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    lease = cluster_.get(ref_);
  }
  held_ = true;
  renewed_ = std::chrono::steady_clock::now();
}

void LeaseLock::renew() {
  if (!held_ || std::chrono::steady_clock::now() - renewed_ < kDuration / 3) return;
  if (!write_ours(true)) {
    held_ = false;
    throw Error(display_name(ref_) + ": lost to another apply");
  }
  renewed_ = std::chrono::steady_clock::now();
}

void LeaseLock::release() {
  if (!held_) return;
  held_ = false;
  write_ours(false);  // a lease that moved is someone else's now
}

void LeaseLock::remove() {
  if (!held_) return;
  held_ = false;
  cluster_.remove(ref_);
}

}  // namespace fluxop::reconcile
