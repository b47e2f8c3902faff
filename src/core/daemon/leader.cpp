#include "core/daemon/leader.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <random>

#include "core/error.h"

namespace fluxop::daemon {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A Lease's times are MicroTime: RFC 3339 with microseconds, in UTC.
std::string micro_time_now() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()) %
                std::chrono::seconds(1);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[80];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long>(micros.count()));
  return text;
}

std::string default_identity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::random_device random;
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", random(), random());
  return std::string(host) + "_" + suffix;
}

}  // namespace

LeaderElection::LeaderElection(kube::ClusterAccess access, LeaderOptions options,
                               std::function<void()> on_change,
                               std::function<void(const std::string&)> on_error)
    : access_(std::move(access)),
      options_(std::move(options)),
      on_change_(std::move(on_change)),
      on_error_(std::move(on_error)) {
  if (options_.identity.empty()) options_.identity = default_identity();
  path_ = "/apis/coordination.k8s.io/v1/namespaces/" + options_.ns + "/leases";
  thread_ = std::thread([this] { run(); });
}

LeaderElection::~LeaderElection() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_.notify_all();
  thread_.join();
}

bool LeaderElection::pause(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  return !stopped_.wait_for(lock, delay, [this] { return stopping_.load(); });
}

json LeaderElection::lease_spec(const json& current, bool ours) const {
  std::string now = micro_time_now();
  json spec = {
      {"holderIdentity", ours ? options_.identity : ""},
      {"leaseDurationSeconds",
       ours ? std::chrono::ceil<std::chrono::seconds>(options_.lease_duration).count() : 1},
      {"renewTime", now}};
  bool held_before = current.value("holderIdentity", "") == options_.identity;
  spec["acquireTime"] = held_before || !ours ? current.value("acquireTime", now) : now;
  int transitions = current.value("leaseTransitions", 0);
  spec["leaseTransitions"] = held_before || !ours ? transitions : transitions + 1;
  return spec;
}

bool LeaderElection::try_acquire_or_renew(kube::KubeClient& client) {
  std::string name_path = path_ + "/" + options_.name;
  kube::Response got = client.request("GET", name_path);
  if (got.status == 404) {
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", options_.name}, {"namespace", options_.ns}}},
                  {"spec", lease_spec(json::object(), true)}};
    lease["spec"]["leaseTransitions"] = 0;
    kube::Response created = client.request("POST", path_, "", lease.dump());
    if (created.status == 409) return false;  // another replica was first
    if (!created.ok())
      throw kube::api_error("Lease/" + options_.ns + "/" + options_.name, created.status,
                            created.body);
    observed_ = lease["spec"];
    observed_at_ = Clock::now();
    return true;
  }
  if (!got.ok())
    throw kube::api_error("Lease/" + options_.ns + "/" + options_.name, got.status, got.body);
  json lease = json::parse(got.body, nullptr, false);
  if (!lease.is_object()) throw Error("Lease/" + options_.ns + "/" + options_.name + ": not JSON");
  json spec = lease.value("spec", json::object());
  if (spec != observed_) {
    observed_ = spec;
    observed_at_ = Clock::now();
  }
  std::string holder = spec.value("holderIdentity", "");
  std::chrono::milliseconds duration(
      1000 * static_cast<std::int64_t>(spec.value("leaseDurationSeconds", 0)));
  if (!holder.empty() && holder != options_.identity && Clock::now() < observed_at_ + duration)
    return false;
  lease["spec"] = lease_spec(spec, true);
  kube::Response replaced = client.request("PUT", name_path, "", lease.dump());
  if (replaced.status == 409) return false;  // changed meanwhile
  if (!replaced.ok())
    throw kube::api_error("Lease/" + options_.ns + "/" + options_.name, replaced.status,
                          replaced.body);
  observed_ = lease["spec"];
  observed_at_ = Clock::now();
  return true;
}

void LeaderElection::release(kube::KubeClient& client) {
  try {
    std::string name_path = path_ + "/" + options_.name;
    kube::Response got = client.request("GET", name_path);
    json lease = json::parse(got.body, nullptr, false);
    if (!got.ok() || !lease.is_object()) return;
    json spec = lease.value("spec", json::object());
    if (spec.value("holderIdentity", "") != options_.identity) return;
    lease["spec"] = lease_spec(spec, false);
    client.request("PUT", name_path, "", lease.dump());
  } catch (const Error& e) {
    on_error_(std::string("releasing the leader election Lease: ") + e.what());
  }
}

void LeaderElection::run() {
  kube::ClientOptions client_options;
  client_options.attempts = 1;  // the loop below retries
  client_options.request_timeout = options_.retry_period * 2;
  kube::KubeClient client(access_, client_options);
  auto renewed = Clock::now();
  while (!stopping_) {
    bool held = false;
    try {
      held = try_acquire_or_renew(client);
    } catch (const Error& e) {
      on_error_(e.what());
    }
    if (held) {
      renewed = Clock::now();
      if (!leading_.exchange(true)) on_change_();
    } else if (leading_ && Clock::now() - renewed >= options_.renew_deadline) {
      // Another replica may lead by now: this one must not act any more.
      leading_ = false;
      lost_ = true;
      on_change_();
      return;
    }
    if (!pause(options_.retry_period)) break;
  }
  if (leading_) release(client);
}

}  // namespace fluxop::daemon
