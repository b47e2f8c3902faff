#include "core/rfc3339.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>

namespace fluxop {

std::string utc_rfc3339(std::time_t seconds) {
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string now_rfc3339() { return utc_rfc3339(std::time(nullptr)); }

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& text) {
  std::tm utc{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &utc);
  if (!rest) return std::nullopt;
  if (*rest == '.')
    while (std::isdigit(static_cast<unsigned char>(*++rest))) {
    }
  long offset = 0;
  if (*rest == '+' || *rest == '-') {
    int hours = 0, minutes = 0;
    if (std::sscanf(rest + 1, "%2d:%2d", &hours, &minutes) != 2) return std::nullopt;
    offset = (*rest == '+' ? 1 : -1) * (hours * 3600L + minutes * 60L);
  } else if (*rest != 'Z' && *rest != 'z') {
    return std::nullopt;
  }
  // system_clock counts nanoseconds: it ends in 2262. Later is never, for us.
  constexpr std::time_t kLatest = 7'000'000'000;  // 2191
  return std::chrono::system_clock::from_time_t(std::min(timegm(&utc) - offset, kLatest));
}

}  // namespace fluxop
