// Who may read the status pages under `--status-auth kubernetes`, decided as
// Kubernetes' secure metrics endpoints decide: the request's bearer token
// reviewed by the API server (a TokenReview), then the user it names asked
// about (a SubjectAccessReview): allowed to `get` fluxinstances in the
// instance's namespace. The token is never kept: decisions are cached by its
// SHA-256 for kAccessDecisionTtl, so that a page's reloads cost the API
// server nothing, and a token revoked reads that much longer.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/kube/cluster.h"

namespace fluxop::daemon {

inline constexpr std::chrono::seconds kAccessDecisionTtl{60};

enum class Access {
  allowed,
  unauthenticated,  // no bearer token, or one the API server does not accept: 401
  forbidden,        // a user not allowed to get fluxinstances there: 403
};

class StatusAccess {
 public:
  using Clock = std::chrono::steady_clock;
  // `cluster` asks the reviews; only the page server's thread calls
  // decide(), so nothing here is locked. `ns`
  // is the instance's namespace. `now` is the clock (a test's own).
  StatusAccess(kube::Cluster& cluster, std::string ns,
               std::function<Clock::time_point()> now = Clock::now);

  // The decision for a request's Authorization header (`Bearer TOKEN`).
  // Throws fluxop::Error when the API server could not be asked (not cached).
  Access decide(std::string_view authorization);

 private:
  struct Decision {
    Access access;
    Clock::time_point expires;
  };
  Access review(const std::string& token);

  kube::Cluster& cluster_;
  std::string ns_;
  std::function<Clock::time_point()> now_;
  std::map<std::string, Decision> decisions_;  // by the token's SHA-256
};

}  // namespace fluxop::daemon
