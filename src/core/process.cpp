#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "core/error.h"

extern char** environ;

namespace fluxop {

namespace {

// RAII for the pipe ends the parent keeps.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

// Our environment with `overrides` (NAME=value) replacing or adding entries.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    std::string_view current(*entry);
    std::string_view name = current.substr(0, current.find('='));
    bool overridden = false;
    for (const std::string& override : overrides) {
      overridden = overridden || override.substr(0, override.find('=')) == name;
    }
    if (!overridden) env.emplace_back(current);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

enum class Reading { closed, timed_out, too_much };

// Reads the child's output until it closes it, the deadline passes or it
// prints more than `max_output`.
Reading read_until_closed(int fd, std::chrono::steady_clock::time_point deadline,
                          std::size_t max_output, std::string& output) {
  char buffer[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd fds{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&fds, 1, static_cast<int>(left.count())) == 0)
      return Reading::timed_out;
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Reading::closed;
    if (output.size() + static_cast<std::size_t>(n) > max_output) return Reading::too_much;
    output.append(buffer, static_cast<std::size_t>(n));
  }
}

// The child's wait status once it exits; nullopt past the deadline (a child
// that closed its output and lives on).
std::optional<int> wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return 0;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    // Output closed: the exit follows at once, unless the child lingers.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string duration_text(std::chrono::milliseconds duration) {
  long long ms = duration.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
}

std::string size_text(std::size_t bytes) {
  return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                : std::to_string(bytes) + " bytes";
}

// A child that exits without reading its input must not kill us with SIGPIPE:
// the signal is blocked for the write, and taken back if it came.
void write_without_sigpipe(int fd, const std::string& input) {
  if (input.empty()) return;
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  ssize_t written = write(fd, input.data(), input.size());
  if (written < 0 && errno == EPIPE) {
    timespec no_wait{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace

std::optional<ProcessResult> run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) throw Error(spec.label + ": no program to run");
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw Error(spec.label + ": cannot create a pipe");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    throw Error(spec.label + ": cannot create a pipe");
  }
  Fd child_in{in[0]}, to_child{in[1]}, from_child{out[0]}, child_out{out[1]};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_in.fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, child_out.fd, STDOUT_FILENO);
  if (spec.capture_stderr) posix_spawn_file_actions_adddup2(&actions, child_out.fd, STDERR_FILENO);
  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = child_environment(spec.env);
  std::vector<char*> argv = c_strings(args), envp = c_strings(env);
  // fluxopctl ignores SIGXFSZ (a file-size limit is an error it reports);
  // the helper gets the default its own authors expect.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  child_in.reset();
  child_out.reset();
  if (spawned != 0) return std::nullopt;

  // The input is short: it fits in the pipe's buffer.
  write_without_sigpipe(to_child.fd, spec.input);
  to_child.reset();

  ProcessResult result;
  auto deadline = std::chrono::steady_clock::now() + spec.timeout;
  Reading reading = read_until_closed(from_child.fd, deadline, spec.max_output, result.output);
  std::optional<int> status;
  if (reading == Reading::closed) status = wait_until(pid, deadline);
  if (!status) {
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw Error(spec.label + (reading == Reading::too_much
                                  ? ": printed more than " + size_text(spec.max_output)
                                  : ": no answer within " + duration_text(spec.timeout)));
  }
  result.exit_status = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
  return result;
}

}  // namespace fluxop
