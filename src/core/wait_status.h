// What a wait shows while it goes on (an apply's rollout, a delete's
// finalizers, `wait` for Ready): without it, a wait printed its cause once
// and then nothing until its timeout, minutes later, and looked hung.
//
// The waits call WaitStatus at each poll; WaitReporter decides what the
// user sees, on a StatusSink: on a terminal, one status line (the elapsed
// time, what is pending, the cause) redrawn in place and cleared when the
// wait ends; in a log (CI), a line when the cause changes and at least every
// 30 s, each with the elapsed time.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace fluxop {

// What the waits call.
class WaitStatus {
 public:
  virtual ~WaitStatus() = default;
  // At each poll of the wait for `what` ("the components to roll out"):
  // what is pending ("2 of 15 objects: Deployment/flux-system/x (...)") and
  // why, as far as known (empty otherwise). Another `what` is another wait.
  virtual void waiting(std::string_view what, std::string_view pending, std::string_view cause) = 0;
  // The wait ended, however.
  virtual void done() = 0;
};

// Calls done() when the scope of a wait ends, by a return or a throw.
class WaitScope {
 public:
  explicit WaitScope(WaitStatus* status) : status_(status) {}
  ~WaitScope() {
    if (status_) status_->done();
  }
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  WaitStatus* status_;
};

// Where the reporter writes: stderr, a terminal or not.
class StatusSink {
 public:
  virtual ~StatusSink() = default;
  // A terminal shows the status line redrawn in place; elsewhere every line
  // stays, so they come sparingly.
  virtual bool terminal() const = 0;
  // The terminal's width: a longer line would wrap, and \r redraw only its
  // last row.
  virtual std::size_t columns() const = 0;
  // Terminal: the status line, over the one before. Else: a line kept.
  virtual void show(std::string_view line) = 0;
  // Terminal: clears the status line.
  virtual void clear() = 0;
};

class WaitReporter : public WaitStatus {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // In a log, a line at least so often while a wait goes on.
  static constexpr std::chrono::seconds kLogInterval{30};

  explicit WaitReporter(StatusSink& sink, Clock clock = &std::chrono::steady_clock::now);

  void waiting(std::string_view what, std::string_view pending, std::string_view cause) override;
  void done() override;

 private:
  StatusSink& sink_;
  Clock clock_;
  std::optional<std::chrono::steady_clock::time_point> started_;  // the wait under way
  std::string what_;
  std::chrono::steady_clock::time_point last_line_;  // in a log: the last line written
  std::string last_cause_;                           // in a log: the cause last written
  bool shown_ = false;                               // on a terminal: a status line is up
};

// An elapsed time as the status says it: "7s", "1m05s", "1h02m03s".
std::string elapsed_text(std::chrono::seconds elapsed);

}  // namespace fluxop
