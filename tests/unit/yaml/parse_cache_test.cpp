#include "core/yaml/parse_cache.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "../temp_dir.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/file.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"

namespace {

using fluxop::yaml::Node;
using fluxop::yaml::ParseCache;
namespace fs = std::filesystem;

const fluxop::CacheSeal kSeal(std::string(32, 'k'));

// A text big enough to be cached, with every kind of node.
std::string big_text() {
  std::string text;
  for (int i = 0; i < 400; ++i) {
    text += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm" + std::to_string(i) +
            "}\ndata:\n  s: '1000'\n  i: 0x1F\n  f: 1.5\n  b: true\n  n: ~\n  e:\n"
            "  t: 2001-12-14\n  l: [1, {k: v}, []]\n  m: |\n    multi\n    line\n";
  }
  return text;
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("the encoding keeps everything the parser produces") {
  auto docs = fluxop::yaml::parse_documents(big_text(), "big.yaml");
  auto decoded = fluxop::yaml::decode_documents(fluxop::yaml::encode_documents(docs));
  REQUIRE(decoded.has_value());
  REQUIRE(decoded->size() == docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    CHECK((*decoded)[i] == docs[i]);
    CHECK(fluxop::yaml::emit((*decoded)[i]) == fluxop::yaml::emit(docs[i]));
  }
  const Node& n = (*decoded)[3];
  CHECK(n.find({"data", "n"})->null_form() == "~");
  CHECK(n.find({"data", "s"})->style() == fluxop::yaml::Style::SingleQuoted);
  CHECK(n.find({"data", "m"})->mark.line == docs[3].find({"data", "m"})->mark.line);
}

TEST_CASE("damaged encodings are refused, never read past their end") {
  std::string data = fluxop::yaml::encode_documents(
      fluxop::yaml::parse_documents("a: [1, {b: c}]\n---\nd: e\n", "t.yaml"));
  for (std::size_t cut = 0; cut < data.size(); ++cut) {
    CHECK_FALSE(fluxop::yaml::decode_documents(data.substr(0, cut)).has_value());
  }
  CHECK_FALSE(fluxop::yaml::decode_documents(data + "x").has_value());
  CHECK_FALSE(fluxop::yaml::decode_documents("not a cache entry").has_value());
}

TEST_CASE("an entry is used only for its source text, whole and unchanged") {
  std::string text = "a: [1, {b: source-controller}]\n---\nd: e\n";
  auto docs = fluxop::yaml::parse_documents(text, "t.yaml");
  std::string digest = fluxop::sha256_digest(text);
  std::string entry = fluxop::yaml::encode_entry(digest, docs, kSeal);
  REQUIRE(fluxop::yaml::decode_entry(entry, digest, kSeal) == docs);
  CHECK_FALSE(fluxop::yaml::decode_entry(entry, fluxop::sha256_digest("other"), kSeal).has_value());
  // Every byte changed in turn, the length kept: the name of a controller
  // renamed in place read as objects the source never had.
  for (std::size_t i = 0; i < entry.size(); ++i) {
    std::string changed = entry;
    changed[i] = static_cast<char>(changed[i] ^ 0x20);
    CHECK_FALSE(fluxop::yaml::decode_entry(changed, digest, kSeal).has_value());
  }
  for (std::size_t cut = 0; cut < entry.size(); ++cut) {
    CHECK_FALSE(fluxop::yaml::decode_entry(entry.substr(0, cut), digest, kSeal).has_value());
  }
}

TEST_CASE("the cache stores big texts by digest and reads them back") {
  fluxop::testing::TempDir dir;
  ParseCache cache(dir.path() / "parsed", &kSeal);
  std::string text = big_text();
  auto first = cache.parse_documents(text, "big.yaml");
  // Read twice before commit(): the second comes from the pending entry.
  CHECK(cache.parse_documents(text, "again.yaml") == first);
  CHECK(entries(dir.path() / "parsed").empty());  // not before commit()
  cache.commit();
  auto stored = entries(dir.path() / "parsed");
  REQUIRE(stored.size() == 1);
  CHECK(stored[0].filename().string().size() == 64);
  auto second = cache.parse_documents(text, "big.yaml");
  CHECK(first == second);

  // A damaged entry is parsed anew and rewritten.
  std::ofstream(stored[0], std::ios::trunc) << "garbage";
  CHECK(cache.parse_documents(text, "big.yaml") == first);
  cache.commit();
  CHECK(fs::file_size(stored[0]) > 100);

  // So is one changed in place, its length kept.
  std::string data = fluxop::read_input_file(stored[0].string());
  std::size_t at = data.find("cm399");
  REQUIRE(at != std::string::npos);
  data.replace(at, 5, "cmXXX");
  std::ofstream(stored[0], std::ios::trunc | std::ios::binary) << data;
  CHECK(cache.parse_documents(text, "big.yaml") == first);
  cache.commit();
  CHECK(fluxop::read_input_file(stored[0].string()).find("cmXXX") == std::string::npos);
}

TEST_CASE("what a failed run parsed is never written") {
  fluxop::testing::TempDir dir;
  ParseCache cache(dir.path() / "parsed", &kSeal);
  (void)cache.parse_documents(big_text(), "big.yaml");
  cache.discard();
  cache.commit();
  CHECK(entries(dir.path() / "parsed").empty());
}

TEST_CASE("small texts and parse errors are not cached") {
  fluxop::testing::TempDir dir;
  ParseCache cache(dir.path() / "parsed", &kSeal);
  CHECK(cache.parse_documents("a: 1\n", "small.yaml").size() == 1);
  CHECK(entries(dir.path() / "parsed").empty());
  std::string bad = big_text() + "x: [\n";
  CHECK_THROWS_AS(cache.parse_documents(bad, "bad.yaml"), fluxop::Error);
  cache.commit();
  CHECK(entries(dir.path() / "parsed").empty());
  ParseCache disabled({}, &kSeal);
  CHECK(disabled.parse_documents(big_text(), "big.yaml").size() == 400);
}

// Whoever can write only the cache cannot change what a build reads: an
// entry planted with every digest right, but sealed with another key (an
// attacker's, another user's, a cache restored from elsewhere), is parsed anew.
TEST_CASE("an entry the key did not seal is never used, whatever its digests") {
  std::string text = big_text();
  std::string digest = fluxop::sha256_digest(text);
  auto docs = fluxop::yaml::parse_documents(text, "t.yaml");
  auto forged = fluxop::yaml::parse_documents(
      std::string(text).replace(text.find("cm399"), 5, "cmXXX"), "t.yaml");
  const fluxop::CacheSeal other(std::string(32, 'o'));
  CHECK_FALSE(
      fluxop::yaml::decode_entry(fluxop::yaml::encode_entry(digest, forged, other), digest, kSeal)
          .has_value());
  // No key: nothing seals, nothing opens.
  const fluxop::CacheSeal none;
  CHECK_FALSE(
      fluxop::yaml::decode_entry(fluxop::yaml::encode_entry(digest, docs, none), digest, none)
          .has_value());

  fluxop::testing::TempDir dir;
  ParseCache cache(dir.path() / "parsed", &kSeal);
  (void)cache.parse_documents(text, "big.yaml");
  cache.commit();
  auto stored = entries(dir.path() / "parsed");
  REQUIRE(stored.size() == 1);
  std::ofstream(stored[0], std::ios::trunc | std::ios::binary)
      << fluxop::yaml::encode_entry(digest, forged, other);
  CHECK(cache.parse_documents(text, "big.yaml") == docs);
}

TEST_CASE("the user's parse cache is parsed/ under fluxopctl's cache root") {
  CHECK(fluxop::yaml::user_parse_cache("/xdg/fluxopctl").dir() == "/xdg/fluxopctl/parsed");
  // No cache root: no cache.
  CHECK(fluxop::yaml::user_parse_cache("").dir().empty());
}
