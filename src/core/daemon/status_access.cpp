#include "core/daemon/status_access.h"

#include <algorithm>
#include <optional>

#include "core/ascii.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/kube/meta.h"
#include "core/reconcile/instance_object.h"

namespace fluxop::daemon {

namespace {

using nlohmann::json;

// Decisions kept at once: a client sending a new token with each request
// (a scan) makes the oldest go, never the memory grow.
constexpr std::size_t kMaxDecisions = 1024;

// The token of "Bearer TOKEN" (the scheme in any case); nullopt for
// another scheme or none.
std::optional<std::string> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      lowercase(authorization.substr(0, kScheme.size())) != kScheme)
    return std::nullopt;
  std::string_view token = authorization.substr(kScheme.size());
  token.remove_prefix(std::min(token.size(), token.find_first_not_of(' ')));
  if (token.empty()) return std::nullopt;
  return std::string(token);
}

// The status of the API server's answer to a review.
json review_status(const std::optional<json>& answer, std::string_view kind) {
  const json* status = answer ? kube::at(*answer, "/status") : nullptr;
  if (!status || !status->is_object())
    throw Error("the API server answered a " + std::string(kind) + " with no status");
  return *status;
}

}  // namespace

StatusAccess::StatusAccess(kube::Cluster& cluster, std::string ns,
                           std::function<Clock::time_point()> now)
    : cluster_(cluster), ns_(std::move(ns)), now_(std::move(now)) {}

Access StatusAccess::decide(std::string_view authorization) {
  std::optional<std::string> token = bearer_token(authorization);
  if (!token) return Access::unauthenticated;
  std::string key = sha256_digest(*token);
  Clock::time_point now = now_();
  if (auto known = decisions_.find(key); known != decisions_.end() && now < known->second.expires)
    return known->second.access;
  Access access = review(*token);
  if (decisions_.size() >= kMaxDecisions) {
    std::erase_if(decisions_, [&](const auto& entry) { return entry.second.expires <= now; });
    if (decisions_.size() >= kMaxDecisions) decisions_.clear();
  }
  decisions_[key] = {access, now + kAccessDecisionTtl};
  return access;
}

Access StatusAccess::review(const std::string& token) {
  json authenticated = review_status(cluster_.create({{"apiVersion", "authentication.k8s.io/v1"},
                                                      {"kind", "TokenReview"},
                                                      {"spec", {{"token", token}}}}),
                                     "TokenReview");
  if (!kube::true_at(authenticated, "/authenticated")) return Access::unauthenticated;
  const json* user = kube::at(authenticated, "/user");
  if (!user || !user->is_object()) return Access::unauthenticated;
  json spec = {{"user", kube::string_member(*user, "username")},
               {"resourceAttributes",
                {{"namespace", ns_},
                 {"verb", "get"},
                 {"group", reconcile::instance_ref("", "").group},
                 {"resource", "fluxinstances"}}}};
  for (const char* field : {"uid", "groups", "extra"}) {
    if (user->contains(field)) spec[field] = (*user)[field];
  }
  json authorized = review_status(cluster_.create({{"apiVersion", "authorization.k8s.io/v1"},
                                                   {"kind", "SubjectAccessReview"},
                                                   {"spec", std::move(spec)}}),
                                  "SubjectAccessReview");
  return kube::true_at(authorized, "/allowed") ? Access::allowed : Access::forbidden;
}

}  // namespace fluxop::daemon
