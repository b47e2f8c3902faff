// Reading RFC 3339 times (writing them: utc_rfc3339 in file.h).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace fluxop {

// RFC 3339 as Kubernetes and Sigstore write it: "2026-11-22T08:00:00Z",
// fractions (dropped) and offsets allowed; nullopt when malformed. Times
// after 2191 are taken as 2191 (system_clock ends in 2262).
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& text);

}  // namespace fluxop
