// What `fluxopctl images` and `fluxopctl mirror` share: an optional
// FluxInstance with the distribution flags, --version RANGE and --variant,
// and the distribution and images they select.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/instance_input.h"
#include "core/distribution/selected_images.h"

namespace fluxop::cli {

struct ImageSelectionFlags {
  InstanceInput input;
  std::string range;
  std::string variant;
};

// [FILE], -f, the distribution and registry flags, --version, --variant.
void add_image_selection_flags(CLI::App& command, ImageSelectionFlags& flags);

struct SelectedImages {
  std::optional<instance::FluxInstance> instance;  // none without FILE
  distribution::Distribution distribution;
  std::string artifact_digest;  // of the artifact pulled; empty for a directory
  std::string artifact_url;     // the oci:// URL it was pulled from, or empty
  std::vector<distribution::VersionImages> versions;
};

// Loads the instance (when given), locates its distribution as build does
// and selects the images; errors name the file, flag or field.
SelectedImages select_images(const ImageSelectionFlags& flags);

}  // namespace fluxop::cli
