// StatusAccess: --status-auth kubernetes's decisions, from the API server's
// reviews (a fake cluster answers them).
#include "core/daemon/status_access.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../kube/fake_cluster.h"
#include "core/error.h"

using fluxop::daemon::Access;
using fluxop::daemon::StatusAccess;
using fluxop::testing::FakeCluster;
using nlohmann::json;

namespace {

// A cluster that knows the token "reader-token" (user "reader", allowed)
// and "stranger-token" (user "stranger", not), recording each review.
struct ReviewingCluster {
  FakeCluster cluster;
  std::vector<json> reviews;

  ReviewingCluster() {
    cluster.answer_review = [this](const json& review) {
      reviews.push_back(review);
      if (review["kind"] == "TokenReview") {
        std::string token = review["spec"]["token"];
        if (token != "reader-token" && token != "stranger-token")
          return json{{"status", {{"authenticated", false}}}};
        return json{{"status",
                     {{"authenticated", true},
                      {"user",
                       {{"username", token == "reader-token" ? "reader" : "stranger"},
                        {"uid", "u-1"},
                        {"groups", {"system:authenticated"}}}}}}};
      }
      return json{{"status", {{"allowed", review["spec"]["user"] == "reader"}}}};
    };
  }
};

}  // namespace

TEST_CASE("status access: no bearer token is unauthenticated, and asks nothing") {
  ReviewingCluster api;
  StatusAccess access(api.cluster, "flux-system");
  for (const char* header : {"", "Basic cmVhZGVyOng=", "Bearer", "Bearer ", "Bearertoken"}) {
    CAPTURE(header);
    CHECK(access.decide(header) == Access::unauthenticated);
  }
  CHECK(api.reviews.empty());
}

TEST_CASE("status access: the token reviewed, then the user's right to get the instance") {
  ReviewingCluster api;
  StatusAccess access(api.cluster, "flux-system");
  CHECK(access.decide("Bearer forged") == Access::unauthenticated);
  REQUIRE(api.reviews.size() == 1);  // no access review for a token not accepted
  CHECK(api.reviews[0]["apiVersion"] == "authentication.k8s.io/v1");

  CHECK(access.decide("Bearer stranger-token") == Access::forbidden);
  // The scheme in any case, as RFC 9110 has it.
  CHECK(access.decide("bearer reader-token") == Access::allowed);
  REQUIRE(api.reviews.size() == 5);
  const json& asked = api.reviews[4];
  CHECK(asked["apiVersion"] == "authorization.k8s.io/v1");
  CHECK(asked["kind"] == "SubjectAccessReview");
  CHECK(asked["spec"]["user"] == "reader");
  CHECK(asked["spec"]["uid"] == "u-1");
  CHECK(asked["spec"]["groups"] == json{"system:authenticated"});
  CHECK(asked["spec"]["resourceAttributes"] == json{{"namespace", "flux-system"},
                                                    {"verb", "get"},
                                                    {"group", "fluxcd.controlplane.io"},
                                                    {"resource", "fluxinstances"}});
}

TEST_CASE("status access: a decision is kept for a minute, then asked again") {
  ReviewingCluster api;
  StatusAccess::Clock::time_point now{};
  StatusAccess access(api.cluster, "flux-system", [&] { return now; });
  CHECK(access.decide("Bearer reader-token") == Access::allowed);
  CHECK(access.decide("Bearer stranger-token") == Access::forbidden);
  now += std::chrono::seconds(59);
  CHECK(access.decide("Bearer reader-token") == Access::allowed);
  CHECK(access.decide("Bearer stranger-token") == Access::forbidden);
  CHECK(api.reviews.size() == 4);
  now += std::chrono::seconds(1);
  CHECK(access.decide("Bearer reader-token") == Access::allowed);
  CHECK(api.reviews.size() == 6);
}

TEST_CASE("status access: an API server that cannot be asked is an error, never a decision") {
  ReviewingCluster api;
  bool down = true;
  auto answer = api.cluster.answer_review;
  api.cluster.answer_review = [&](const json& review) {
    if (down) throw fluxop::Error("connection refused");
    return answer(review);
  };
  StatusAccess access(api.cluster, "flux-system");
  CHECK_THROWS_WITH_AS(access.decide("Bearer reader-token"), "connection refused", fluxop::Error);
  down = false;  // nothing was cached
  CHECK(access.decide("Bearer reader-token") == Access::allowed);
  api.cluster.answer_review = [](const json&) { return json{{"kind", "TokenReview"}}; };
  CHECK_THROWS_WITH_AS(access.decide("Bearer stranger-token"),
                       "the API server answered a TokenReview with no status", fluxop::Error);
}
