#include "core/kustomize/fieldspec.h"

#include <doctest/doctest.h>

#include "support.h"

namespace fluxop::kustomize {
namespace {

using testing::kContext;
using yaml::Node;

Node container(const char* name, const char* image) {
  Node c = Node::map();
  c.set("name", Node::string(name));
  if (image) c.set("image", Node::string(image));
  return c;
}

Node deployment() {
  Node containers = Node::sequence();
  containers.push_back(container("a", "nginx"));
  containers.push_back(container("b", nullptr));
  containers.push_back(container("c", "redis"));
  Node object = Node::map();
  object.set("apiVersion", Node::string("apps/v1"));
  object.set("kind", Node::string("Deployment"));
  object.get_or_insert("metadata", Node::map()).set("name", Node::string("web"));
  object.get_or_insert("spec", Node::map())
      .get_or_insert("template", Node::map())
      .get_or_insert("spec", Node::map())
      .set("containers", containers);
  return object;
}

std::vector<std::string> visited_texts(Node& object, const FieldSpec& spec) {
  std::vector<std::string> texts;
  visit_fields(object, spec, [&](Node& node) { texts.push_back(node.text()); });
  return texts;
}

}  // namespace

TEST_CASE("selects matches each non-empty gvk part") {
  Gvk deployment{"apps", "v1", "Deployment"};
  CHECK(selects({}, deployment));
  CHECK(selects({{"apps", "", ""}, "x"}, deployment));
  CHECK(selects({{"", "v1", "Deployment"}, "x"}, deployment));
  CHECK_FALSE(selects({{"", "", "Service"}, "x"}, deployment));
  CHECK_FALSE(selects({{"extensions", "", "Deployment"}, "x"}, deployment));
  CHECK_FALSE(selects({{"", "v1beta1", ""}, "x"}, deployment));
}

TEST_CASE("visit_fields steps into every item of a sequence") {
  Node object = deployment();
  auto expected = std::vector<std::string>{"nginx", "redis"};
  CHECK(visited_texts(object, {{}, "spec/template/spec/containers[]/image"}) == expected);
  // The "[]" is only a hint: sequences are entered either way.
  CHECK(visited_texts(object, {{}, "spec/template/spec/containers/image"}) == expected);
  CHECK(visited_texts(object, {{}, "/spec/template/spec/containers/image"}) == expected);
}

TEST_CASE("visit_fields filters by gvk") {
  Node object = deployment();
  CHECK(visited_texts(object, {{"", "", "StatefulSet"}, "metadata/name"}).empty());
  CHECK(visited_texts(object, {{"apps", "v1", "Deployment"}, "metadata/name"}) ==
        std::vector<std::string>{"web"});
}

TEST_CASE("visit_fields without create skips missing fields") {
  Node object = deployment();
  Node before = object;
  CHECK(visited_texts(object, {{}, "spec/template/metadata/labels"}).empty());
  CHECK(object == before);
}

TEST_CASE("visit_fields with create adds maps on the way and a null leaf") {
  Node object = deployment();
  int visits = 0;
  visit_fields(object, {{}, "spec/template/metadata/labels", true}, [&](Node& leaf) {
    CHECK(leaf.is_null());
    leaf = Node::map();
    leaf.set("app", Node::string("web"));
    ++visits;
  });
  CHECK(visits == 1);
  CHECK(object.string_at({"spec", "template", "metadata", "labels", "app"}) == "web");

  SUBCASE("a null map on the way is replaced") {
    object.find({"spec", "template"})->set("metadata", Node());
    visit_fields(object, {{}, "spec/template/metadata/labels", true}, [](Node&) {});
    REQUIRE(object.find({"spec", "template", "metadata"}));
    CHECK(object.find({"spec", "template", "metadata"})->is_map());
  }
  SUBCASE("sequence steps and items are never created") {
    Node before = object;
    visit_fields(object, {{}, "spec/volumes[]/name", true}, [](Node&) { FAIL("visited"); });
    CHECK(object == before);
    visits = 0;
    visit_fields(object, {{}, "spec/template/spec/containers[]/image", true},
                 [&](Node& leaf) { visits += leaf.is_null() ? 100 : 1; });
    CHECK(visits == 102);  // "b" had no image: created as null
  }
}

TEST_CASE("visit_fields turns a null sequence step into an empty sequence") {
  Node object = deployment();
  object.find({"spec", "template", "spec"})->set("containers", Node());
  visit_fields(object, {{}, "spec/template/spec/containers[]/image"}, [](Node&) {});
  CHECK(object.find({"spec", "template", "spec", "containers"})->is_sequence());
}

TEST_CASE("visit_fields visits a null leaf") {
  Node object = deployment();
  object.find({"metadata"})->set("labels", Node());
  int visits = 0;
  visit_fields(object, {{}, "metadata/labels"}, [&](Node& leaf) { visits += leaf.is_null(); });
  CHECK(visits == 1);
}

TEST_CASE("visit_fields honours escaped slashes in keys") {
  Node object = deployment();
  object.find({"metadata"})
      ->get_or_insert("annotations", Node::map())
      .set("example.com/owner", Node::string("me"));
  CHECK(visited_texts(object, {{}, "metadata/annotations/example.com\\/owner"}) ==
        std::vector<std::string>{"me"});
}

TEST_CASE("visit_fields refuses to walk through a scalar") {
  Node object = deployment();
  object.find({"spec"})->set("template", Node::string("foo"));
  CHECK_THROWS_WITH_AS(
      visit_fields(object, {{}, "spec/template/metadata/labels"}, [](Node&) {}),
      "Deployment/web: spec/template/metadata/labels: expected a map or sequence before "
      "'metadata', found a scalar",
      Error);
  CHECK_THROWS_WITH_AS(visit_fields(object, {{}, "metadata//x"}, [](Node&) {}),
                       "Deployment/web: metadata//x: empty field name", Error);
}

TEST_CASE("parse_fieldspecs reads and validates a list") {
  Node list = Node::sequence();
  Node item = Node::map();
  item.set("group", Node::string("apps"));
  item.set("kind", Node::string("Deployment"));
  item.set("path", Node::string("spec/template/metadata/labels"));
  item.set("create", Node::boolean(true));
  list.push_back(item);
  FieldSpecs specs = parse_fieldspecs(list, kContext, "labels[0].fields");
  REQUIRE(specs.size() == 1);
  CHECK(specs[0].gvk == Gvk{"apps", "", "Deployment"});
  CHECK(specs[0].path == "spec/template/metadata/labels");
  CHECK(specs[0].create);
  CHECK(parse_fieldspecs(Node(), kContext, "x").empty());

  CHECK_THROWS_WITH_AS(parse_fieldspecs(Node::string("a"), kContext, "labels[0].fields"),
                       "kustomization.yaml: labels[0].fields: expected a sequence, found \"a\"",
                       Error);
  list.items()[0].set("create", Node::string("true"));
  CHECK_THROWS_WITH_AS(
      parse_fieldspecs(list, kContext, "labels[0].fields"),
      "kustomization.yaml: labels[0].fields[0].create: expected true or false, found \"true\"",
      Error);
  list.items()[0].set("create", Node::boolean(false));
  list.items()[0].set("kind", Node::integer(3));
  CHECK_THROWS_WITH_AS(parse_fieldspecs(list, kContext, "labels[0].fields"),
                       "kustomization.yaml: labels[0].fields[0].kind: expected a string, found 3",
                       Error);
  list.items()[0].set("kind", Node::string("Deployment"));
  list.items()[0].set("bogus", Node::integer(1));
  CHECK_THROWS_WITH_AS(parse_fieldspecs(list, kContext, "labels[0].fields"),
                       "kustomization.yaml: labels[0].fields[0]: unknown field \"bogus\"", Error);
  CHECK(parse_fieldspecs(list, kContext, "fieldSpecs", UnknownKeys::Ignore).size() == 1);
}

}  // namespace fluxop::kustomize
