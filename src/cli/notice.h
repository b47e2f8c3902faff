// Lines for the user on stderr: progress, warnings, outcomes. Their text may
// hold what a cluster or a registry sent (an object's name, a status
// message), so each is written as printable() escapes it.
#pragma once

#include <string_view>

namespace fluxop::cli {

void print_notice(std::string_view line);

// print_notice with "warning: " before it.
void print_warning(std::string_view warning);

}  // namespace fluxop::cli
