// Go's time.Duration in text: how upstream reads .spec.sync.interval and
// writes it into the generated objects, how the flags read their durations
// and how messages write them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace fluxop {

// Parses a duration as Go's time.ParseDuration does, for the unsigned forms
// ("1m", "1.5h", "2h45m30.5s", units ns, us, µs, ms, s, m, h). nullopt when
// it is malformed or beyond Go's range (about 292 years).
std::optional<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

// Writes a duration as Go's Duration.String does: "1m0s", "1h30m0s", "1.5s",
// "500ms", "0s".
std::string format_go_duration(std::chrono::nanoseconds duration);

}  // namespace fluxop
