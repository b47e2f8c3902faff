#include "core/peer_json.h"

#include <doctest/doctest.h>

#include <string>

namespace fluxop {
namespace {

TEST_CASE("parse_peer_json: JSON within the bounds decodes as the parser would") {
  std::string why = "untouched";
  nlohmann::json value = parse_peer_json(R"({"a":[1,{"b":"[[[{"}],"c":"\"]"})", &why);
  REQUIRE(value.is_object());
  CHECK(value["a"][1]["b"] == "[[[{");
  CHECK(value["c"] == "\"]");
  CHECK(why == "untouched");
}

TEST_CASE("parse_peer_json: nesting beyond the bound is refused before it is parsed") {
  std::string why;
  std::string deep = std::string(20'000, '[') + std::string(20'000, ']');
  CHECK(parse_peer_json(deep, &why).is_discarded());
  CHECK(why == "nesting deeper than 256 levels");
  std::string at_bound = std::string(256, '[') + std::string(256, ']');
  CHECK(parse_peer_json(at_bound).is_array());
  // Brackets inside strings are not nesting.
  CHECK(parse_peer_json("\"" + std::string(1000, '[') + "\"").is_string());
}

TEST_CASE("parse_peer_json: more elements than the bound are refused") {
  std::string why;
  PeerJsonBounds bounds;
  bounds.max_elements = 100;
  // The array and its 99 items.
  std::string list = "[0";
  for (int i = 1; i < 99; ++i) list += ",0";
  CHECK(parse_peer_json(list + "]", &why, bounds).is_array());
  CHECK(parse_peer_json(list + ",0]", &why, bounds).is_discarded());
  CHECK(why == "more than 100 values");
}

TEST_CASE("parse_peer_json: the values it counted, for a caller's bound over many answers") {
  std::size_t values = 0;
  // The object, 1, the array, 1 and 2; brackets and commas in strings are not values.
  CHECK(parse_peer_json(R"({"a":1,"b":[1,2],"c":"[,{"})", nullptr, {}, &values).is_object());
  CHECK(values == 6);
  CHECK(parse_peer_json("7", nullptr, {}, &values) == 7);
  CHECK(values == 1);
}

TEST_CASE("parse_peer_json: text that is not JSON is discarded, never thrown") {
  std::string why;
  CHECK(parse_peer_json("{\"a\":", &why).is_discarded());
  CHECK(why == "not JSON");
  CHECK(parse_peer_json("").is_discarded());
}

}  // namespace
}  // namespace fluxop
