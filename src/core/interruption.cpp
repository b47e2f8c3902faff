#include "core/interruption.h"

#include <signal.h>

namespace fluxop {

std::string interrupted_by(int signal) {
  switch (signal) {
    case SIGINT:
      return "interrupted by SIGINT";
    case SIGTERM:
      return "interrupted by SIGTERM";
    default:
      return "interrupted by signal " + std::to_string(signal);
  }
}

}  // namespace fluxop
