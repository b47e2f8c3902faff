// How a run stopped by a signal describes itself, alike from a one-shot
// command and from the daemon.
#pragma once

#include <string>

namespace fluxop {

// "interrupted by SIGINT", "interrupted by SIGTERM".
std::string interrupted_by(int signal);

}  // namespace fluxop
