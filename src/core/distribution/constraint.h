// Version constraints with the grammar and matching rules of the library the
// Flux Operator matches .spec.distribution.version with (Masterminds semver
// v3): "2.x", "~2.7.0", "^2.6", ">=2.6.0 <2.9.0", ">= 2.6, < 2.9",
// "2.5 - 2.7", alternatives joined by "||". Its quirks are kept on purpose
// ("^*" matches only 0.0.z, "<=*" only 0.y.z): a FluxInstance must resolve to
// the same Flux version here as in the operator.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/distribution/version.h"

namespace fluxop::distribution {

class Constraint {
 public:
  // nullopt when the text is not a constraint.
  static std::optional<Constraint> parse(std::string_view text);

  // Pre-release versions match only alternatives that name a pre-release.
  bool matches(const Version& version) const;

  enum class Op { Equal, NotEqual, Greater, Less, GreaterEqual, LessEqual, Tilde, Caret };

  // One comparison, e.g. ">=2.6" or "2.8.x".
  struct Term {
    Op op = Op::Equal;
    Version bound;            // wildcard segments read as 0
    bool wildcard = false;    // a segment is x, X, * or missing
    bool minor_wild = false;  // "2", "2.x": any minor
    bool patch_wild = false;  // "2.8", "2.8.x": any patch
  };

 private:
  // Terms that must all hold.
  struct Group {
    std::vector<Term> terms;
    bool allows_prerelease = false;  // a term's bound is a pre-release
  };

  std::vector<Group> groups_;
};

}  // namespace fluxop::distribution
