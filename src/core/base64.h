// Base64 (RFC 4648, standard alphabet, padded), for HTTP Basic credentials
// and Docker config `auth` entries.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fluxop {

std::string base64_encode(std::string_view data);

// nullopt when `text` is not padded base64 (whitespace is not skipped).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace fluxop
