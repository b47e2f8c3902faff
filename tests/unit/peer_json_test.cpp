#include "core/peer_json.h"

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"

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

// The elements and the envelope of `text` fed in pieces of `piece` bytes.
struct Streamed {
  std::vector<nlohmann::json> elements;
  nlohmann::json envelope;
};
// Decoding the items of a list, with `change` made to the options.
PeerJsonArrayStream::Options items(
    const std::function<void(PeerJsonArrayStream::Options&)>& change = {}) {
  PeerJsonArrayStream::Options options;
  options.member = "items";
  if (change) change(options);
  return options;
}

Streamed stream(const std::string& text, std::size_t piece,
                const PeerJsonArrayStream::Options& options = items()) {
  Streamed streamed;
  PeerJsonArrayStream decoder(
      options, [&](nlohmann::json&& element) { streamed.elements.push_back(std::move(element)); });
  for (std::size_t at = 0; at < text.size(); at += piece) decoder.write(text.substr(at, piece));
  streamed.envelope = decoder.finish();
  CHECK(decoder.elements() == streamed.elements.size());
  return streamed;
}

constexpr const char* kList =
    R"({"kind":"KList","metadata":{"resourceVersion":"7","items":[{"not":"these"}]},)"
    R"( "note" : "\"items\":[{}]",)"
    "\n \"items\" : [ {\"metadata\":{\"name\":\"a}\",\"managedFields\":[{\"m\":1}]},\"spec\":{}} "
    ",\n"
    R"({"metadata":{"name":"b","labels":{"managedFields":"kept"}}}],"after":[1,{"x":2}]})";

TEST_CASE("PeerJsonArrayStream: the elements and the envelope, whatever the pieces") {
  nlohmann::json whole = nlohmann::json::parse(kList);
  nlohmann::json envelope = whole;
  envelope["items"] = nlohmann::json::array();
  std::string text = kList;
  for (std::size_t piece = 1; piece <= text.size(); ++piece) {
    CAPTURE(piece);
    Streamed streamed = stream(text, piece);
    CHECK(streamed.elements ==
          std::vector<nlohmann::json>(whole["items"].begin(), whole["items"].end()));
    CHECK(streamed.envelope == envelope);
  }
}

TEST_CASE("PeerJsonArrayStream: members dropped are never built, elsewhere kept") {
  Streamed streamed =
      stream(kList, 7, items([](auto& o) { o.dropped = {"/metadata/managedFields"}; }));
  REQUIRE(streamed.elements.size() == 2);
  CHECK(streamed.elements[0] == nlohmann::json::parse(R"({"metadata":{"name":"a}"},"spec":{}})"));
  CHECK(streamed.elements[1]["metadata"]["labels"]["managedFields"] == "kept");
}

TEST_CASE("PeerJsonArrayStream: no such member leaves the whole document to the envelope") {
  Streamed streamed = stream(R"({"kind":"Status","items":3,"code":410})", 5);
  CHECK(streamed.elements.empty());
  CHECK(streamed.envelope["code"] == 410);
  streamed = stream(R"([{"items":[{}]}])", 5);
  CHECK(streamed.elements.empty());
  CHECK(streamed.envelope.is_array());
}

TEST_CASE("PeerJsonArrayStream: what breaks a bound, or is no JSON, is refused") {
  auto refused = [](const std::string& text,
                    const PeerJsonArrayStream::Options& options = items()) {
    try {
      stream(text, 3, options);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused(R"({"items":[{},3]})") == "an element of items that is not an object");
  CHECK(refused(R"({"items":[{"a":[1,2]")") == "cut short in an element of items");
  CHECK(refused(R"({"items":[{"a":1}])") == "not JSON");
  CHECK(refused(R"({"items":[{"a" 1}]})") == "an element of items that is not JSON");
  CHECK(refused(R"({"items":[{"a":)" + std::string(300, '[') + std::string(300, ']') + "}]}") ==
        "an element of items nested deeper than 256 levels");
  CHECK(refused(R"({"items":[{"a":[1,2,3,4]}]})", items([](auto& o) {
                  o.bounds.max_elements = 4;
                })) == "an element of items with more than 4 values");
  CHECK(refused(R"({"items":[{"a":"0123456789"}]})", items([](auto& o) {
                  o.max_element_bytes = 10;
                })) == "an element of items of more than 10 bytes");
  CHECK(refused(R"({"kind":"0123456789","items":[]})", items([](auto& o) {
                  o.max_envelope_bytes = 10;
                })) == "more than 10 bytes beside items");
}

}  // namespace
}  // namespace fluxop
