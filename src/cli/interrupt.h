// SIGINT and SIGTERM for the one-shot cluster commands (apply, delete): seen
// between requests, so that a command stops at a safe point and releases its
// lock rather than dying half-way through a write.
#pragma once

namespace fluxop::cli {

// From now on SIGINT and SIGTERM are caught, not fatal.
void catch_interrupts();

// Whether one was received.
bool interrupted();

}  // namespace fluxop::cli
