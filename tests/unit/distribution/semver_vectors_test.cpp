// Checks version parsing, ordering, constraint matching and resolution
// against the answers of Masterminds semver v3.5.0, the library the Flux
// Operator uses, recorded in tests/distribution/semver/vectors.tsv (see the
// generate script beside it).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../memory_dir.h"
#include "core/distribution/constraint.h"
#include "core/distribution/resolve.h"
#include "core/error.h"

namespace fluxop::distribution {
namespace {

const std::string kDir = FLUXOPCTL_TEST_DATA "/distribution/semver";

std::vector<std::vector<std::string>> read_rows(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) fields.push_back(cell);
    if (line.ends_with('\t')) fields.emplace_back();
    rows.push_back(fields);
  }
  return rows;
}

// The fourth section of inputs.txt: the directory names resolve rows use.
std::vector<std::string> distribution_names() {
  std::ifstream in(kDir + "/inputs.txt");
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  std::size_t start = 0;
  for (int section = 0; section < 3; ++section) start = text.find("\n\n", start) + 2;
  std::vector<std::string> names;
  std::istringstream lines(text.substr(start));
  for (std::string line; std::getline(lines, line);)
    names.push_back(line.substr(1, line.size() - 2));
  return names;
}

Version version_of(const std::string& text) {
  auto version = parse_version(text);
  REQUIRE_MESSAGE(version, text);
  return *version;
}

TEST_CASE("semver: the library's answers") {
  auto rows = read_rows(kDir + "/vectors.tsv");
  std::map<std::string, int> counts;
  for (const auto& row : rows) {
    REQUIRE(row.size() >= 3);
    const std::string& kind = row[0];
    ++counts[kind];
    std::string where = "row: " + row[0] + " <" + row[1] + "> <" + row[2] + ">";
    if (kind == "parse") {
      auto version = parse_version(row[1]);
      CHECK_MESSAGE((version ? to_string(*version) : "error") == row[2], where);
    } else if (kind == "compare") {
      CHECK_MESSAGE(compare(version_of(row[1]), version_of(row[2])) == std::stoi(row[3]), where);
    } else if (kind == "check") {
      auto constraint = Constraint::parse(row[1]);
      if (row[3] == "error") {
        CHECK_MESSAGE(!constraint, where);
      } else {
        REQUIRE_MESSAGE(constraint, where);
        CHECK_MESSAGE(constraint->matches(version_of(row[2])) == (row[3] == "true"), where);
      }
    }
  }
  CHECK(counts["parse"] >= 25);
  CHECK(counts["compare"] >= 600);
  CHECK(counts["check"] >= 2400);
}

TEST_CASE("semver: resolution picks what the operator picks") {
  // A version directory is there when a file is.
  testing::MemoryDir dir;
  for (const std::string& name : distribution_names()) dir.write("flux/" + name + "/rbac.yaml", "");
  Distribution distribution = directory_distribution(dir.str(), dir.files());
  int resolved = 0;
  for (const auto& row : read_rows(kDir + "/vectors.tsv")) {
    if (row[0] != "resolve") continue;
    std::string got;
    try {
      got = resolve_version(distribution, row[1]).original;
      ++resolved;
    } catch (const Error& e) {
      got = std::string(e.what()).find("invalid semver constraint") != std::string::npos ? "error"
                                                                                         : "none";
    }
    CHECK_MESSAGE(got == row[2], "constraint <" << row[1] << ">");
  }
  CHECK(resolved >= 60);
}

}  // namespace
}  // namespace fluxop::distribution
