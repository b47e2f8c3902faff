#include "core/reconcile/status.h"

#include <doctest/doctest.h>

namespace fluxop::reconcile {
namespace {

using nlohmann::json;

TEST_CASE("status: conditions keep their transition time while their status holds") {
  json status = json::object();
  set_condition(status, {"Ready", "Unknown", Reason::progressing, "in progress"}, 1, "t1");
  set_condition(status, {"Ready", "Unknown", Reason::progressing, "still"}, 1, "t2");
  REQUIRE(status["conditions"].size() == 1);
  CHECK(status["conditions"][0]["lastTransitionTime"] == "t1");
  CHECK(status["conditions"][0]["message"] == "still");
  set_condition(status, {"Ready", "True", Reason::reconciliation_succeeded, "done"}, 2, "t3");
  CHECK(status["conditions"][0]["lastTransitionTime"] == "t3");
  CHECK(status["conditions"][0]["observedGeneration"] == 2);
  set_condition(status, {"Reconciling", "True", Reason::progressing, "x"}, 2, "t3");
  CHECK(status["conditions"].size() == 2);
  remove_condition(status, "Reconciling");
  CHECK(status["conditions"].size() == 1);
  remove_condition(status, "Stalled");
  CHECK(status["conditions"].size() == 1);
}

TEST_CASE("status: history deduplicates by digest and reason, newest first, five at most") {
  json status = json::object();
  auto attempt = [](std::string digest, Reason reason, std::string when) {
    return Attempt{std::move(digest), reason, "v2.9.4", std::move(when),
                   std::chrono::milliseconds(2500)};
  };
  record_history(status, attempt("sha256:a", Reason::reconciliation_succeeded, "t1"));
  record_history(status, attempt("sha256:a", Reason::reconciliation_succeeded, "t2"));
  REQUIRE(status["history"].size() == 1);
  CHECK(status["history"][0]["totalReconciliations"] == 2);
  CHECK(status["history"][0]["firstReconciled"] == "t1");
  CHECK(status["history"][0]["lastReconciled"] == "t2");
  CHECK(status["history"][0]["lastReconciledDuration"] == "2.5s");
  CHECK(status["history"][0]["metadata"]["flux"] == "v2.9.4");
  record_history(status, attempt("sha256:a", reason(Failure::health_check), "t3"));
  CHECK(status["history"].size() == 2);
  CHECK(status["history"][0]["lastReconciledStatus"] == "HealthCheckFailed");
  for (int i = 0; i < 6; ++i)
    record_history(status,
                   attempt("sha256:" + std::to_string(i), Reason::reconciliation_succeeded, "t"));
  CHECK(status["history"].size() == 5);
  CHECK(status["history"][0]["digest"] == "sha256:5");
}

json deployment(const std::string& name, const json& containers) {
  return {{"kind", "Deployment"},
          {"metadata", {{"name", name}}},
          {"spec", {{"template", {{"spec", {{"containers", containers}}}}}}}};
}

TEST_CASE("status: components are the manager images of the components' Deployments") {
  std::vector<json> objects = {
      {{"kind", "Service"}, {"metadata", {{"name", "source-controller"}}}},
      deployment("helm-controller",
                 {{{"name", "manager"}, {"image", "registry:5000/fluxcd/helm-controller:v1.4.0"}}}),
      deployment("source-controller-shard1",
                 {{{"name", "manager"}, {"image", "ghcr.io/fluxcd/source-controller:v0"}}}),
      deployment(
          "source-controller",
          {{{"name", "init"}, {"image", "busybox"}},
           {{"name", "manager"}, {"image", "ghcr.io/fluxcd/source-controller:v1.7.4@sha256:abc"}}}),
      deployment("kustomize-controller",
                 {{{"name", "manager"}, {"image", "fluxcd/kustomize-controller@sha256:def"}}}),
      deployment("notification-controller", {{{"name", "manager"}, {"image", "nc"}}}),
  };
  json components =
      components_status(objects, {"source-controller", "kustomize-controller", "helm-controller",
                                  "notification-controller", "image-reflector-controller"});
  REQUIRE(components.size() == 4);
  // In the instance's order; a shard's copy and other containers are not it.
  CHECK(components[0] == json{{"name", "source-controller"},
                              {"repository", "ghcr.io/fluxcd/source-controller"},
                              {"tag", "v1.7.4"},
                              {"digest", "sha256:abc"}});
  // Docker Hub's registry is named; an image without a tag is "latest".
  CHECK(components[1] == json{{"name", "kustomize-controller"},
                              {"repository", "index.docker.io/fluxcd/kustomize-controller"},
                              {"tag", "latest"},
                              {"digest", "sha256:def"}});
  CHECK(components[2] == json{{"name", "helm-controller"},
                              {"repository", "registry:5000/fluxcd/helm-controller"},
                              {"tag", "v1.4.0"}});
  CHECK(components[3]["repository"] == "index.docker.io/library/nc");
}

}  // namespace
}  // namespace fluxop::reconcile
