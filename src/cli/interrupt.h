// SIGINT and SIGTERM for the one-shot cluster commands (apply, delete): seen
// between requests, so that a command stops at a safe point and releases its
// lock rather than dying half-way through a write.
#pragma once

#include <functional>
#include <string>

namespace fluxop::cli {

// From now on SIGINT and SIGTERM are caught, not fatal.
void catch_interrupts();

// Whether one was received.
bool interrupted();

// "interrupted by SIGINT" once one was received, else empty.
std::string interruption();

// Runs `command`. Once interrupted, whatever error ended it (a request cut
// short) is the interruption's: the message says so and the exit status is
// 128 + the signal, as a shell reports a command a signal ended (130 for
// SIGINT, 143 for SIGTERM).
void run_interruptible(const std::function<void()>& command);

}  // namespace fluxop::cli
