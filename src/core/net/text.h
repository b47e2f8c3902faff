// Text helpers of the HTTP layer, shared by the client and the proxy
// decision.
#pragma once

#include <string>
#include <string_view>

namespace fluxop::net {

// `text` without the spaces, tabs and line ends around it (a header's value,
// a list's entry).
std::string_view trim(std::string_view text);

}  // namespace fluxop::net
