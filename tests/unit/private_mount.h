// A file system mounted for one action, seen by nobody else: a read-only or
// a full one, which chmod cannot stand for when tests run as root (root
// writes through 0555), to check what a write error says.
#pragma once

#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <string>

#include "core/error.h"

namespace fluxop::testing {

// Mounts a tmpfs at `dir` with `flags` (MS_RDONLY) and `options` ("size=64k")
// in a child process with a mount namespace of its own, runs `action` there
// and returns the fluxop::Error it threw ("" when none). Nullopt, with the
// reason in `unavailable`, when no such mount can be made here (no
// CAP_SYS_ADMIN).
inline std::optional<std::string> error_on_private_mount(const std::string& dir,
                                                         unsigned long flags, const char* options,
                                                         const std::function<void()>& action,
                                                         std::string& unavailable) {
  int fds[2];
  if (pipe(fds) != 0) {
    unavailable = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    // The first byte says which: E the action's error, U no mount possible.
    auto report = [&](char kind, const std::string& text) {
      std::string message = kind + text;
      [[maybe_unused]] ssize_t n = write(fds[1], message.data(), message.size());
      _exit(0);
    };
    if (unshare(CLONE_NEWNS) != 0)
      report('U', std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno));
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", dir.c_str(), "tmpfs", flags, options) != 0)
      report('U', std::string("mount: ") + std::strerror(errno));
    try {
      action();
    } catch (const Error& e) {
      report('E', e.what());
    }
    report('E', "");
  }
  close(fds[1]);
  if (child < 0) {
    close(fds[0]);
    unavailable = std::string("fork: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    message.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  // A child that died without a word fails the test's checks, not skips it.
  if (message.empty())
    return "(the child ended without a report, status " + std::to_string(status) + ")";
  if (message[0] == 'U') {
    unavailable = message.substr(1);
    return std::nullopt;
  }
  return message.substr(1);
}

}  // namespace fluxop::testing
