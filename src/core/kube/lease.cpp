#include "core/kube/lease.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <random>

namespace fluxop::kube {

using nlohmann::json;

namespace {

std::string host_name() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

LeaseRecord lease_record(const json& lease) {
  json spec = lease.is_object() ? lease.value("spec", json::object()) : json::object();
  if (!spec.is_object()) spec = json::object();
  LeaseRecord record;
  record.holder = spec.value("holderIdentity", "");
  record.duration = std::chrono::seconds(spec.value("leaseDurationSeconds", 0));
  record.acquire_time = spec.value("acquireTime", "");
  record.renew_time = spec.value("renewTime", "");
  if (spec.contains("leaseTransitions"))
    record.transitions = spec.value("leaseTransitions", std::int64_t{0});
  return record;
}

ObjectKey lease_key(const std::string& ns, const std::string& name) {
  return {"coordination.k8s.io", "v1", "Lease", ns, name};
}

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

std::chrono::system_clock::time_point parse_micro_time(const std::string& text) {
  std::tm utc{};
  if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &utc)) return {};
  return std::chrono::system_clock::from_time_t(timegm(&utc));
}

std::string process_identity() { return host_name() + "/" + std::to_string(getpid()); }

bool holder_died_here(const std::string& holder) {
  std::string prefix = host_name() + "/";
  if (!holder.starts_with(prefix)) return false;
  std::string rest = holder.substr(prefix.size());
  pid_t pid = static_cast<pid_t>(std::atol(rest.c_str()));
  return pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH;
}

std::string replica_identity() {
  std::random_device random;
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", random(), random());
  return host_name() + "_" + suffix;
}

std::optional<json> write_lease(Cluster& cluster, const ObjectKey& key,
                                const std::optional<json>& live, const LeaseRecord& record) {
  json spec = {{"holderIdentity", record.holder},
               {"leaseDurationSeconds", record.duration.count()},
               {"acquireTime", record.acquire_time},
               {"renewTime", record.renew_time}};
  if (record.transitions) spec["leaseTransitions"] = *record.transitions;
  if (!live) {
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", key.name}, {"namespace", key.ns}}},
                  {"spec", std::move(spec)}};
    return cluster.create(lease);
  }
  json lease = *live;
  lease["spec"] = std::move(spec);
  return cluster.replace(lease);
}

}  // namespace fluxop::kube
