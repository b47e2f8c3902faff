// A WaitStatus that keeps what a wait told it, for the tests of the waits.
#pragma once

#include <string>
#include <vector>

#include "core/wait_status.h"

namespace fluxop::testing {

struct RecordingWaitStatus : WaitStatus {
  struct Poll {
    std::string what, pending, cause;
  };
  std::vector<Poll> polls;
  int ended = 0;

  void waiting(std::string_view what, std::string_view pending, std::string_view cause) override {
    polls.push_back({std::string(what), std::string(pending), std::string(cause)});
  }
  void done() override { ++ended; }
};

}  // namespace fluxop::testing
