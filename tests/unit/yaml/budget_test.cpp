#include "core/yaml/budget.h"

#include <doctest/doctest.h>

#include <string>

#include "core/error.h"

namespace fluxop::yaml {
namespace {

// A map of `entries` keys: entries + 1 nodes.
Node map_of(std::size_t entries, std::size_t value_bytes = 1) {
  Node map = Node::map();
  for (std::size_t i = 0; i < entries; ++i)
    map.append("k" + std::to_string(i), Node::string(std::string(value_bytes, 'v')));
  return map;
}

// What a build copies onto each of its objects (.spec.commonMetadata) is
// charged for every copy, before any is made.
TEST_CASE("budget: copies are charged as many times as they are made") {
  Node tree = map_of(999);  // 1,000 nodes
  SUBCASE("up to the bound") {
    NodeBudget budget;
    budget.charge_copies(tree, 1000);
    CHECK(budget.used() == kMaxNodes);
    CHECK_THROWS_WITH_AS(budget.charge(Node::string("one more")),
                         "the build makes more than 1000000 nodes", Error);
  }
  SUBCASE("one copy past it is refused, nothing charged") {
    NodeBudget budget;
    CHECK_THROWS_WITH_AS(budget.charge_copies(tree, 1001),
                         "the build makes more than 1000000 nodes", Error);
    CHECK(budget.used() == 0);
  }
  SUBCASE("text, counted per copy") {
    NodeBudget budget;
    Node text = map_of(1, 1 << 20);  // a key of 2 bytes and 1 MiB of value
    CHECK_THROWS_WITH_AS(budget.charge_copies(text, 128),
                         "the build makes more than 128 MiB of text", Error);
    budget.charge_copies(text, 127);
    CHECK(budget.used() == 2 * 127);
  }
  SUBCASE("no copies, no charge") {
    NodeBudget budget;
    budget.charge_copies(tree, 0);
    CHECK(budget.used() == 0);
  }
}

}  // namespace
}  // namespace fluxop::yaml
