// Our own manifests from share/manifests/, compiled into the binary.
#pragma once

#include <string_view>

namespace fluxop {

// The text of share/manifests/<name>; throws fluxop::Error when there is none.
std::string_view share_manifest(std::string_view name);

}  // namespace fluxop
