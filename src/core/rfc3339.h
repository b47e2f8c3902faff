// RFC 3339 times, written and read.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>

namespace fluxop {

// "2026-11-22T07:37:16Z".
std::string utc_rfc3339(std::time_t seconds);
// Now, so written (a condition's lastTransitionTime, a history entry's time).
std::string now_rfc3339();

// RFC 3339 as Kubernetes and Sigstore write it: "2026-11-22T08:00:00Z",
// fractions (dropped) and offsets allowed; nullopt when malformed. Times
// after 2191 are taken as 2191 (system_clock ends in 2262).
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& text);

}  // namespace fluxop
