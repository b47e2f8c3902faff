#include "core/wait_status.h"

#include <cstdio>

#include "core/display.h"

namespace fluxop {

using std::chrono::duration_cast;
using std::chrono::seconds;

std::string elapsed_text(seconds elapsed) {
  long long total = elapsed.count() < 0 ? 0 : elapsed.count();
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%lldh%02lldm%02llds", total / 3600, total / 60 % 60,
                  total % 60);
  } else if (total >= 60) {
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%llds", total);
  }
  return text;
}

WaitReporter::WaitReporter(StatusSink& sink, Clock clock) : sink_(sink), clock_(std::move(clock)) {}

void WaitReporter::waiting(std::string_view what, std::string_view pending,
                           std::string_view cause) {
  auto now = clock_();
  if (!started_ || what != what_) {
    done();
    started_ = now;
    what_ = what;
    last_line_ = now;
    last_cause_.clear();
  }
  std::string line =
      "[" + elapsed_text(duration_cast<seconds>(now - *started_)) + "] waiting for " + what_;
  if (!pending.empty()) line += ": " + std::string(pending);
  if (!cause.empty()) line += ": " + std::string(cause);
  if (sink_.terminal()) {
    // One row, the cursor's column left free: the cut keeps the elapsed time
    // and what is waited for, and falls after the redaction.
    std::size_t width = sink_.columns() > 1 ? sink_.columns() - 1 : 1;
    sink_.show(printable_within(line, width));
    shown_ = true;
    return;
  }
  bool new_cause = !cause.empty() && cause != last_cause_;
  if (!new_cause && now - last_line_ < kLogInterval) return;
  sink_.show(line);
  last_line_ = now;
  if (!cause.empty()) last_cause_ = cause;
}

void WaitReporter::done() {
  if (shown_) sink_.clear();
  shown_ = false;
  started_.reset();
}

}  // namespace fluxop
