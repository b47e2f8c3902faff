#include "core/daemon/stop_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace fluxop::daemon {

namespace {

// A handler may only touch these: a lock-free atomic and write(2).
std::atomic<int> received_signal{0};
int pipe_fds[2] = {-1, -1};

void stop_with(int signal) {
  int expected = 0;
  received_signal.compare_exchange_strong(expected, signal);
  int saved = errno;
  [[maybe_unused]] ssize_t n = write(pipe_fds[1], "x", 1);
  errno = saved;
}

extern "C" void on_stop(int signal) { stop_with(signal); }

}  // namespace

StopSignal::StopSignal() {
  if (pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0)
    throw Error(std::string("pipe: ") + std::strerror(errno));
  received_signal = 0;
  struct sigaction action = {};
  action.sa_handler = on_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

StopSignal::~StopSignal() {
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  pipe_fds[0] = pipe_fds[1] = -1;
}

int StopSignal::fd() const { return pipe_fds[0]; }

int StopSignal::received() const { return received_signal; }

void StopSignal::request() { stop_with(-1); }

}  // namespace fluxop::daemon
