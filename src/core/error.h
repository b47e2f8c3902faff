// The one error type of the core: its message is a complete, single line
// meant for the user (e.g. "kustomization.yaml: patches[0].target.kind: invalid regex").
#pragma once

#include <stdexcept>
#include <string>

namespace fluxop {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace fluxop
