// kustomize's default output order ("legacy"): by kind priority, then by
// group/version/kind, then namespace and name.
#pragma once

#include <span>
#include <string_view>

#include "core/kustomize/resource.h"

namespace fluxop::kustomize {

// A kind's place by two priority lists, as kustomize and Flux's apply order
// use them: the kinds of `first` rank below zero in list order, those of
// `last` above zero, any other kind zero.
int kind_rank(std::string_view kind, std::span<const std::string_view> first,
              std::span<const std::string_view> last);

void sort_legacy(ResourceList& resources);

}  // namespace fluxop::kustomize
