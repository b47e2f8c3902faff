#include "core/ssa/field_ownership.h"

#include <doctest/doctest.h>

#include <functional>

namespace fluxop::ssa {
namespace {

using nlohmann::json;

// What a Flux Deployment is applied as.
json applied() {
  return json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "source-controller", "namespace": "flux-system",
                 "labels": {"app": "source"}},
    "spec": {"selector": {"matchLabels": {"app": "source"}},
             "template": {"spec": {"containers": [
               {"name": "manager", "image": "source:v1",
                "ports": [{"containerPort": 9090, "name": "http"}],
                "env": [{"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
                "resources": {"limits": {"cpu": "1000m"}}}]}}}
  })");
}

// What the server has after applying it, with the managed fields it records.
json live() {
  return json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "source-controller", "namespace": "flux-system", "generation": 3,
      "labels": {"app": "source"},
      "managedFields": [
        {"manager": "flux-operator", "operation": "Apply", "apiVersion": "apps/v1",
         "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}},
           "f:spec": {"f:selector": {}, "f:template": {"f:spec": {"f:containers": {
             "k:{\"name\":\"manager\"}": {".": {}, "f:name": {}, "f:image": {},
               "f:ports": {"k:{\"containerPort\":9090,\"protocol\":\"TCP\"}": {
                 ".": {}, "f:containerPort": {}, "f:name": {}}},
               "f:env": {"k:{\"name\":\"NS\"}": {".": {}, "f:name": {},
                 "f:valueFrom": {"f:fieldRef": {}}}},
               "f:resources": {"f:limits": {"f:cpu": {}}}}}}}}}},
        {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
         "apiVersion": "apps/v1", "fieldsV1": {"f:status": {"f:replicas": {}}}}]},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "source"}},
             "template": {"spec": {"containers": [
               {"name": "manager", "image": "source:v1", "terminationMessagePath": "/dev/termination-log",
                "ports": [{"containerPort": 9090, "name": "http", "protocol": "TCP"}],
                "env": [{"name": "NS", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}],
                "resources": {"limits": {"cpu": "1"}}}]}}},
    "status": {"replicas": 1}
  })");
}

json& container(json& object) { return object["spec"]["template"]["spec"]["containers"][0]; }
json& fields(json& object) { return object["metadata"]["managedFields"][0]["fieldsV1"]; }
json& container_fields(json& object) {
  return fields(
      object)["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"manager\"}"];
}

TEST_CASE("field ownership: what the manager applied, as the server keeps it, is a no-op") {
  // Defaults filled in (a port's protocol, a fieldRef's apiVersion, fields
  // the manager does not set), a quantity in canonical form.
  CHECK(apply_is_noop(applied(), live(), "flux-operator"));
}

TEST_CASE("field ownership: anything the apply would change is not a no-op") {
  struct Case {
    const char* what;
    std::function<void(json& ours, json& live)> edit;
  };
  const Case cases[] = {
      {"another manager", [](json&, json&) {}},
      {"a value", [](json& ours, json&) { container(ours)["image"] = "source:v2"; }},
      {"a quantity",
       [](json& ours, json&) { container(ours)["resources"]["limits"]["cpu"] = "2"; }},
      {"a field added", [](json& ours, json&) { container(ours)["imagePullPolicy"] = "Always"; }},
      {"a field dropped (owned, no longer applied)",
       [](json& ours, json&) { container(ours).erase("resources"); }},
      {"a list item added",
       [](json& ours, json&) {
         container(ours)["env"].push_back({{"name", "X"}, {"value", "1"}});
       }},
      {"a field of an atomic struct dropped",
       [](json& ours, json& live) {
         container(ours)["env"][0]["valueFrom"]["fieldRef"]["fieldPath"] = "metadata.name";
         container(live)["env"][0]["valueFrom"]["fieldRef"]["fieldPath"] = "metadata.name";
         container(live)["env"][0]["valueFrom"]["fieldRef"]["extra"] = "kept by nobody";
       }},
      {"the atomic selector changed",
       [](json& ours, json&) { ours["spec"]["selector"]["matchLabels"]["tier"] = "x"; }},
      {"a null asks for a removal", [](json& ours, json&) { container(ours)["image"] = nullptr; }},
      {"another API version",
       [](json&, json& live) {
         live["metadata"]["managedFields"][0]["apiVersion"] = "apps/v1beta2";
       }},
      {"the manager's fields lost (stripped managedFields)",
       [](json&, json& live) { live["metadata"].erase("managedFields"); }},
      {"a field the manager owns that the live object lost",
       [](json&, json& live) { container(live).erase("image"); }},
      {"an owned field the manager no longer owns",
       [](json&, json& live) { container_fields(live).erase("f:image"); }},
      {"list items in another order",
       [](json& ours, json& live) {
         json second = {{"name", "B"}, {"value", "b"}};
         container(ours)["env"].push_back(second);
         container(live)["env"].insert(container(live)["env"].begin(), second);
         container_fields(live)["f:env"]["k:{\"name\":\"B\"}"] = {
             {".", json::object()}, {"f:name", json::object()}, {"f:value", json::object()}};
       }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    json ours = applied();
    json theirs = live();
    c.edit(ours, theirs);
    std::string manager = std::string(c.what) == "another manager" ? "kubectl" : "flux-operator";
    CHECK_FALSE(apply_is_noop(ours, theirs, manager));
  }
}

// The operator's first apply of a Deployment owns `strategy: {}`, which the
// server defaults; applying without it changes no value.
TEST_CASE("field ownership: an owned empty map the server filled in is a no-op") {
  json theirs = live();
  fields(theirs)["f:spec"]["f:strategy"] = json::object();
  theirs["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  CHECK(apply_is_noop(applied(), theirs, "flux-operator"));
  // An owned scalar is not: the apply would remove its value.
  json scalar = live();
  fields(scalar)["f:spec"]["f:replicas"] = json::object();
  CHECK_FALSE(apply_is_noop(applied(), scalar, "flux-operator"));
  // Nor a map with owned children.
  json children = live();
  fields(children)["f:spec"]["f:strategy"] = {{"f:type", json::object()}};
  children["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  CHECK_FALSE(apply_is_noop(applied(), children, "flux-operator"));
}

TEST_CASE("field ownership: a list item added in the same order is a no-op once owned") {
  json ours = applied();
  json theirs = live();
  json second = {{"name", "B"}, {"value", "b"}};
  container(ours)["env"].push_back(second);
  container(theirs)["env"].push_back(second);
  container_fields(theirs)["f:env"]["k:{\"name\":\"B\"}"] = {
      {".", json::object()}, {"f:name", json::object()}, {"f:value", json::object()}};
  CHECK(apply_is_noop(ours, theirs, "flux-operator"));
}

TEST_CASE("field ownership: the owned part of a live object is what its managers set") {
  json theirs = live();
  json owned = owned_part(theirs, fields(theirs));
  json expected = json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "source-controller", "namespace": "flux-system", "labels": {"app": "source"}},
    "spec": {"selector": {"matchLabels": {"app": "source"}},
             "template": {"spec": {"containers": [
               {"name": "manager", "image": "source:v1",
                "ports": [{"containerPort": 9090, "name": "http"}],
                "env": [{"name": "NS", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}],
                "resources": {"limits": {"cpu": "1"}}}]}}}
  })");
  CHECK(owned == expected);

  // Two managers' fields: the union.
  json more = json::parse(R"({"f:spec": {"f:replicas": {}}})");
  json both = fields(theirs);
  merge_fields(both, more);
  CHECK(owned_part(theirs, both)["spec"]["replicas"] == 1);
  CHECK(owned_part(theirs, both)["spec"]["selector"] == expected["spec"]["selector"]);
}

TEST_CASE("field ownership: live values the server only normalised, in the applied form") {
  json theirs = live();
  json owned = owned_part(theirs, fields(theirs));
  // The fieldRef's defaulted apiVersion and the canonical "1" are ours.
  CHECK(in_applied_form(owned, applied()) == applied());
  // What differs in meaning stays as it is live.
  container(owned)["resources"]["limits"]["cpu"] = "2";
  container(owned)["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] = "v2";
  json kept = in_applied_form(owned, applied());
  CHECK(container(kept)["resources"]["limits"]["cpu"] == "2");
  CHECK(container(kept)["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v2");
  CHECK(container(kept)["image"] == "source:v1");
}

}  // namespace
}  // namespace fluxop::ssa
