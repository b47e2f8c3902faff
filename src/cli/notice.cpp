#include "cli/notice.h"

#include <iostream>

#include "core/error.h"

namespace fluxop::cli {

void print_notice(std::string_view line) { std::cerr << printable(line) << "\n"; }

void print_warning(std::string_view warning) { print_notice("warning: " + std::string(warning)); }

}  // namespace fluxop::cli
