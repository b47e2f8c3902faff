#include "cli/notice.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <utility>

#include "core/error.h"

namespace fluxop::cli {

namespace {

thread_local std::string prefix;
std::mutex stderr_mutex;
// Erases the terminal's current line from its start.
constexpr std::string_view kClearLine = "\r\033[K";
bool status_up = false;  // a status line is on the terminal (under stderr_mutex)

class StderrSink : public StatusSink {
 public:
  // A terminal that understands the erase sequence.
  bool terminal() const override {
    const char* term = std::getenv("TERM");
    return isatty(STDERR_FILENO) == 1 && !(term && std::string_view(term) == "dumb");
  }
  std::size_t columns() const override {
    winsize size{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    return 80;
  }
  void show(std::string_view line) override {
    if (!terminal()) {
      print_notice(line);
      return;
    }
    std::string text = std::string(kClearLine) + printable(line);
    std::lock_guard lock(stderr_mutex);
    std::cerr << text << std::flush;
    status_up = true;
  }
  void clear() override {
    std::lock_guard lock(stderr_mutex);
    if (!std::exchange(status_up, false)) return;
    std::cerr << kClearLine << std::flush;
  }
};

}  // namespace

// One write per line, under a lock: the threads of a fleet never interleave
// within a line. A status line up is erased first; the wait draws it again.
void print_notice(std::string_view line) {
  std::string text = prefix + printable(line) + "\n";
  std::lock_guard lock(stderr_mutex);
  if (std::exchange(status_up, false)) text = std::string(kClearLine) + text;
  std::cerr << text;
}

WaitStatus* stderr_wait_status() {
  if (!prefix.empty()) return nullptr;
  static StderrSink sink;
  static WaitReporter reporter(sink);
  return &reporter;
}

NoticePrefix::NoticePrefix(const std::string& context) { prefix = printable(context) + ": "; }

NoticePrefix::~NoticePrefix() { prefix.clear(); }

void print_warning(std::string_view warning) { print_notice("warning: " + std::string(warning)); }

}  // namespace fluxop::cli
