// The labels fluxopctl reads and writes on the objects of an installation,
// each spelled once.
#pragma once

#include <string_view>

namespace fluxop {

// On every object an instance installs, naming the instance.
inline constexpr std::string_view kOwnerNameLabel = "fluxcd.controlplane.io/name";
inline constexpr std::string_view kOwnerNamespaceLabel = "fluxcd.controlplane.io/namespace";

// The Flux version on its objects and namespace (Kubernetes' recommended
// label, which Flux's manifests and the operator set).
inline constexpr std::string_view kVersionLabel = "app.kubernetes.io/version";

}  // namespace fluxop
