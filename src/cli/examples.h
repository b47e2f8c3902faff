// Each command's examples, shown at the end of its help as kubectl shows
// them; tests/cli/examples_test.sh runs every one.
#pragma once

#include <string_view>

namespace fluxop::cli {

// The "Examples:" block of the top-level COMMAND's help (a comment line
// before each example), or empty when it has none.
std::string_view command_examples(std::string_view command);

}  // namespace fluxop::cli
