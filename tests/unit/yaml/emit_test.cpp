#include "core/yaml/emit.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "core/yaml/json.h"
#include "core/yaml/parse.h"

namespace {

using fluxop::yaml::emit;
using fluxop::yaml::parse_document;

std::string roundtrip(const std::string& yaml) { return emit(parse_document(yaml, "test.yaml")); }

}  // namespace

TEST_CASE("emitter sorts keys the way yaml.v2 does") {
  CHECK(roundtrip("b: 1\na10: 2\na9: 3\nA: 4\n_x: 5\n'-': 6\n'10': 7\n'2': 8\n") ==
        "'-': 6\n_x: 5\n\"2\": 8\n\"10\": 7\nA: 4\na9: 3\na10: 2\nb: 1\n");
}

TEST_CASE("emitter quotes strings that would read back as something else") {
  CHECK(roundtrip("a: '1000'") == "a: \"1000\"\n");
  CHECK(roundtrip("a: 'true'") == "a: \"true\"\n");
  CHECK(roundtrip("a: 'yes'") == "a: \"yes\"\n");
  CHECK(roundtrip("a: y") == "a: \"y\"\n");
  CHECK(roundtrip("n: x") == "\"n\": x\n");
  CHECK(roundtrip("a: '~'") == "a: \"~\"\n");
  CHECK(roundtrip("a: ''") == "a: \"\"\n");
  CHECK(roundtrip("a: '1:20'") == "a: \"1:20\"\n");
  CHECK(roundtrip("a: '0777'") == "a: \"0777\"\n");
  CHECK(roundtrip("a: '1e3'") == "a: \"1e3\"\n");
  CHECK(roundtrip("a: '2001-12-14'") == "a: \"2001-12-14\"\n");
  CHECK(roundtrip("a: '<<'") == "a: <<\n");
  CHECK(roundtrip("'<<': a") == "\"<<\": a\n");
}

TEST_CASE("emitter single-quotes indicators and keeps plain what it can") {
  CHECK(roundtrip("a: '*'") == "a: '*'\n");
  CHECK(roundtrip("a: '- x'") == "a: '- x'\n");
  CHECK(roundtrip("a: 'a: b'") == "a: 'a: b'\n");
  CHECK(roundtrip("a: '#hash'") == "a: '#hash'\n");
  CHECK(roundtrip("a: 'a #b'") == "a: 'a #b'\n");
  CHECK(roundtrip("a: ' lead'") == "a: ' lead'\n");
  CHECK(roundtrip("a: \"it's\"") == "a: it's\n");
  CHECK(roundtrip("a: \"it's \"") == "a: 'it''s '\n");
  CHECK(roundtrip("a: a#b") == "a: a#b\n");
  CHECK(roundtrip("a: http://x:80/y") == "a: http://x:80/y\n");
}

TEST_CASE("emitter escapes what is not printable") {
  CHECK(roundtrip("a: \"tab\\there\"") == "a: \"tab\\there\"\n");
  CHECK(roundtrip("a: \"emoji \\U0001F600\"") == "a: \"emoji \\U0001F600\"\n");
  CHECK(roundtrip("a: \"caf\\u00e9\"") == "a: café\n");
  CHECK(roundtrip("a: \"trail \\nx\"") == "a: \"trail \\nx\"\n");
  CHECK(emit(fluxop::yaml::Node::string("bad \xff byte")) == "bad \xEF\xBF\xBD byte\n");
}

TEST_CASE("emitter writes multi-line strings as literal blocks with chomping hints") {
  CHECK(roundtrip("a: \"l1\\nl2\\n\"") == "a: |\n  l1\n  l2\n");
  CHECK(roundtrip("a: \"l1\\nl2\"") == "a: |-\n  l1\n  l2\n");
  CHECK(roundtrip("a: \"keep\\n\\n\"\nb: 1") == "a: |+\n  keep\n\nb: 1\n");
  CHECK(roundtrip("a: \"  indented\\nfoo\"") == "a: |2-\n    indented\n  foo\n");
  CHECK(roundtrip("a: \"x\\n\\ny\"") == "a: |-\n  x\n\n  y\n");
  CHECK(roundtrip("- \"l1\\nl2\"") == "- |-\n  l1\n  l2\n");
}

TEST_CASE("emitter folds long scalars at 80 columns like yaml.v2") {
  std::string words =
      "This is a very long string with many words in it that should exceed eighty columns for "
      "sure when emitted";
  CHECK(roundtrip("g: " + words) ==
        "g: This is a very long string with many words in it that should exceed eighty columns\n"
        "  for sure when emitted\n");
  CHECK(roundtrip("x:\n  sq:\n  - " + words) ==
        "x:\n  sq:\n  - This is a very long string with many words in it that should exceed eighty "
        "columns\n    for sure when emitted\n");
  CHECK(roundtrip("d:\n  sq: \"" + words + ": yes '\"") ==
        "d:\n  sq: 'This is a very long string with many words in it that should exceed eighty\n"
        "    columns for sure when emitted: yes '''\n");
  CHECK(roundtrip("d:\n  dq: \"" + words + "\\tdouble\"") ==
        "d:\n  dq: \"This is a very long string with many words in it that should exceed eighty\n"
        "    columns for sure when emitted\\tdouble\"\n");
}

TEST_CASE("emitter canonicalises numbers, bools and timestamps as the JSON round trip does") {
  CHECK(roundtrip("a: 0777") == "a: 511\n");
  CHECK(roundtrip("a: 0x1F") == "a: 31\n");
  CHECK(roundtrip("a: 1_000") == "a: 1000\n");
  CHECK(roundtrip("a: 1.0") == "a: 1\n");
  CHECK(roundtrip("a: 1.5") == "a: 1.5\n");
  CHECK(roundtrip("a: 1234567.5") == "a: 1.2345675e+06\n");
  CHECK(roundtrip("a: 1e-7") == "a: 1e-07\n");
  CHECK(roundtrip("a: 1e21") == "a: 1e+21\n");
  CHECK(roundtrip("a: 1.5e10") == "a: 15000000000\n");
  CHECK(roundtrip("a: True") == "a: true\n");
  CHECK(roundtrip("a: yes") == "a: \"yes\"\n");
  CHECK(roundtrip("a: 2001-12-14") == "a: \"2001-12-14T00:00:00Z\"\n");
  CHECK(roundtrip("a: 2001-12-14t21:59:43.10-05:00") == "a: \"2001-12-14T21:59:43.1-05:00\"\n");
  CHECK(roundtrip("a: ~") == "a: null\n");
  CHECK(roundtrip("a:") == "a: null\n");
}

TEST_CASE("emitter lays out sequences and empty collections") {
  CHECK(roundtrip("a: [1, 2]") == "a:\n- 1\n- 2\n");
  CHECK(roundtrip("a: [[1], {b: c, a: d}]") == "a:\n- - 1\n- a: d\n  b: c\n");
  CHECK(roundtrip("a: {}\nb: []\nc: [{}]") == "a: {}\nb: []\nc:\n- {}\n");
  CHECK(roundtrip("- a\n- b: [x]") == "- a\n- b:\n  - x\n");
  CHECK(roundtrip("plain") == "plain\n");
  CHECK(emit(fluxop::yaml::Node()) == "null\n");
}

TEST_CASE("emit_stream separates documents like kustomize") {
  auto docs = fluxop::yaml::parse_documents("a: 1\n---\nb: 2\n", "s.yaml");
  CHECK(fluxop::yaml::emit_stream(docs) == "a: 1\n---\nb: 2\n");
}

TEST_CASE("key order stays stable for digit runs past 64 bits") {
  std::string once =
      roundtrip("'1234567890123456789012345x': 1\n'444': 2\n'99999999999999999999': 3\n");
  CHECK(once == "\"444\": 2\n\"99999999999999999999\": 3\n1234567890123456789012345x: 1\n");
  CHECK(roundtrip(once) == once);
}

TEST_CASE("floats out of range read as strings, as in Go") {
  CHECK(roundtrip("a: 1e4444") == "a: 1e4444\n");
  CHECK(roundtrip("a: !!float 1e4444") == "a: .inf\n");
  CHECK(roundtrip("a: 1e-4444") == "a: 0\n");
}

TEST_CASE("tagged infinities stay infinities (\".inf\" has an n, not an a)") {
  CHECK(roundtrip("a: !!float .inf") == "a: .inf\n");
  CHECK(roundtrip("a: !!float -.Inf") == "a: -.inf\n");
  CHECK(roundtrip("a: !!float .NaN") == "a: .nan\n");
  CHECK(roundtrip(roundtrip("a: !!float 1e4444")) == "a: .inf\n");
}

// Printed, each node is indented by its depth: a document nested N deep
// would take O(N^2) bytes (an 18 KB nested array became 324 MB of JSON).
TEST_CASE("printers refuse a document nested deeper than 100 levels") {
  using fluxop::yaml::Node;
  auto nested = [](std::size_t levels) {
    Node node = Node::sequence();
    for (std::size_t i = 1; i < levels; ++i) {
      Node outer = Node::sequence();
      outer.push_back(std::move(node));
      node = std::move(outer);
    }
    return node;
  };
  CHECK_NOTHROW((void)emit(nested(100)));
  CHECK_NOTHROW((void)fluxop::yaml::to_json(nested(100)));
  CHECK_THROWS_WITH_AS((void)emit(nested(101)), "nested deeper than 100 levels", fluxop::Error);
  CHECK_THROWS_WITH_AS((void)fluxop::yaml::to_json(nested(101)), "nested deeper than 100 levels",
                       fluxop::Error);
  CHECK_THROWS_WITH_AS((void)emit(nested(20000)), "nested deeper than 100 levels", fluxop::Error);
}
