// The Kubernetes versions a Flux version supports. The Flux distribution
// carries no such range, so fluxopctl keeps its own table, one constraint per
// Flux minor (share/manifests/kubernetes-versions.yaml), and a distribution
// may replace entries with a file of the same name at its root: a newer Flux
// than this build knows, or a vendor's own support policy.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/distribution/constraint.h"
#include "core/distribution/distribution.h"
#include "core/distribution/version.h"

namespace fluxop::distribution {

inline constexpr std::string_view kKubernetesVersionsFile = "kubernetes-versions.yaml";

struct KubernetesRange {
  std::string text;  // the constraint as written, ">=1.33.0-0"
  Constraint constraint;
  std::string source;  // the file it was read from, as messages name it
};

// The constraints by Flux minor ("2.9") in a kubernetes-versions.yaml's
// `text`; throws fluxop::Error naming `path` and the entry when a key is not
// MAJOR.MINOR or a value not a constraint.
std::map<std::string, KubernetesRange> read_kubernetes_ranges(std::string_view text,
                                                              const std::string& path);

// The range of `flux`'s minor: the distribution's entry, else fluxopctl's;
// nullopt when neither has one.
std::optional<KubernetesRange> kubernetes_range(const Distribution& distribution,
                                                const Version& flux);

}  // namespace fluxop::distribution
