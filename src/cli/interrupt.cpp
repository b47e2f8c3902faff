#include "cli/interrupt.h"

#include <signal.h>

#include <atomic>

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

}  // namespace fluxop::cli
