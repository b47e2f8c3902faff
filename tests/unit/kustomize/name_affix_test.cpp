#include "core/kustomize/name_affix.h"

#include <doctest/doctest.h>

#include "support.h"

namespace fluxop::kustomize {
namespace {

using yaml::Node;
using namespace testing;

std::vector<std::string> names(const ResourceList& resources) {
  std::vector<std::string> out;
  for (const auto& r : resources) out.push_back(r.name());
  return out;
}

// The kinds kustomize never renames, next to look-alikes it does rename.
constexpr const char* kinds = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.example.com}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns1}
---
apiVersion: example.com/v1
kind: Namespace
metadata: {name: cr-ns}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.foo}
---
apiVersion: other.io/v1
kind: APIService
metadata: {name: other-apiservice}
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: ns1}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ic}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: admin}
---
apiVersion: example.com/v1
kind: Foo
metadata: {name: foo}
)";

// `kinds` under `namePrefix: p-` and `nameSuffix: -s`.
ResourceList renamed_kinds() {
  ResourceList resources = load(kinds);
  transform_name_prefix(resources, Node::string("p-"), kContext);
  transform_name_suffix(resources, Node::string("-s"), kContext);
  return resources;
}

TEST_CASE("namePrefix and nameSuffix rename every kind but CRDs, Namespaces and APIServices") {
  ResourceList resources = renamed_kinds();
  // As `kubectl kustomize` renders the same input.
  CHECK(names(resources) == std::vector<std::string>{"foos.example.com", "ns1", "cr-ns", "v1.foo",
                                                     "p-other-apiservice-s", "p-svc-s", "p-ic-s",
                                                     "p-admin-s", "p-foo-s"});
}

TEST_CASE("each rename is remembered as a previous id") {
  ResourceList resources = renamed_kinds();
  const Resource& svc = resources[5];
  REQUIRE(svc.previous_ids().size() == 2);
  CHECK(svc.previous_ids()[0].name == "svc");
  CHECK(svc.previous_ids()[0].ns == "ns1");
  CHECK(svc.previous_ids()[1].name == "p-svc");
  CHECK(svc.original_id().name == "svc");
  CHECK(resources[0].previous_ids().empty());
}

TEST_CASE("an empty or null affix changes nothing and records no previous id") {
  ResourceList resources = load(kinds);
  transform_name_prefix(resources, Node::string(""), kContext);
  transform_name_suffix(resources, Node(), kContext);
  CHECK(names(resources)[5] == "svc");
  for (const auto& r : resources) CHECK(r.previous_ids().empty());
}

TEST_CASE("a date reads as a string, as kustomize reads the kustomization through JSON") {
  ResourceList resources = load(kinds);
  transform_name_prefix(resources, Node::scalar("2001-12-14", yaml::Tag::Timestamp), kContext);
  CHECK(resources[5].name() == "2001-12-14svc");
}

TEST_CASE("an affix that is not a string is rejected") {
  ResourceList resources = load(kinds);
  CHECK_THROWS_WITH_AS(transform_name_prefix(resources, Node::integer(1), kContext),
                       "kustomization.yaml: namePrefix: expected a string, found 1", Error);
  CHECK_THROWS_WITH_AS(transform_name_suffix(resources, Node::boolean(true), kContext),
                       "kustomization.yaml: nameSuffix: expected a string, found true", Error);
  CHECK_THROWS_WITH_AS(transform_name_suffix(resources, Node::map(), kContext),
                       "kustomization.yaml: nameSuffix: expected a string, found a map", Error);
  CHECK_THROWS_WITH_AS(transform_name_prefix(resources, Node::sequence(), kContext),
                       "kustomization.yaml: namePrefix: expected a string, found a sequence",
                       Error);
  CHECK(resources[5].name() == "svc");
}

}  // namespace
}  // namespace fluxop::kustomize
