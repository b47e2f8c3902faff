#include "core/yaml/parse.h"

#include <doctest/doctest.h>

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
