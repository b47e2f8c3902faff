#include "core/kustomize/json_patch.h"

#include <doctest/doctest.h>

#include "support.h"

namespace fluxop::kustomize {
namespace {

using yaml::Node;
using namespace testing;

constexpr std::string_view kDocument = R"(
spec:
  replicas: 1
  list: [a, b, c]
  keys: {"x/y": 1, "t~u": 2}
)";

Node patched(std::string_view operations, std::string_view document = kDocument) {
  Node target = yaml_of(document);
  yaml::NodeBudget budget;
  apply_json_patch(target, yaml_of(operations), budget);
  return target;
}

std::string error_of(std::string_view operations, std::string_view document = kDocument) {
  return error_message([&] { patched(operations, document); });
}

Node at(const Node& document, std::string_view key) { return *document.find({"spec", key}); }

TEST_CASE("json patch add") {
  SUBCASE("a new map key, and an existing one is replaced") {
    Node result = patched(R"([{op: add, path: /spec/new, value: {a: 1}},
                              {op: add, path: /spec/replicas, value: 3}])");
    CHECK(at(result, "new") == yaml_of("{a: 1}"));
    CHECK(at(result, "replicas") == yaml_of("3"));
  }
  SUBCASE("into a sequence: by index, at the end, with - and negative indices") {
    CHECK(at(patched("[{op: add, path: /spec/list/1, value: z}]"), "list") ==
          yaml_of("[a, z, b, c]"));
    CHECK(at(patched("[{op: add, path: /spec/list/3, value: z}]"), "list") ==
          yaml_of("[a, b, c, z]"));
    CHECK(at(patched("[{op: add, path: /spec/list/-, value: z}]"), "list") ==
          yaml_of("[a, b, c, z]"));
    CHECK(at(patched("[{op: add, path: /spec/list/-1, value: z}]"), "list") ==
          yaml_of("[a, b, c, z]"));
    CHECK(at(patched("[{op: add, path: /spec/list/-4, value: z}]"), "list") ==
          yaml_of("[z, a, b, c]"));
  }
  SUBCASE("indices are read like Go's Atoi: leading zeros and + accepted") {
    CHECK(at(patched("[{op: add, path: /spec/list/01, value: z}]"), "list") ==
          yaml_of("[a, z, b, c]"));
    CHECK(at(patched("[{op: add, path: /spec/list/+1, value: z}]"), "list") ==
          yaml_of("[a, z, b, c]"));
  }
  SUBCASE("escaped pointer tokens") {
    Node keys = at(patched(R"([{op: add, path: /spec/keys/x~1y, value: 5},
                               {op: add, path: /spec/keys/a~0~01, value: 6}])"),
                   "keys");
    CHECK(keys == yaml_of(R"({"x/y": 5, "t~u": 2, "a~~1": 6})"));
  }
  SUBCASE("a missing value is null") {
    CHECK(at(patched("[{op: add, path: /spec/replicas}]"), "replicas").is_null());
  }
  SUBCASE("errors") {
    CHECK(error_of("[{op: add, path: /spec/nope/x, value: 1}]") ==
          "[0] add /spec/nope/x: path not found");
    CHECK(error_of("[{op: add, path: /spec/replicas/x, value: 1}]") ==
          "[0] add /spec/replicas/x: path not found");
    CHECK(error_of("[{op: add, path: /spec/list/5/x, value: 1}]") ==
          "[0] add /spec/list/5/x: path not found");
    CHECK(error_of("[{op: add, path: '', value: {a: 1}}]") == "[0] add \"\": path not found");
    CHECK(error_of("[{op: add, path: /spec/list/4, value: z}]") ==
          "[0] add /spec/list/4: index 4 out of range (3 items)");
    CHECK(error_of("[{op: add, path: /spec/list/-5, value: z}]") ==
          "[0] add /spec/list/-5: index -5 out of range (3 items)");
    CHECK(error_of("[{op: add, path: /spec/list/x, value: z}]") ==
          "[0] add /spec/list/x: \"x\" is not a sequence index");
    CHECK(error_of("[{op: add, path: /spec/list/1x, value: z}]") ==
          "[0] add /spec/list/1x: \"1x\" is not a sequence index");
  }
}

TEST_CASE("json patch remove") {
  CHECK(patched("[{op: remove, path: /spec/keys/t~0u}]").find({"spec", "keys", "t~u"}) == nullptr);
  CHECK(at(patched("[{op: remove, path: /spec/list/0}]"), "list") == yaml_of("[b, c]"));
  CHECK(at(patched("[{op: remove, path: /spec/list/-1}]"), "list") == yaml_of("[a, b]"));
  CHECK(error_of("[{op: remove, path: /spec/nope}]") == "[0] remove /spec/nope: path not found");
  CHECK(error_of("[{op: remove, path: /spec/list/3}]") ==
        "[0] remove /spec/list/3: index 3 out of range (3 items)");
  CHECK(error_of("[{op: remove, path: /spec/list/-}]") ==
        "[0] remove /spec/list/-: \"-\" is not a sequence index");
  CHECK(error_of("[{op: remove, path: ''}]") == "[0] remove \"\": path not found");
}

TEST_CASE("json patch replace") {
  CHECK(at(patched("[{op: replace, path: /spec/replicas, value: 5}]"), "replicas") == yaml_of("5"));
  CHECK(at(patched("[{op: replace, path: /spec/list/-1, value: z}]"), "list") ==
        yaml_of("[a, b, z]"));
  SUBCASE("a missing map key is added, as kustomize does") {
    CHECK(at(patched("[{op: replace, path: /spec/replicass, value: 5}]"), "replicass") ==
          yaml_of("5"));
  }
  SUBCASE("the whole document") {
    CHECK(patched("[{op: replace, path: '', value: {a: 1}}]") == yaml_of("{a: 1}"));
    CHECK(error_of("[{op: replace, path: '', value: 3}]") ==
          "[0] replace \"\": the document can only be replaced by a map");
  }
  CHECK(error_of("[{op: replace, path: /spec/replicass/x, value: 3}]") ==
        "[0] replace /spec/replicass/x: path not found");
  CHECK(error_of("[{op: replace, path: /spec/list/3, value: z}]") ==
        "[0] replace /spec/list/3: index 3 out of range (3 items)");
  CHECK(error_of("[{op: replace, path: /spec/list/-, value: z}]") ==
        "[0] replace /spec/list/-: \"-\" is not a sequence index");
}

TEST_CASE("json patch move") {
  Node moved = patched("[{op: move, from: /spec/replicas, path: /spec/count}]");
  CHECK(moved.find({"spec", "replicas"}) == nullptr);
  CHECK(at(moved, "count") == yaml_of("1"));
  CHECK(at(patched("[{op: move, from: /spec/list/0, path: /spec/list/-}]"), "list") ==
        yaml_of("[b, c, a]"));
  CHECK(error_of("[{op: move, from: /spec/nope, path: /spec/x}]") ==
        "[0] move /spec/x: from \"/spec/nope\": path not found");
  CHECK(error_of("[{op: move, from: /spec/list/7, path: /spec/x}]") ==
        "[0] move /spec/x: from \"/spec/list/7\": index 7 out of range (3 items)");
  SUBCASE("into its own child: the source is gone when the destination is resolved") {
    CHECK(error_of("[{op: move, from: /spec, path: /spec/x}]") ==
          "[0] move /spec/x: path not found");
  }
  CHECK(error_of("[{op: move, path: /spec/x}]") == "[0] move /spec/x: missing \"from\"");
}

TEST_CASE("json patch copy") {
  Node copied = patched("[{op: copy, from: /spec/list, path: /spec/list/0}]");
  CHECK(at(copied, "list") == yaml_of("[[a, b, c], a, b, c]"));
  SUBCASE("a missing map key copies null, as kustomize does") {
    CHECK(at(patched("[{op: copy, from: /spec/nope, path: /spec/x}]"), "x").is_null());
  }
  CHECK(error_of("[{op: copy, from: /nope/x, path: /spec/x}]") ==
        "[0] copy /spec/x: from \"/nope/x\": path not found");
  CHECK(error_of("[{op: copy, from: /spec/list/3, path: /spec/x}]") ==
        "[0] copy /spec/x: from \"/spec/list/3\": index 3 out of range (3 items)");
  CHECK(error_of("[{op: copy, from: /spec/list, path: /nope/x}]") ==
        "[0] copy /nope/x: path not found");
}

// Flow-style sequences nested `levels` deep around an empty one.
std::string nested(std::size_t levels) {
  return std::string(levels - 1, '[') + "[]" + std::string(levels - 1, ']');
}

TEST_CASE("json patch: what the operations make is charged to the build's node budget") {
  SUBCASE("copies of copies fail once past the budget, before the copy is made") {
    std::string operations = "[";
    for (int i = 0; i < 40; ++i) operations += "{op: copy, from: /spec/list, path: /spec/list/0},";
    operations.back() = ']';
    std::string message = error_of(operations);
    CHECK(message.find(" copy /spec/list/0: the build makes more than 1000000 nodes") !=
          std::string::npos);
    CHECK(message.rfind("[17]", 0) == 0);
  }
  SUBCASE("copies of a long string fail once past the text budget, though they are few nodes") {
    // 4 MiB, copied: 32 copies make 128 MiB, the 33rd would make more.
    std::string document = "spec: {long: " + std::string(4 << 20, 'x') + "}";
    std::string operations = "[";
    for (int i = 0; i < 40; ++i)
      operations += "{op: copy, from: /spec/long, path: /spec/c" + std::to_string(i) + "},";
    operations.back() = ']';
    CHECK(error_of(operations, document) ==
          "[32] copy /spec/c32: the build makes more than 128 MiB of text");
  }
  SUBCASE("added, replaced and copied values are charged, a moved one is not") {
    yaml::NodeBudget budget;
    Node target = yaml_of(kDocument);
    apply_json_patch(target, yaml_of(R"([{op: add, path: /spec/a, value: {x: 1}},
                                         {op: replace, path: /spec/a, value: [1, 2]},
                                         {op: copy, from: /spec/list, path: /spec/b},
                                         {op: move, from: /spec/b, path: /spec/c}])"),
                     budget);
    CHECK(budget.used() == 2 + 3 + 4);
  }
  SUBCASE("no operation nests the document deeper than 100 levels") {
    CHECK(error_of("[{op: add, path: /spec/x, value: " + nested(99) + "}]") ==
          "[0] add /spec/x: nested deeper than 100 levels");
    CHECK(error_of("[{op: replace, path: /spec/list/0, value: " + nested(98) + "}]") ==
          "[0] replace /spec/list/0: nested deeper than 100 levels");
    CHECK(error_of("[{op: copy, from: /spec, path: /spec/keys/x}]",
                   "spec: {keys: {}, deep: " + nested(98) + "}") ==
          "[0] copy /spec/keys/x: nested deeper than 100 levels");
    CHECK(error_of("[{op: move, from: /spec/deep, path: /spec/keys/x}]",
                   "spec: {keys: {}, deep: " + nested(98) + "}") ==
          "[0] move /spec/keys/x: nested deeper than 100 levels");
    CHECK(patched("[{op: add, path: /spec/x, value: " + nested(98) + "}]").size() == 1);
  }
}

TEST_CASE("json patch test") {
  SUBCASE("semantic comparison") {
    CHECK_NOTHROW(patched("[{op: test, path: /spec/replicas, value: 1}]"));
    CHECK_NOTHROW(patched("[{op: test, path: /spec/replicas, value: 1.0}]"));
    CHECK_NOTHROW(patched("[{op: test, path: /spec/replicas, value: 0x1}]"));
    CHECK_NOTHROW(patched("[{op: test, path: /spec/list, value: [a, b, c]}]"));
    CHECK_NOTHROW(patched(R"([{op: test, path: /spec/keys, value: {"t~u": 2, "x/y": 1}}])"));
    CHECK_NOTHROW(patched("[{op: test, path: '', value: {a: [1]}}]", "{a: [1]}"));
  }
  SUBCASE("a missing map key equals null") {
    CHECK_NOTHROW(patched("[{op: test, path: /spec/nope, value: null}]"));
    CHECK_NOTHROW(patched("[{op: test, path: /spec/nope}]"));
  }
  CHECK(error_of("[{op: test, path: /spec/replicas, value: '1'}]") ==
        "[0] test /spec/replicas: test failed");
  CHECK(error_of("[{op: test, path: /spec/replicas}]") == "[0] test /spec/replicas: test failed");
  CHECK(error_of("[{op: test, path: /spec/list, value: [a, b]}]") ==
        "[0] test /spec/list: test failed");
  CHECK(error_of("[{op: test, path: /spec/nope, value: 1}]") == "[0] test /spec/nope: test failed");
  CHECK(error_of("[{op: test, path: /spec/list/-, value: 1}]") ==
        "[0] test /spec/list/-: \"-\" is not a sequence index");
}

TEST_CASE("json patch operations are applied in order, errors name the index") {
  CHECK(at(patched(R"([{op: add, path: /spec/x, value: 1},
                       {op: move, from: /spec/x, path: /spec/y},
                       {op: test, path: /spec/y, value: 1}])"),
           "y") == yaml_of("1"));
  CHECK(error_of(R"([{op: test, path: /spec/replicas, value: 1},
                     {op: test, path: /spec/replicas, value: 1},
                     {op: replace, path: /spec/replicass/x, value: 3}])") ==
        "[2] replace /spec/replicass/x: path not found");
  CHECK_NOTHROW(patched("null"));
  CHECK_NOTHROW(patched("[]"));
}

TEST_CASE("json patch malformed operations") {
  CHECK(error_of("{op: add}") == "a JSON patch must be a list of operations, not a map");
  CHECK(error_of("[5]") == "[0]: an operation must be a map, not a scalar");
  CHECK(error_of("[{path: /spec/x}]") == "[0]: missing \"op\"");
  CHECK(error_of("[{op: frob, path: /spec/x}]") ==
        "[0]: unknown op \"frob\" (expected add, remove, replace, move, copy or test)");
  CHECK(error_of("[{op: remove}]") == "[0] remove: missing \"path\"");
  CHECK(error_of("[{op: remove, path: 5}]") == "[0] remove: \"path\" must be a string");
  CHECK(error_of("[{op: copy, from: [x], path: /a}]") == "[0] copy /a: \"from\" must be a string");
  CHECK(error_of("[{op: add, path: spec/x, value: 1}]") ==
        "[0] add spec/x: a JSON pointer must be empty or start with \"/\"");
  CHECK(error_of("[{op: add, path: /spec/a~2b, value: 1}]") ==
        "[0] add /spec/a~2b: invalid JSON pointer escape: \"~\" must be followed by 0 or 1");
  CHECK(error_of("[{op: move, from: x, path: /a}]") ==
        "[0] move /a: from \"x\": a JSON pointer must be empty or start with \"/\"");
}

}  // namespace
}  // namespace fluxop::kustomize
