#include "core/distribution/resolve.h"

#include <string>

#include "core/error.h"

namespace fluxop::distribution {
namespace {

// "v2.2.3, v2.3.0, ..., v2.9.4": the last version of each major.minor.
std::string newest_of_each_minor(const std::vector<Version>& ascending) {
  std::string out;
  for (std::size_t i = 0; i < ascending.size(); ++i) {
    const Version& v = ascending[i];
    bool last_of_minor = i + 1 == ascending.size() || ascending[i + 1].major != v.major ||
                         ascending[i + 1].minor != v.minor;
    if (!last_of_minor) continue;
    if (!out.empty()) out += ", ";
    out += v.original;
  }
  return out;
}

}  // namespace

std::vector<Version> matching_versions(const Distribution& distribution,
                                       std::string_view constraint, std::string_view field) {
  auto parsed = Constraint::parse(constraint);
  if (!parsed) {
    throw Error(std::string(field) + ": invalid semver constraint \"" + std::string(constraint) +
                "\"");
  }
  std::vector<Version> matching;
  for (const Version& version : distribution.versions()) {
    if (parsed->matches(version)) matching.push_back(version);
  }
  if (!matching.empty()) return matching;
  const std::vector<Version>& versions = distribution.versions();
  std::string offered = versions.empty()
                            ? "it has no version directories"
                            : "newest of each minor: " + newest_of_each_minor(versions);
  throw Error(std::string(field) + ": no Flux version in " + distribution.root() +
              "/flux matches \"" + std::string(constraint) + "\" (" + offered + ")");
}

Version resolve_version(const Distribution& distribution, std::string_view constraint,
                        std::string_view field) {
  std::vector<Version> matching = matching_versions(distribution, constraint, field);
  // Ascending, equal versions in name order: the first of the highest.
  for (const Version& version : matching) {
    if (compare(version, matching.back()) == 0) return version;
  }
  return matching.back();
}

}  // namespace fluxop::distribution
