// Semantic versions as the Flux Operator reads them (Masterminds semver v3,
// in its default coercing mode): "v2.7.1", "2.7", "2.8.0-rc.1+build.5".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fluxop::distribution {

struct Version {
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  std::uint64_t patch = 0;
  std::string prerelease;  // without the '-'
  std::string metadata;    // without the '+'; ignored by comparisons
  std::string original;    // the text parsed, e.g. a directory name "v2.7.1"
};

// Accepts an optional lowercase 'v', one to three numeric segments (leading
// zeros allowed, missing ones are 0), a pre-release and build metadata made
// of dot-separated [0-9A-Za-z-] identifiers. Numeric pre-release identifiers
// must not have leading zeros; at most 256 characters. nullopt otherwise.
std::optional<Version> parse_version(std::string_view text);

// [0-9A-Za-z-]: a character of a pre-release or metadata identifier.
bool is_identifier_char(char c);

// Semver precedence: -1, 0 or 1. Pre-releases sort before their release;
// metadata is ignored.
int compare(const Version& a, const Version& b);

// Orders pre-release strings identifier by identifier; "" sorts first.
int compare_prerelease(std::string_view a, std::string_view b);

// "2.7.1-rc.1+meta": the canonical form, without any 'v'.
std::string to_string(const Version& version);

}  // namespace fluxop::distribution
