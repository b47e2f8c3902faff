#include "cli/notice.h"

#include <iostream>
#include <mutex>

#include "core/error.h"

namespace fluxop::cli {

namespace {

thread_local std::string prefix;
std::mutex stderr_mutex;

}  // namespace

// One write per line, under a lock: the threads of a fleet never interleave
// within a line.
void print_notice(std::string_view line) {
  std::string text = prefix + printable(line) + "\n";
  std::lock_guard lock(stderr_mutex);
  std::cerr << text;
}

NoticePrefix::NoticePrefix(const std::string& context) { prefix = printable(context) + ": "; }

NoticePrefix::~NoticePrefix() { prefix.clear(); }

void print_warning(std::string_view warning) { print_notice("warning: " + std::string(warning)); }

}  // namespace fluxop::cli
