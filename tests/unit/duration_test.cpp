#include "core/duration.h"

#include <doctest/doctest.h>

#include <string>

namespace fluxop {
namespace {

using std::chrono::nanoseconds;

// Parsed, then written back as Go's Duration.String writes it.
std::string go_form(std::string_view text) {
  auto parsed = parse_go_duration(text);
  REQUIRE_MESSAGE(parsed.has_value(), text);
  return format_go_duration(*parsed);
}

TEST_CASE("durations are written back as Go writes them") {
  CHECK(go_form("1m") == "1m0s");
  CHECK(go_form("10m") == "10m0s");
  CHECK(go_form("1h") == "1h0m0s");
  CHECK(go_form("90s") == "1m30s");
  CHECK(go_form("1h30m") == "1h30m0s");
  CHECK(go_form("1.5h") == "1h30m0s");
  CHECK(go_form(".5m") == "30s");
  CHECK(go_form("2h45m30.5s") == "2h45m30.5s");
  CHECK(go_form("36h") == "36h0m0s");
  CHECK(go_form("500ms") == "500ms");
  CHECK(go_form("1500ms") == "1.5s");
  CHECK(go_form("0.5s") == "500ms");
  CHECK(go_form("1.25ms") == "1.25ms");
  CHECK(go_form("1us") == "1\u00b5s");
  CHECK(go_form("1500ns") == "1.5\u00b5s");
  CHECK(go_form("7ns") == "7ns");
  CHECK(go_form("0") == "0s");
  CHECK(go_form("0m") == "0s");
  CHECK(go_form("1m1m") == "2m0s");
}

TEST_CASE("durations parse to nanoseconds") {
  CHECK(parse_go_duration("1m") == nanoseconds{60'000'000'000});
  CHECK(parse_go_duration("1.1s") == nanoseconds{1'100'000'000});
  // Fraction digits past what fits are ignored, as Go does.
  CHECK(parse_go_duration("1.00000000000000000000001s") == nanoseconds{1'000'000'000});
  CHECK(parse_go_duration("2562047h47m16.854775807s") == nanoseconds{9'223'372'036'854'775'807});
}

TEST_CASE("malformed or out-of-range durations are refused") {
  for (std::string_view text :
       {"", "1", "1.5", "m", ".m", "1d", "-1m", "+1m", "1m ", " 1m", "1h-5m", "2562048h",
        "9223372036854775808ns", "99999999999999999999s"}) {
    CHECK_MESSAGE(!parse_go_duration(text).has_value(), text);
  }
}

TEST_CASE("negative durations are written with a sign") {
  CHECK(format_go_duration(nanoseconds{-1'500'000'000}) == "-1.5s");
}

}  // namespace
}  // namespace fluxop
