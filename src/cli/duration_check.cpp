#include "cli/duration_check.h"

#include "core/duration.h"

namespace fluxop::cli {

CLI::Validator duration_check(const std::string& example) {
  return CLI::Validator(
      [example](const std::string& value) -> std::string {
        std::optional<std::chrono::nanoseconds> duration = parse_go_duration(value);
        if (duration && duration->count() >= 0) return "";
        return "'" + value + "' is not a duration such as " + example;
      },
      "DURATION");
}

std::chrono::seconds duration_flag(const std::string& value) {
  return std::chrono::duration_cast<std::chrono::seconds>(*parse_go_duration(value));
}

}  // namespace fluxop::cli
