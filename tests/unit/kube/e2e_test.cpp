// End-to-end tests of the Kubernetes client against a real API server, run
// when FLUXOPCTL_E2E_KUBECONFIG names an admin kubeconfig (scripts/cluster
// up prints one; its unprivileged.kubeconfig is beside it):
//
//   eval "$(scripts/cluster up)"
//   FLUXOPCTL_E2E_KUBECONFIG=$KUBECONFIG build/unit_tests -tc='kube e2e*'
//
// Every object is made in a namespace (and a CRD group) of the test's own.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "../temp_dir.h"
#include "core/error.h"
#include "core/kube/client.h"
#include "core/process.h"

using fluxop::kube::ApiError;
using fluxop::kube::KubeClient;
using fluxop::kube::ObjectKey;
using fluxop::kube::WriteOptions;
using nlohmann::json;

namespace {

const char* e2e_kubeconfig() { return std::getenv("FLUXOPCTL_E2E_KUBECONFIG"); }

bool no_cluster() { return !e2e_kubeconfig() || !*e2e_kubeconfig(); }

fluxop::kube::ClusterAccess access_of(const std::string& kubeconfig) {
  return fluxop::kube::load_cluster_access({kubeconfig, ""});
}

std::string suffix() { return std::to_string(getpid()); }

// What kubectl says about an object, for comparison.
json kubectl_get(const std::string& kind, const std::string& ns, const std::string& name) {
  fluxop::ProcessSpec spec;
  spec.argv = {"kubectl", "--kubeconfig", e2e_kubeconfig(), "get", kind, name, "-o", "json"};
  if (!ns.empty()) spec.argv.insert(spec.argv.end(), {"--namespace", ns});
  spec.capture_stderr = false;
  spec.label = "kubectl get";
  std::optional<fluxop::ProcessResult> result = fluxop::run_process(spec);
  REQUIRE(result);
  REQUIRE(result->exit_status == 0);
  return json::parse(result->output);
}

// Waits until `ready` holds for the object (the CRD being Established, ...).
json wait_for(KubeClient& client, const ObjectKey& key,
              const std::function<bool(const json&)>& ready) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    std::optional<json> object = client.get(key);
    if (object && ready(*object)) return *object;
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

bool established(const json& crd) {
  for (const json& condition : crd.value("/status/conditions"_json_pointer, json::array())) {
    if (condition.value("type", "") == "Established" && condition.value("status", "") == "True")
      return true;
  }
  return false;
}

// A namespace of the test's own, deleted at the end.
struct TestNamespace {
  KubeClient& client;
  std::string name;
  TestNamespace(KubeClient& client, std::string name) : client(client), name(std::move(name)) {
    client.create(
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", this->name}}}});
  }
  ~TestNamespace() {
    try {
      client.remove({"", "v1", "Namespace", "", name});
    } catch (const fluxop::Error&) {
    }
  }
};

}  // namespace

TEST_CASE("kube e2e: ConfigMap create, apply, patches, update, get, list, delete" *
          doctest::skip(no_cluster())) {
  KubeClient client(access_of(e2e_kubeconfig()));
  TestNamespace ns(client, "kube-e2e-" + suffix());
  json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "settings"}, {"namespace", ns.name}}},
             {"data", {{"a", "1"}}}};
  ObjectKey key{"", "v1", "ConfigMap", ns.name, "settings"};

  CHECK_FALSE(client.get(key));
  json created = client.create(cm);
  CHECK(created["data"]["a"] == "1");
  try {
    client.create(cm);
    FAIL("created twice");
  } catch (const ApiError& e) {
    CHECK(e.reason() == "AlreadyExists");
    CHECK(std::string(e.what()) == "ConfigMap/" + ns.name + "/settings: already exists");
  }

  // Server-side apply: a dry run changes nothing, a real one does.
  cm["data"] = {{"a", "2"}, {"b", "x"}};
  json dry = client.apply(cm, {.dry_run = true, .field_manager = "fluxopctl-e2e"});
  CHECK(dry["data"]["a"] == "2");
  CHECK(client.get(key).value()["data"]["a"] == "1");
  json applied = client.apply(cm, {.dry_run = false, .field_manager = "fluxopctl-e2e"});
  CHECK(applied["data"] == json({{"a", "2"}, {"b", "x"}}));
  bool managed = false;
  for (const json& entry : applied["metadata"]["managedFields"])
    managed = managed || (entry["manager"] == "fluxopctl-e2e" && entry["operation"] == "Apply");
  CHECK(managed);

  client.merge_patch(key, {{"data", {{"c", "merged"}}}});
  client.json_patch(key, json::array({{{"op", "remove"}, {"path", "/data/b"}}}));
  json live = client.get(key).value();
  CHECK(live["data"] == json({{"a", "2"}, {"c", "merged"}}));

  // The same object as kubectl sees it.
  json theirs = kubectl_get("configmap", ns.name, "settings");
  CHECK(theirs["data"] == live["data"]);
  CHECK(theirs["metadata"]["uid"] == live["metadata"]["uid"]);
  CHECK(theirs["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]);

  // Update at a resourceVersion that has moved on is a conflict.
  json stale = created;
  stale["data"] = {{"stale", "yes"}};
  try {
    client.update(stale);
    FAIL("stale update accepted");
  } catch (const ApiError& e) {
    CHECK(e.reason() == "Conflict");
    CHECK(std::string(e.what()).starts_with("ConfigMap/" + ns.name + "/settings: conflict: "));
  }
  live["data"]["d"] = "updated";
  CHECK(client.update(live)["data"]["d"] == "updated");

  std::vector<json> listed = client.list({"", "v1", "ConfigMap", ns.name, ""});
  bool found = false;
  for (const json& item : listed) found = found || item["metadata"]["name"] == "settings";
  CHECK(found);
  CHECK(listed.front()["kind"] == "ConfigMap");

  CHECK(client.remove(key));
  CHECK_FALSE(client.remove(key));
  CHECK(client.requests_sent() > 10);
}

TEST_CASE("kube e2e: a CRD made known by a discovery refresh, its status subresource" *
          doctest::skip(no_cluster())) {
  KubeClient client(access_of(e2e_kubeconfig()));
  TestNamespace ns(client, "kube-e2e-crd-" + suffix());
  std::string group = "e2e" + suffix() + ".fluxopctl.test";
  // Discovery is loaded before the CRD exists.
  CHECK(client.mapper().mapping("", "v1", "ConfigMap").resource == "configmaps");
  int discovery = client.mapper().discovery_requests();
  CHECK(discovery == 2);  // aggregated: /api and /apis
  CHECK_THROWS_WITH_AS(client.mapper().mapping(group, "v1", "Widget"),
                       ("the API server has no kind \"Widget\" of apiVersion \"" + group +
                        "/v1\" (is its CustomResourceDefinition installed?)")
                           .c_str(),
                       fluxop::Error);
  CHECK(client.mapper().discovery_requests() == discovery + 2);  // asked again once
  CHECK_FALSE(client.mapper().find(group, "v1", "Widget"));      // not again until refresh()
  CHECK(client.mapper().discovery_requests() == discovery + 2);

  json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets." + group}}},
      {"spec",
       {{"group", group},
        {"names", {{"kind", "Widget"}, {"plural", "widgets"}, {"singular", "widget"}}},
        {"scope", "Namespaced"},
        {"versions", json::array({{{"name", "v1"},
                                   {"served", true},
                                   {"storage", true},
                                   {"subresources", {{"status", json::object()}}},
                                   {"schema",
                                    {{"openAPIV3Schema",
                                      {{"type", "object"},
                                       {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  client.apply(crd);
  ObjectKey crd_key{"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "",
                    "widgets." + group};
  wait_for(client, crd_key, established);

  client.mapper().refresh();
  fluxop::kube::ResourceMapping mapping = client.mapper().mapping(group, "v1", "Widget");
  CHECK(mapping.resource == "widgets");
  CHECK(mapping.namespaced);

  json widget = {{"apiVersion", group + "/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "w"}, {"namespace", ns.name}}},
                 {"spec", {{"size", 3}}}};
  client.apply(widget);
  json status = {{"apiVersion", group + "/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "w"}, {"namespace", ns.name}}},
                 {"status", {{"ready", true}}}};
  client.apply_status(status);
  json live = client.get({group, "v1", "Widget", ns.name, "w"}).value();
  CHECK(live["spec"]["size"] == 3);
  CHECK(live["status"]["ready"] == true);
  CHECK(kubectl_get("widgets." + group, ns.name, "w")["status"] == live["status"]);

  live["status"]["ready"] = false;
  CHECK(client.update_status(live)["status"]["ready"] == false);

  CHECK(client.remove(crd_key));
}

TEST_CASE("kube e2e: forbidden for the unprivileged user, a token from an exec plugin" *
          doctest::skip(no_cluster())) {
  std::string admin_kubeconfig = e2e_kubeconfig();
  KubeClient admin(access_of(admin_kubeconfig));
  TestNamespace ns(admin, "kube-e2e-auth-" + suffix());

  std::string unprivileged =
      (std::filesystem::path(admin_kubeconfig).parent_path() / "unprivileged.kubeconfig").string();
  KubeClient nobody(access_of(unprivileged));
  json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "denied"}, {"namespace", ns.name}}}};
  try {
    nobody.apply(cm);
    FAIL("the unprivileged user could apply");
  } catch (const ApiError& e) {
    CHECK(e.status() == 403);
    CHECK(std::string(e.what()) ==
          "ConfigMap/" + ns.name +
              "/denied: forbidden: User \"fluxopctl-e2e-nobody\" cannot patch resource "
              "\"configmaps\" in API group \"\" in the namespace \"" +
              ns.name + "\"");
  }

  // A service account's token, handed out by an exec plugin.
  admin.create({{"apiVersion", "v1"},
                {"kind", "ServiceAccount"},
                {"metadata", {{"name", "robot"}, {"namespace", ns.name}}}});
  fluxop::kube::Response token_response =
      admin.request("POST", "/api/v1/namespaces/" + ns.name + "/serviceaccounts/robot/token", "",
                    R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}})");
  REQUIRE(token_response.status == 201);
  std::string token = json::parse(token_response.body)["status"]["token"];

  fluxop::testing::TempDir dir;
  dir.write("plugin",
            "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
            "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"" +
                token + "\"}}'\n");
  chmod((dir.path() / "plugin").c_str(), 0755);
  fluxop::kube::ClusterAccess access = admin.access();
  access.client_cert_pem.clear();
  access.client_key_pem.clear();
  access.exec = fluxop::kube::ExecPlugin{
      "client.authentication.k8s.io/v1", (dir.path() / "plugin").string(), {}, {}, false, "",
      "test: users[0].user.exec"};
  KubeClient robot(access);
  fluxop::kube::Response review =
      robot.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "",
                    R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  REQUIRE(review.status == 201);
  CHECK(json::parse(review.body)["status"]["userInfo"]["username"] ==
        "system:serviceaccount:" + ns.name + ":robot");
}
