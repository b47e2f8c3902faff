#include "cli/interrupt.h"

#include <signal.h>

#include <atomic>

#include "cli/commands.h"
#include "core/error.h"
#include "core/interruption.h"

namespace fluxop::cli {

namespace {

std::atomic<int> received{0};

extern "C" void on_interrupt(int signal) { received = signal; }

}  // namespace

void catch_interrupts() {
  signal(SIGINT, on_interrupt);
  signal(SIGTERM, on_interrupt);
}

bool interrupted() { return received != 0; }

std::string interruption() { return interrupted() ? interrupted_by(received) : ""; }

void run_interruptible(const std::function<void()>& command) {
  try {
    command();
  } catch (const Error&) {
    if (int signal = received; signal != 0)
      throw CommandError(interrupted_by(signal), 128 + signal);
    throw;
  }
}

}  // namespace fluxop::cli
