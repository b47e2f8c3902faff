#include "core/reconcile/events.h"

#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../kube/fake_cluster.h"

using fluxop::Reason;
using fluxop::reconcile::EventRecorder;
using fluxop::reconcile::InstanceEvent;
using fluxop::reconcile::InvolvedObject;
using fluxop::testing::FakeCluster;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// 2026-11-23T17:35:31.123456789Z
const std::chrono::system_clock::time_point t0 =
    std::chrono::system_clock::time_point{} + 1795455331s + 123456789ns;

const InvolvedObject flux{
    .name = "flux", .ns = "flux-system", .uid = "0b9d-42", .resource_version = "1001"};

const InstanceEvent succeeded{.reason = Reason::reconciliation_succeeded,
                              .message = "Reconciliation finished in 2s",
                              .revision = "v2.7.0@sha256:abc"};

// An events test: a fake cluster, a clock the test moves, the errors
// reported.
struct Recording {
  FakeCluster cluster;
  std::chrono::system_clock::time_point now = t0;
  std::vector<std::string> errors;
  EventRecorder recorder{cluster, [this](const std::string& error) { errors.push_back(error); },
                         [this] { return now; }};

  // The Events held, by name.
  std::vector<json> events() const {
    std::vector<json> found;
    for (const auto& [key, object] : cluster.objects) {
      if (key.starts_with("Event/")) found.push_back(object);
    }
    return found;
  }
  const json& event(const std::string& name) const {
    return cluster.objects.at("Event/flux-system/" + name);
  }
};

// The object without what the fake server adds.
json as_written(json object) {
  object["metadata"].erase("managedFields");
  object["metadata"].erase("resourceVersion");
  return object;
}

InstanceEvent failed(const std::string& message) {
  return {.reason = Reason::health_check_failed, .message = message, .revision = ""};
}

}  // namespace

TEST_CASE("events: an Event as the operator's recorder writes it") {
  Recording recording;
  recording.recorder.record(flux, succeeded);
  CHECK(recording.cluster.logged("CREATE") ==
        std::vector<std::string>{"Event/flux-system/flux.18eabd1c65b1eb15"});
  CHECK(as_written(recording.event("flux.18eabd1c65b1eb15")) == json::parse(R"({
          "apiVersion": "v1",
          "kind": "Event",
          "metadata": {
            "name": "flux.18eabd1c65b1eb15",
            "namespace": "flux-system",
            "annotations": {"fluxcd.controlplane.io/revision": "v2.7.0@sha256:abc"}
          },
          "involvedObject": {
            "apiVersion": "fluxcd.controlplane.io/v1",
            "kind": "FluxInstance",
            "name": "flux",
            "namespace": "flux-system",
            "uid": "0b9d-42",
            "resourceVersion": "1001"
          },
          "reason": "ReconciliationSucceeded",
          "message": "Reconciliation finished in 2s",
          "type": "Normal",
          "source": {"component": "flux-operator"},
          "reportingComponent": "flux-operator",
          "firstTimestamp": "2026-11-23T17:35:31Z",
          "lastTimestamp": "2026-11-23T17:35:31Z",
          "count": 1
        })"));
  CHECK(recording.errors.empty());
}

TEST_CASE("events: no annotations without a revision, empty fields omitted") {
  Recording recording;
  recording.recorder.record({.name = "flux", .ns = "", .uid = "", .resource_version = ""},
                            failed("timeout waiting for: [Deployment/flux-system/helm]"));
  CHECK(recording.cluster.logged("CREATE") ==
        std::vector<std::string>{"Event/default/flux.18eabd1c65b1eb15"});
  json event = recording.cluster.objects.at("Event/default/flux.18eabd1c65b1eb15");
  CHECK_FALSE(event["metadata"].contains("annotations"));
  CHECK(event["type"] == "Warning");
  CHECK(event["involvedObject"] == json::parse(R"({"apiVersion": "fluxcd.controlplane.io/v1",
      "kind": "FluxInstance", "name": "flux", "namespace": "default"})"));
}

TEST_CASE("events: the same event again is counted on the Event first written") {
  Recording recording;
  recording.recorder.record(flux, succeeded);
  // The instance's resourceVersion and the revision are not what makes
  // events the same: the Event keeps its first ones.
  InvolvedObject later = flux;
  later.resource_version = "1002";
  InstanceEvent again = succeeded;
  again.revision = "v2.7.1@sha256:def";
  recording.now = t0 + 1min;
  recording.recorder.record(later, again);
  // As client-go, with no time limit: as long as the Event is there.
  recording.now = t0 + 2h;
  recording.recorder.record(later, again);

  CHECK(recording.cluster.logged("CREATE").size() == 1);
  CHECK(recording.cluster.logged("PATCH") ==
        std::vector<std::string>{"Event/flux-system/flux.18eabd1c65b1eb15",
                                 "Event/flux-system/flux.18eabd1c65b1eb15"});
  REQUIRE(recording.events().size() == 1);
  json event = recording.event("flux.18eabd1c65b1eb15");
  CHECK(event["count"] == 3);
  CHECK(event["firstTimestamp"] == "2026-11-23T17:35:31Z");
  CHECK(event["lastTimestamp"] == "2026-11-23T19:35:31Z");
  CHECK(event["involvedObject"]["resourceVersion"] == "1001");
  CHECK(event["metadata"]["annotations"]["fluxcd.controlplane.io/revision"] == "v2.7.0@sha256:abc");
  CHECK(recording.errors.empty());
}

TEST_CASE(
    "events: another message, reason (of the same type or another) or object is another Event") {
  Recording recording;
  recording.recorder.record(flux, succeeded);
  recording.now += 1s;
  recording.recorder.record(flux, {succeeded.reason, "Reconciliation finished in 3s", ""});
  recording.now += 1s;
  recording.recorder.record(flux, {Reason::health_check_failed, succeeded.message, ""});
  recording.now += 1s;
  recording.recorder.record(flux, {Reason::progressing, succeeded.message, ""});
  recording.now += 1s;
  InvolvedObject recreated = flux;
  recreated.uid = "77aa-01";
  recording.recorder.record(recreated, succeeded);
  CHECK(recording.cluster.logged("CREATE").size() == 5);
  CHECK(recording.cluster.logged("PATCH").empty());
  CHECK(recording.events().size() == 5);
}

TEST_CASE("events: an Event gone is written anew under its name, still counting") {
  Recording recording;
  recording.recorder.record(flux, succeeded);
  recording.cluster.objects.erase("Event/flux-system/flux.18eabd1c65b1eb15");
  recording.now = t0 + 2h;
  recording.recorder.record(flux, succeeded);
  CHECK(recording.cluster.logged("PATCH").size() == 1);
  CHECK(recording.cluster.logged("CREATE").size() == 2);
  json event = recording.event("flux.18eabd1c65b1eb15");
  CHECK(event["count"] == 2);
  CHECK(event["firstTimestamp"] == "2026-11-23T17:35:31Z");
  CHECK(event["lastTimestamp"] == "2026-11-23T19:35:31Z");
  CHECK(recording.errors.empty());
}

TEST_CASE("events: ten similar events within ten minutes are combined") {
  Recording recording;
  for (int i = 1; i <= 9; ++i) {
    recording.recorder.record(flux, failed("attempt " + std::to_string(i)));
    recording.now += 5min;  // each within the window of the one before
  }
  CHECK(recording.events().size() == 9);

  recording.recorder.record(flux, failed("attempt 10"));
  auto created = recording.cluster.logged("CREATE");
  REQUIRE(created.size() == 10);
  json combined = recording.cluster.objects.at(created.back());
  CHECK(combined["message"] == "(combined from similar events): attempt 10");
  CHECK(combined["count"] == 1);
  CHECK(combined["type"] == "Warning");
  CHECK(combined["reason"] == "HealthCheckFailed");
  CHECK_FALSE(combined.contains("reportingComponent"));
  CHECK(combined["source"]["component"] == "flux-operator");

  // The next new message is counted on the combined Event.
  recording.now += 1min;
  recording.recorder.record(flux, failed("attempt 11"));
  CHECK(recording.cluster.logged("CREATE").size() == 10);
  combined = recording.cluster.objects.at(created.back());
  CHECK(combined["count"] == 2);
  CHECK(combined["message"] == "(combined from similar events): attempt 11");

  // After ten minutes without one, they are told apart again.
  recording.now += 11min;
  recording.recorder.record(flux, failed("attempt 12"));
  CHECK(recording.cluster.objects.at(recording.cluster.logged("CREATE").back())["message"] ==
        "attempt 12");
  CHECK(recording.errors.empty());
}

TEST_CASE("events: combined events keep no revision annotation") {
  Recording recording;
  for (int i = 1; i <= 10; ++i) {
    recording.recorder.record(
        flux, {Reason::reconciliation_succeeded,
               "Reconciliation finished in " + std::to_string(i) + "s", "v2.7.0@sha256:abc"});
    recording.now += 1s;
  }
  json combined = recording.cluster.objects.at(recording.cluster.logged("CREATE").back());
  CHECK(combined["message"] == "(combined from similar events): Reconciliation finished in 10s");
  CHECK_FALSE(combined["metadata"].contains("annotations"));
}

namespace {

// A cluster that refuses to patch Events and, when told, to create them.
struct RefusingCluster : FakeCluster {
  bool refuse_create = true;
  std::optional<json> create(const json& object) override {
    if (refuse_create) throw fluxop::kube::ApiError("events is forbidden", 403, "Forbidden");
    return FakeCluster::create(object);
  }
  json json_patch(const fluxop::kube::ObjectKey&, const json&) override {
    throw std::runtime_error("connection refused");
  }
};

}  // namespace

TEST_CASE("events: failures to write are reported, never thrown") {
  RefusingCluster cluster;
  std::vector<std::string> errors;
  EventRecorder recorder(
      cluster, [&](const std::string& error) { errors.push_back(error); }, [] { return t0; });
  CHECK_NOTHROW(recorder.record(flux, succeeded));
  CHECK(errors == std::vector<std::string>{"event ReconciliationSucceeded: events is forbidden"});

  EventRecorder silent(cluster, {}, [] { return t0; });
  CHECK_NOTHROW(silent.record(flux, succeeded));
}

TEST_CASE("events: a failed patch of an Event there is reported, not written anew") {
  RefusingCluster cluster;
  cluster.refuse_create = false;
  std::vector<std::string> errors;
  EventRecorder recorder(
      cluster, [&](const std::string& error) { errors.push_back(error); }, [] { return t0; });
  recorder.record(flux, succeeded);
  recorder.record(flux, succeeded);
  CHECK(errors == std::vector<std::string>{"event ReconciliationSucceeded: connection refused"});
  CHECK(cluster.logged("CREATE").size() == 1);
}

TEST_CASE("events: an Event name taken is reported") {
  Recording recording;
  recording.recorder.record(flux, succeeded);
  // Another event in the same nanosecond would have the same name.
  recording.recorder.record(flux, {Reason::progressing, "Installing revision v2.7.0", ""});
  CHECK(recording.errors ==
        std::vector<std::string>{"event Progressing: flux.18eabd1c65b1eb15 already exists"});
}

TEST_CASE("events: on an instance by name, its uid is read from the cluster when not known") {
  Recording recording;
  recording.cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
  recording.cluster.put(
      {{"apiVersion", "fluxcd.controlplane.io/v1"},
       {"kind", "FluxInstance"},
       {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}, {"uid", "7f-1"}}}});
  fluxop::kube::ObjectKey ref{"fluxcd.controlplane.io", "v1", "FluxInstance", "flux-system",
                              "flux"};
  recording.recorder.record(ref, "", succeeded);
  std::vector<json> events = recording.events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["involvedObject"]["uid"] == "7f-1");
  // A uid given is taken as is, without a read.
  recording.now += 1s;
  recording.recorder.record(ref, "given", failed("unhealthy"));
  events = recording.events();
  REQUIRE(events.size() == 2);
  CHECK(events[1]["involvedObject"]["uid"] == "given");
  CHECK(recording.errors.empty());
}
