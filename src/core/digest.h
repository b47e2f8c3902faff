// Content digests (SHA-256 through OpenSSL's libcrypto).
#pragma once

#include <string>
#include <string_view>

namespace fluxop {

// "sha256:<64 lowercase hex digits>" of `data`.
std::string sha256_digest(std::string_view data);

}  // namespace fluxop
