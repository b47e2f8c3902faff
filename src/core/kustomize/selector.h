// Kubernetes label selectors in their string form ("app=web,tier in (a,b),!legacy"),
// as kustomize reads them to select resources by labels or annotations.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::kustomize {

struct Requirement {
  enum class Operator { Equals, NotEquals, In, NotIn, Exists, DoesNotExist, GreaterThan, LessThan };
  std::string key;
  Operator op = Operator::Exists;
  std::vector<std::string> values;  // one for Equals, NotEquals, GreaterThan, LessThan
};

// All requirements must hold; none selects everything.
using LabelSelector = std::vector<Requirement>;

// Parses requirements separated by commas: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
// `k notin (a)`, `k`, `!k`, `k>1`, `k<1`. Keys must be qualified names and
// values valid label values, as Kubernetes requires.
// Throws fluxop::Error naming the selector, e.g.
// `invalid selector "a in b": found "b", expected "("`.
LabelSelector parse_label_selector(std::string_view text);

// True when `labels` (a map of labels or annotations; null for none) meets
// every requirement.
bool matches(const LabelSelector& selector, const yaml::Node& labels);

}  // namespace fluxop::kustomize
