#include "cli/request_timeout_flag.h"

#include "cli/cluster_flags.h"
#include "cli/duration_check.h"
#include "core/duration.h"

namespace fluxop::cli {

void add_request_timeout_flag(CLI::App& app) {
  app.add_option("--request-timeout",
                 "The longest one request to a registry or the API server takes, its retries "
                 "included (0: no bound; a transfer slower than 1 KiB/s for 30s still fails)")
      ->check(duration_check("30s"))
      ->option_text("DURATION (default 30s)");
}

void add_request_timeout_flag(CLI::App& command, std::chrono::milliseconds& timeout) {
  // Validators run in order: the value is a duration by now. Rounded up, so
  // that a bound below a millisecond is not "none".
  global_option(command, "--request-timeout").each([&timeout](const std::string& value) {
    timeout = std::chrono::ceil<std::chrono::milliseconds>(*parse_go_duration(value));
  });
}

}  // namespace fluxop::cli
