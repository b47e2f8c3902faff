// The image one Flux component runs, as the renderer sets it in the generated
// kustomization (images: name fluxcd/<component>, newName, newTag, digest).
#pragma once

#include <string>
#include <string_view>

namespace fluxop::distribution {

struct ComponentImage {
  std::string component;   // "source-controller"
  std::string repository;  // <registry>/<component>
  std::string tag;         // "v1.9.4"
  std::string digest;      // "sha256:..." or empty when not pinned

  friend bool operator==(const ComponentImage&, const ComponentImage&) = default;
};

// <registry>/<component>, one trailing '/' of the registry ignored.
inline std::string component_repository(std::string_view registry, std::string_view component) {
  if (registry.ends_with('/')) registry.remove_suffix(1);
  return std::string(registry) + "/" + std::string(component);
}

}  // namespace fluxop::distribution
