// Loading FluxInstance documents written inline in tests.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/instance/instance.h"
#include "core/yaml/parse.h"

namespace fluxop::instance::testing {

// The smallest valid instance; tests append to its spec.
inline constexpr std::string_view kMinimal = R"(apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
spec:
  distribution:
    version: "2.x"
    registry: ghcr.io/fluxcd
)";

inline FluxInstance load(std::string_view text, std::vector<std::string>& warnings,
                         LoadOptions options = {}) {
  return load_instance(yaml::parse_document(text, "instance.yaml"), "instance.yaml", options,
                       warnings);
}

inline FluxInstance load(std::string_view text) {
  std::vector<std::string> warnings;
  FluxInstance instance = load(text, warnings);
  CHECK(warnings.empty());
  return instance;
}

// kMinimal with `extra` appended (spec fields indented by two spaces).
inline FluxInstance load_minimal_with(std::string_view extra) {
  return load(std::string(kMinimal) + std::string(extra));
}

// The error loading `text` fails with; "" when it loads.
inline std::string error_of(std::string_view text) {
  try {
    load(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline std::string error_with(std::string_view extra) {
  return error_of(std::string(kMinimal) + std::string(extra));
}

}  // namespace fluxop::instance::testing
