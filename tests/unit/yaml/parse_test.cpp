#include "core/yaml/parse.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "core/error.h"
#include "core/yaml/json.h"
#include "core/yaml/scalar.h"

using fluxop::yaml::Node;
using fluxop::yaml::parse_document;
using fluxop::yaml::parse_documents;
using fluxop::yaml::Style;
using fluxop::yaml::Tag;

TEST_CASE("parser resolves plain scalars with the YAML 1.2 core schema") {
  Node n = parse_document(
      "s: hello\nq: '1000'\ni: 42\nx: 0x1F\nf: 1.5\nb: true\nyes_: yes\nnul: ~\nts: 2001-12-14\n"
      "e: ''\n",
      "t.yaml");
  CHECK(n.get("s")->tag() == Tag::String);
  CHECK(n.get("q")->tag() == Tag::String);
  CHECK(n.get("q")->style() == Style::SingleQuoted);
  CHECK(n.get("i")->tag() == Tag::Int);
  CHECK(n.get("x")->tag() == Tag::Int);
  CHECK(n.get("f")->tag() == Tag::Float);
  CHECK(n.get("b")->tag() == Tag::Bool);
  CHECK(n.get("yes_")->tag() == Tag::String);
  CHECK(n.get("nul")->is_null());
  CHECK(n.get("ts")->tag() == Tag::Timestamp);
  CHECK(n.get("e")->is_string());
}

TEST_CASE("parser keeps explicit tags, styles, order and marks") {
  Node n = parse_document("z: !!str 12\na: |\n  lit\nm: \"dq\"\n", "t.yaml");
  CHECK(n.get("z")->tag() == Tag::String);
  CHECK(n.get("z")->text() == "12");
  CHECK(n.get("a")->style() == Style::Literal);
  CHECK(n.get("m")->style() == Style::DoubleQuoted);
  CHECK(n.entries().front().first == "z");
  CHECK(n.get("a")->mark.line == 2);
}

TEST_CASE("parser expands anchors and aliases") {
  Node n = parse_document("a: &x {k: v}\nb: *x\n", "t.yaml");
  CHECK(*n.get("a") == *n.get("b"));
}

TEST_CASE("parser reports errors as file:line:col") {
  CHECK_THROWS_WITH_AS(parse_documents("a: [1, 2\n", "bad.yaml"), doctest::Contains("bad.yaml:"),
                       fluxop::Error);
  CHECK_THROWS_WITH_AS(parse_document("a: 1\na: 2\n", "dup.yaml"),
                       "dup.yaml:2:4: mapping key \"a\" already defined", fluxop::Error);
  CHECK_THROWS_WITH_AS(parse_document("a: 1\n---\nb: 2\n", "two.yaml"),
                       "two.yaml: expected one YAML document, found 2", fluxop::Error);
}

TEST_CASE("multi-document streams keep empty documents as null") {
  auto docs = parse_documents("---\na: 1\n---\n---\nb: 2\n", "m.yaml");
  REQUIRE(docs.size() == 3);
  CHECK(docs[1].is_null());
}

TEST_CASE("read_file names the path on errors") {
  CHECK_THROWS_WITH_AS(fluxop::yaml::read_file("/nonexistent/x.yaml"),
                       "/nonexistent/x.yaml: No such file or directory", fluxop::Error);
  CHECK_THROWS_WITH_AS(fluxop::yaml::read_file("/tmp"), "/tmp: is a directory", fluxop::Error);
}

TEST_CASE("json conversion keeps types") {
  Node n = parse_document("s: '1'\ni: 0x10\nf: 2.5\nb: false\nn: null\nl: [1, a]\n", "t.yaml");
  auto j = fluxop::yaml::to_json(n);
  CHECK(j.dump() == R"({"s":"1","i":16,"f":2.5,"b":false,"n":null,"l":[1,"a"]})");
  CHECK(fluxop::yaml::from_json(j) ==
        parse_document("s: '1'\ni: 16\nf: 2.5\nb: false\nn: null\nl: [1, a]\n", "t"));
}

TEST_CASE("int parsing follows Go's base prefixes") {
  CHECK(fluxop::yaml::parse_int("0o17") == 15);
  CHECK(fluxop::yaml::parse_int("-0b101") == -5);
  CHECK(fluxop::yaml::parse_int("-9223372036854775808") == INT64_MIN);
  CHECK_FALSE(fluxop::yaml::parse_int("9223372036854775808").has_value());
  CHECK(fluxop::yaml::resolve_plain("089") == Tag::Float);
  CHECK(fluxop::yaml::resolve_plain("1:20") == Tag::String);
  CHECK(fluxop::yaml::plain_is_non_string_v2("1:20"));
}

TEST_CASE("parser refuses invalid UTF-8 with its position") {
  CHECK_THROWS_WITH_AS(parse_documents("a: ok\nb: x\xff\n", "u.yaml"), "u.yaml:2:5: invalid UTF-8",
                       fluxop::Error);
  CHECK_THROWS_WITH_AS(parse_documents("\xc0\x80", "u.yaml"), "u.yaml:1:1: invalid UTF-8",
                       fluxop::Error);
  CHECK(parse_document("a: \xe2\x9c\x93\n", "u.yaml").get("a")->text() == "\xe2\x9c\x93");
}

TEST_CASE("parser refuses control characters, as Go's yaml.v3 does") {
  using namespace std::string_literals;
  CHECK_THROWS_WITH_AS(parse_documents("a: b\x01\n"s, "c.yaml"),
                       "c.yaml:1:5: control characters are not allowed", fluxop::Error);
  CHECK_THROWS_WITH_AS(parse_documents("\0\0\0Fa: b"s, "c.yaml"),
                       "c.yaml:1:1: control characters are not allowed", fluxop::Error);
  CHECK(parse_document("a: \"tab\there\"\r\n", "c.yaml").get("a")->text() == "tab\there");
}

TEST_CASE("nulls remember how they were written") {
  Node n = parse_document("a: null\nb: ~\nc:\nd: [~, Null]\n", "n.yaml");
  CHECK(n.get("a")->null_form() == "null");
  CHECK(n.get("b")->null_form() == "~");
  CHECK(n.get("c")->null_form() == "");
  CHECK(n.get("d")->items()[0].null_form() == "~");
  CHECK(n.get("d")->items()[1].null_form() == "Null");
  CHECK(*n.get("a") == *n.get("c"));
}

TEST_CASE("parser fails instead of looping on tokens yaml-cpp cannot place") {
  CHECK_THROWS_WITH_AS(parse_documents(", - 1\n", "loop.yaml"),
                       "loop.yaml:1:1: did not find expected node content", fluxop::Error);
  CHECK_THROWS_AS(parse_documents("a: b\n---\n,\n", "loop.yaml"), fluxop::Error);
  CHECK(parse_documents("---\n---\n---\n", "empty.yaml").size() == 3);
}

TEST_CASE("merge keys: own keys win, then earlier merged maps") {
  Node n = parse_document(
      "a: &a {x: 1, y: 2}\nb: &b {y: 3, z: 4}\nc:\n  y: 0\n  <<: [*a, *b]\nd:\n  '<<': *a\n",
      "m.yaml");
  CHECK(*n.get("c") == parse_document("{x: 1, y: 0, z: 4}", "e.yaml"));
  CHECK(n.find({"d", "<<", "x"}) != nullptr);
  CHECK_THROWS_WITH_AS(parse_document("a:\n  <<: 1\n", "m.yaml"),
                       "m.yaml:2:7: map merge requires map or sequence of maps as the value",
                       fluxop::Error);
}

TEST_CASE("the escapes \\N and \\_ decode to U+0085 and U+00A0") {
  CHECK(parse_document("a: \"x\\Ny\\_z\"", "e.yaml").get("a")->text() == "x\xC2\x85y\xC2\xA0z");
}

namespace {

// "Billion laughs": `levels` anchors, each a list of ten aliases of the last.
std::string nested_aliases(int levels) {
  std::string text = "a0: &a0 lol\n";
  for (int i = 1; i <= levels; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  return text;
}

}  // namespace

TEST_CASE("alias expansion is bounded before it is made") {
  // Five levels expand to about 100,000 nodes: allowed, as yaml.v3 allows it.
  Node five = parse_document(nested_aliases(5), "five.yaml");
  CHECK(five.get("a5")->items()[9].items()[9].items()[9].items()[9].items()[9].text() == "lol");
  // Nine would be a billion: refused at the alias that crosses the bound.
  CHECK_THROWS_WITH_AS(parse_document(nested_aliases(9), "laughs.yaml"),
                       "laughs.yaml:7:45: more than 1000000 nodes (aliases expanded)",
                       fluxop::Error);
  // Merge keys copy too.
  std::string merges = "a: &a {";
  for (int k = 0; k < 1000; ++k) merges += "k" + std::to_string(k) + ": 1, ";
  merges += "z: 1}\nb: [";
  for (int k = 0; k < 1000; ++k) merges += "{<<: *a}, ";
  merges += "{<<: *a}]\n";
  CHECK_THROWS_WITH_AS(parse_document(merges, "merges.yaml"),
                       doctest::Contains("more than 1000000 nodes"), fluxop::Error);
}

TEST_CASE("a flat stream of more than a million nodes is refused") {
  std::string list = "[";
  for (int k = 0; k < 1'000'001; ++k) list += "1,";
  list += "1]\n";
  CHECK_THROWS_WITH_AS(parse_document(list, "flat.yaml"), doctest::Contains("flat.yaml:1:"),
                       fluxop::Error);
}

TEST_CASE("nesting too deep is named, not yaml-cpp's bad file") {
  std::string deep = "a: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  CHECK_THROWS_WITH_AS(parse_document(deep, "deep.yaml"), doctest::Contains("nested too deeply"),
                       fluxop::Error);
}

TEST_CASE("a quoted scalar never closed is refused, as yaml.v3 refuses it") {
  CHECK_THROWS_WITH_AS(parse_document("a: \"2.x\nb: c\n", "q.yaml"),
                       "q.yaml:1:4: found unexpected end of stream while scanning a quoted scalar",
                       fluxop::Error);
  CHECK_THROWS_WITH_AS(parse_document("a: 'it''s\n", "q.yaml"),
                       doctest::Contains("q.yaml:1:4: found unexpected end"), fluxop::Error);
  Node closed = parse_document("a: \"x\\\"y\"\nb: 'it''s'\nc: ''''\n", "q.yaml");
  CHECK(closed.get("a")->text() == "x\"y");
  CHECK(closed.get("b")->text() == "it's");
  CHECK(closed.get("c")->text() == "'");
}

TEST_CASE("large maps: set, get and remove stay right through the key index") {
  Node map = Node::map();
  for (int k = 0; k < 100; ++k) map.set("k" + std::to_string(k), Node::integer(k));
  map.set("k7", Node::string("seven"));
  CHECK(map.size() == 100);
  CHECK(map.get("k7")->text() == "seven");
  CHECK(map.get("k99")->text() == "99");
  CHECK(map.get("k100") == nullptr);
  CHECK(map.remove("k0"));
  CHECK(map.get("k1")->text() == "1");
  CHECK(map.get("k0") == nullptr);
  // Reordered behind the index: lookups still find every key.
  std::reverse(map.entries().begin(), map.entries().end());
  CHECK(map.get("k1")->text() == "1");
  CHECK(map.get("k98")->text() == "98");
  Node copy = map;
  copy.set("k1", Node::string("one"));
  CHECK(map.get("k1")->text() == "1");
  CHECK(copy.get("k1")->text() == "one");
  std::string many = "{";
  for (int k = 0; k < 100; ++k) many += "k" + std::to_string(k) + ": 1, ";
  CHECK_THROWS_WITH_AS(parse_document(many + "k5: 2}", "d.yaml"),
                       doctest::Contains("mapping key \"k5\" already defined"), fluxop::Error);
}
