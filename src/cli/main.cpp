#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/app.h"
#include "core/cache_root.h"
#include "core/yaml/parse_cache.h"

namespace {

// What a command printed counts only once it is written: a full disk or a
// closed pipe behind stdout (`build > /dev/full`) fails the command, whatever
// it returned.
int flushed(int code) {
  errno = 0;
  bool written =
      static_cast<bool>(std::cout.flush()) && std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (written) return code;
  int error = errno;
  // A write that failed earlier, in a flush of the stream's buffer, left no
  // errno: a regular file at the file-size limit says why.
  struct stat info {};
  struct rlimit limit {};
  if (error == 0 && fstat(STDOUT_FILENO, &info) == 0 && S_ISREG(info.st_mode) &&
      getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<rlim_t>(info.st_size) >= limit.rlim_cur)
    error = EFBIG;
  return fluxop::cli::error_line(
      std::string("stdout: ") + (error ? std::strerror(error) : "write error"),
      code == 0 ? 1 : code);
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file-size limit (`ulimit -f`), a write fails with EFBIG and is an
  // error line naming the file, as a full disk is, never a death by signal
  // with half the output written.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"fluxopctl: render, apply and diff Flux installations from a FluxInstance"};
  // Entries are written once the command has read everything it parsed.
  fluxop::yaml::ParseCache parse_cache = fluxop::yaml::user_parse_cache(fluxop::user_cache_root());
  fluxop::cli::add_commands(app, parse_cache, argc > 1 ? argv[1] : "");
  return flushed(fluxop::cli::run(app, argc, argv, parse_cache));
}
