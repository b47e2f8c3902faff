// A coordination.k8s.io Lease, as both of its users write it: the lock of
// one apply per FluxInstance (reconcile/lease_lock) and leader election among
// the daemon's replicas (daemon/leader, on the operator's own Lease). Its
// spec read and written as a record, the identities of its holders, its
// MicroTimes, and the compare-and-swap write by which a holder takes it.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/kube/cluster.h"

namespace fluxop::kube {

// What a Lease's spec says of its holder.
struct LeaseRecord {
  std::string holder;  // empty: released
  std::chrono::seconds duration{0};
  std::string acquire_time;  // MicroTime
  std::string renew_time;    // MicroTime
  // How many times it changed hands; unset for a Lease that does not count
  // them (the apply lock's).
  std::optional<std::int64_t> transitions;

  friend bool operator==(const LeaseRecord&, const LeaseRecord&) = default;
};

// The record of a Lease object (an empty one when it has no spec).
LeaseRecord lease_record(const nlohmann::json& lease);

// The Lease `ns`/`name`.
ObjectKey lease_key(const std::string& ns, const std::string& name);

// A MicroTime: RFC 3339 in UTC with microseconds ("2026-01-01T18:20:00.123456Z").
std::string micro_time(std::chrono::system_clock::time_point time);
// The time a MicroTime names, to the second; the epoch when it does not
// parse.
std::chrono::system_clock::time_point parse_micro_time(const std::string& text);

// A holder that is this process: "<host>/<pid>", so that a holder that died
// on this host is known at once (holder_died_here).
std::string process_identity();
// Whether `holder` is a process_identity() of this host whose process is gone.
bool holder_died_here(const std::string& holder);
// A holder unique among replicas that may share a host name:
// "<host>_<random hex>", as controller-runtime names them.
std::string replica_identity();

// The compare-and-swap write of a Lease: `record` written to the Lease
// `key`, created when `live` is nullopt, else replaced at live's
// resourceVersion with the rest of live kept. The Lease as written; nullopt
// when another writer was first (it was created, or moved, meanwhile).
std::optional<nlohmann::json> write_lease(Cluster& cluster, const ObjectKey& key,
                                          const std::optional<nlohmann::json>& live,
                                          const LeaseRecord& record);

}  // namespace fluxop::kube
