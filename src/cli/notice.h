// Lines for the user on stderr: progress, warnings, outcomes. Their text may
// hold what a cluster or a registry sent (an object's name, a status
// message), so each is written as printable() escapes it.
#pragma once

#include <string>
#include <string_view>

#include "core/wait_status.h"

namespace fluxop::cli {

void print_notice(std::string_view line);

// While one lives, this thread's notices start with "CONTEXT: ", so that
// the lines of clusters handled at once say whose they are (a fleet).
class NoticePrefix {
 public:
  explicit NoticePrefix(const std::string& context);
  ~NoticePrefix();
  NoticePrefix(const NoticePrefix&) = delete;
  NoticePrefix& operator=(const NoticePrefix&) = delete;
};

// print_notice with "warning: " before it.
void print_warning(std::string_view warning);

// How the waits show they are alive on stderr (core/wait_status.h): a
// status line redrawn in place on a terminal, lines in a log; a notice
// printed meanwhile clears the status line first. None (null) on the
// threads of a fleet, whose lines interleave.
WaitStatus* stderr_wait_status();

}  // namespace fluxop::cli
