#include "core/render/apply_order.h"

#include <doctest/doctest.h>

#include "core/digest.h"
#include "core/yaml/parse.h"

namespace fluxop::render {
namespace {

std::vector<yaml::Node> objects(std::string_view text) {
  return yaml::parse_documents(text, "test.yaml");
}

std::vector<std::string> ids(const std::vector<yaml::Node>& list) {
  std::vector<std::string> out;
  for (const yaml::Node& o : list) {
    out.push_back(o.string_at({"kind"}) + "/" + o.string_at({"metadata", "namespace"}) + "/" +
                  o.string_at({"metadata", "name"}));
  }
  return out;
}

TEST_CASE("apply order: listed kinds first, others by group and kind, webhooks last") {
  auto list = objects(R"(kind: ValidatingWebhookConfiguration
apiVersion: admissionregistration.k8s.io/v1
metadata: {name: v}
---
kind: Kustomization
apiVersion: kustomize.toolkit.fluxcd.io/v1
metadata: {name: k, namespace: a}
---
kind: GitRepository
apiVersion: source.toolkit.fluxcd.io/v1
metadata: {name: g, namespace: a}
---
kind: Deployment
apiVersion: apps/v1
metadata: {name: b, namespace: z}
---
kind: Deployment
apiVersion: apps/v1
metadata: {name: c, namespace: a}
---
kind: Namespace
apiVersion: v1
metadata: {name: a}
---
kind: CustomResourceDefinition
apiVersion: apiextensions.k8s.io/v1
metadata: {name: x}
)");
  sort_for_apply(list);
  CHECK(ids(list) == std::vector<std::string>{"CustomResourceDefinition//x", "Namespace//a",
                                              "Deployment/a/c", "Deployment/z/b",
                                              "Kustomization/a/k", "GitRepository/a/g",
                                              "ValidatingWebhookConfiguration//v"});
}

TEST_CASE("apply order: metadata maps are created only when something is added") {
  auto list = objects("kind: A\nmetadata:\n  name: a\n  labels:\n    x: old\n");
  set_metadata(list, {}, {});
  CHECK(list[0].find({"metadata", "annotations"}) == nullptr);
  set_metadata(list, {{"x", "new"}, {"y", "1"}}, {{"note", "n"}});
  CHECK(list[0].string_at({"metadata", "labels", "x"}) == "new");
  CHECK(list[0].find({"metadata", "labels", "y"})->is_string());
  CHECK(list[0].string_at({"metadata", "annotations", "note"}) == "n");
}

TEST_CASE("revision digest: SHA-256 in the OCI digest form") {
  CHECK(sha256_digest("abc") ==
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace fluxop::render
