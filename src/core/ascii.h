// ASCII text as protocols and Kubernetes compare it: case folded on ASCII
// letters only, whatever the locale.
#pragma once

#include <string>
#include <string_view>

namespace fluxop {

// `text` with ASCII letters in lower case (header names, hosts, kinds).
std::string lowercase(std::string_view text);

}  // namespace fluxop
