#include "core/yaml/block_reader.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "../shared_distribution.h"
#include "core/error.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"
#include "describe_tree.h"

using fluxop::yaml::Node;
using fluxop::yaml::read_block_documents;

namespace {

constexpr std::size_t kNoNodeLimit = std::size_t{1} << 40;

// What the fast reader makes of `text`, or nullopt when it falls back.
std::optional<std::string> fast(std::string_view text) {
  auto documents = read_block_documents(text, kNoNodeLimit);
  if (!documents) return std::nullopt;
  return fluxop::testing::describe_documents(*documents);
}

std::string full(std::string_view text) {
  return fluxop::testing::describe_documents(
      fluxop::yaml::parse_documents_with_yaml_cpp(text, "t.yaml"));
}

// `text` is read by the fast reader, to what yaml-cpp reads.
void check_accepted(std::string_view text) {
  CAPTURE(text);
  auto read = fast(text);
  REQUIRE(read.has_value());
  CHECK(*read == full(text));
}

void check_falls_back(std::string_view text) {
  CAPTURE(text);
  CHECK_FALSE(read_block_documents(text, kNoNodeLimit).has_value());
}

struct Differential {
  std::size_t files = 0;
  std::size_t accepted = 0;
};

// parse_documents (the fast reader in front) and yaml-cpp alone agree on
// `text`: the same trees, the same emitted bytes, the same error.
bool check_same_as_yaml_cpp(const std::string& text, const std::string& path) {
  CAPTURE(path);
  std::optional<std::vector<Node>> reference;
  std::string reference_error;
  try {
    reference = fluxop::yaml::parse_documents_with_yaml_cpp(text, path);
  } catch (const fluxop::Error& e) {
    reference_error = e.what();
  }
  if (!reference) {
    CHECK_THROWS_WITH_AS(fluxop::yaml::parse_documents(text, path), reference_error.c_str(),
                         fluxop::Error);
    return false;
  }
  auto read = read_block_documents(text, kNoNodeLimit);
  if (!read) return false;
  CHECK(fluxop::testing::describe_documents(*read) ==
        fluxop::testing::describe_documents(*reference));
  CHECK(fluxop::yaml::emit_stream(*read) == fluxop::yaml::emit_stream(*reference));
  return true;
}

// Every .yaml file under `root`; files with the same content once.
std::vector<std::filesystem::path> yaml_files(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("block reader: the Flux distribution is read, as yaml-cpp reads it") {
  if (!fluxop::testing::have_shared_distribution()) return;
  std::set<std::string> seen;
  Differential flux, other;
  for (const auto& path : yaml_files(fluxop::testing::kSharedDistribution)) {
    std::string text = fluxop::yaml::read_file(path);
    if (!seen.insert(text).second) continue;
    bool is_flux_manifest = path.parent_path().parent_path().filename() == "flux";
    Differential& counts = is_flux_manifest ? flux : other;
    ++counts.files;
    bool accepted = check_same_as_yaml_cpp(text, path);
    counts.accepted += accepted ? 1 : 0;
    // Otherwise the speed-up is silently gone.
    if (is_flux_manifest) CHECK_MESSAGE(accepted, path << " fell back to yaml-cpp");
  }
  MESSAGE("Flux manifests read: " << flux.accepted << " of " << flux.files
                                  << "; other files: " << other.accepted << " of " << other.files);
  CHECK(flux.files > 0);
}

TEST_CASE("block reader: the repository's YAML test inputs read as yaml-cpp reads them") {
  Differential counts;
  for (const auto& path : yaml_files(FLUXOPCTL_TEST_DATA)) {
    ++counts.files;
    counts.accepted += check_same_as_yaml_cpp(fluxop::yaml::read_file(path), path) ? 1 : 0;
  }
  MESSAGE("test inputs read by the block reader: " << counts.accepted << " of " << counts.files);
  CHECK(counts.accepted * 2 > counts.files);
}

TEST_CASE("block reader: maps, sequences and their nesting") {
  check_accepted("a: 1\nb:\n  c: x\n  d:\n    e: y\nf: z\n");
  check_accepted("- a\n- b\n-\n  - c\n  - d\n");
  check_accepted("items:\n- name: a\n  value: 1\n- name: b\n  list:\n  - x\n  - y\n  other: 2\n");
  check_accepted("a:\n  - 1\n  - 2\nb: 3\n");
  check_accepted("- a: 1\n  b:\n    c: 2\n-    d: 3\n     e: 4\n");
  check_accepted("key with spaces: v\n\"quoted key\": 1\n'single': 2\nc : 3\n\"d\"  :  4\n");
  check_accepted("é: x\nü: 'ü'\n");
  check_accepted("a:\n  b:\n    c:\nd: 1\n");
}

TEST_CASE("block reader: empty values are nulls marked at the next token") {
  check_accepted("a:\nb: 1\n");
  check_accepted("a:\n  # c\n");
  check_accepted("a:\n  b:\nc: 1\n");
  check_accepted("- a\n-\n- b\n");
  check_accepted("a:\n  -\n  - x\n  -\n");
  check_accepted("a:\nnull : 1\n");  // the null's text starts "null": its form too
  check_accepted("a:\n~ : 1\n");
  check_accepted("x:\n  a:\n---\nb:\n...\nc:\n");
}

TEST_CASE("block reader: plain scalars resolve as yaml-cpp's do") {
  check_accepted(
      "s: hello world\ni: 42\nh: 0x1F\nf: 1.5\nb: true\nB: False\nn: null\nt: ~\nN: NULL\n"
      "ts: 2001-12-14\nv: v1.2.3\nneg: -1\ndash: -x\nurl: http://example.com:80/a#b\n"
      "c: a:b\nd: a, b [c] {d}\ne: value # comment\nf2: x#y\ng: trailing   \n");
  check_accepted("~: a\nb: null\n");
  check_accepted("- null\n- ~\n- Null\n- 1\n- \"1\"\n");
  check_accepted("1: a\ntrue: b\n");
}

TEST_CASE("block reader: plain scalars over lines fold as yaml-cpp folds them") {
  check_accepted("a: b\n  c  \n    d\n\n  e\n   \n  f\ng: x\n  y\n");
  check_accepted("- a\n  b\n- c:  d\n    e\n  f: g\n");
  check_accepted("a: b\n  - c\n  [d]\n  {e}\n  'f'\n");
  check_accepted("a: 1\n  2\nb: null\n  x\nc: true\n  false\n");
  check_accepted("- message: only when spec.x\n    is set to 'Always'\n  rule: x\n");
}

TEST_CASE("block reader: quoted scalars over lines fold as yaml-cpp folds them") {
  check_accepted("a: 'b  \n  c'\nd: '''x'' is\n\n   y'\n");
  check_accepted("- \"b\\t \n   c\"\n- x\n");
  check_accepted("- rule: 'a || b\n    == ''c'''\n");
}

TEST_CASE("block reader: quoted scalars on one line") {
  check_accepted("a: 'it''s'\nb: \"x \\\" \\\\ \\/ \\n \\t \\r \\0 \\a \\b \\e \\f \\v\"\n");
  check_accepted("a: ''\nb: \"\"\nc: 'null'\nd: \"# not a comment\" # comment\n");
  check_accepted("- 'a: b'\n- \"c: d\"\n");
}

TEST_CASE("block reader: literal and folded block scalars") {
  check_accepted("a: |\n  x\n   y\n\n  z\n\n\nb: 1\n");
  check_accepted("a: |-\n  x\n\nb: |+\n  x\n\nc: |\n  x\n");
  check_accepted("a: |\n  x\n    \n  y\n   \nb: 1\n");
  check_accepted("a: >\n  a\n  b\n\n  c\n\n\n  d\nf: >-\n  a\n  b\n");
  check_accepted("- |\n x\n- >-\n a\n b\n- a: |\n    y\n  b: 2\n");
  check_accepted("a: | # comment\n  x\n---\nb: |\n  # not a comment\n");
  check_accepted("a: |\n  x\n...\n");
}

TEST_CASE("block reader: empty flow collections") {
  check_accepted("a: {}\nb: []\nc: {  } # c\nd:\n- {}\n- []\n");
}

TEST_CASE("block reader: documents, markers and comments") {
  check_accepted("");
  check_accepted("# only a comment\n");
  check_accepted("---\n");
  check_accepted("---\n---\n");
  check_accepted("a: 1\n---\n");
  check_accepted("a: 1\n...\n");
  check_accepted("a: 1\n...\n---\n...\n");
  check_accepted("...\n");
  check_accepted("--- # c\na: 1\n... # d\n");
  check_accepted("a: 1\n...\n...\nb: 2\n");
  check_accepted("# head\n\na: b   # c\n    # indented comment\n# c\nd: e\n");
}

TEST_CASE("block reader: falls back on what it does not read") {
  for (std::string_view text : {
           "a: &x 1\nb: *x\n",        // anchors, aliases
           "a: !!str 1\n",            // tags
           "%YAML 1.2\n---\na: 1\n",  // directives
           "a: [1, 2]\n",             // flow collections
           "a: {b: 1}\n",             //
           "{a: 1}\n",                //
           "? a\n: b\n",              // complex keys
           "a:\n  <<: {b: 1}\n",      // merge keys
           "a:\n  b\n",               // a scalar alone on its line
           "a: b\n  # c\n  d\n",      // comments in plain scalars
           "a: b\n  c # d\n",         //
           "a: b\n  c: d\n",          //
           "'a\n  b': c\n",           // keys over lines
           "a: 'b\nc'\n",             // quoted scalars less indented
           "a: 'b\n",                 // quoted scalars never closed
           "a: \"b\\\n  c\"\n",       // escaped line breaks
           "a: \"\\x41\"\n",          // escapes other than one character
           "a: \"\\u00e9\"\n",        //
           "a: \"\\N\"\n",            //
           "a:\tb\n",                 // tabs
           "a: b\r\n",                // CR
           "\xEF\xBB\xBF"
           "a: b\n",                  // BOM
           "a: \xC2\x85\n",           // NEL
           "a: 1\na: 2\n",            // duplicate keys (an error)
           "a: b: c\n",               // errors
           "a:\n  - x\n  b: 1\n",     //
           "- a\nb: 1\n",             //
           "  a: 1\n",                // an indented root
           "a\n",                     // a scalar root
           "- - a\n",                 // compact nested sequences
           "a: |2\n  x\n",            // an explicit indentation
           "a: >+\n  x\n\nb: 1\n",    // folded, kept
           "a: >\n  x\n    y\n",      // folded, indented deeper
           "a: |\n\n  x\n",           // leading empty lines
           "a: |\n",                  // empty block scalars
           "a: |\nb: 1\n",            //
           "a: |\n  x",               // the end inside a block scalar
           "a: |\n  x\n# c\nb: 1\n",  // a comment ending a block scalar
           "---a: 1\n",               // what only begins like a marker
           "a:",                      // the end marked in a line
           "a:\n  c:\n ",             //
           "a:\n\n---\n---",          // null documents marked alike (an error)
           "--- a\n",                 // content after a marker
           "a: \"x\" y\n",            // content after a quoted scalar
           "a: ,\n",                  // indicators
           "a: @b\n",                 //
           "a: `b`\n",                //
           ": a\n",                   //
       }) {
    check_falls_back(text);
  }
}

TEST_CASE("block reader: falls back before its node and nesting limits") {
  CHECK_FALSE(read_block_documents("a: 1\nb: 2\n", 3).has_value());
  CHECK(read_block_documents("a: 1\nb: 2\n", 5).has_value());
  std::string deep;
  for (int i = 0; i < 150; ++i) deep += std::string(static_cast<std::size_t>(i) * 2, ' ') + "a:\n";
  CHECK_FALSE(read_block_documents(deep, kNoNodeLimit).has_value());
  CHECK(fluxop::yaml::parse_documents(deep, "deep.yaml").size() == 1);
}
