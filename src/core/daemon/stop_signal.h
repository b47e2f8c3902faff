// SIGTERM and SIGINT as the daemon needs them: a descriptor its loop waits
// on beside the instance's changes, and a flag an apply in progress polls to
// stop at a safe point.
#pragma once

namespace fluxop::daemon {

// One per process: it owns the two signals' handlers while it lives.
class StopSignal {
 public:
  StopSignal();   // installs the handlers
  ~StopSignal();  // restores the default ones
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // Turns readable at the first signal, and stays so.
  int fd() const;
  // The signal received; 0 while none was, -1 after request().
  int received() const;
  // Stops as a signal would (leadership lost): safe from any thread.
  void request();
};

}  // namespace fluxop::daemon
