// Waiting in tests for what another thread does: a condition polled until it
// holds, bounded (30 s) so that a bug fails the test instead of hanging it.
#pragma once

#include <chrono>
#include <thread>

namespace fluxop::testing {

template <typename Predicate>
bool eventually(Predicate done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace fluxop::testing
