// The component images `flux-operator build instance` renders: the tag each
// component's Deployment runs in the distribution's manifests, under the
// instance's registry, without a digest. (The in-cluster operator prefers
// the digests of image_catalog.h and falls back to this.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/distribution/component_image.h"
#include "core/yaml/node.h"

namespace fluxop::distribution {

// The image of `component`, from the documents of its manifest
// (flux/<version>/<component>.yaml, read from `path`, what errors name):
// that of its Deployment's container (the last one, should there be
// several), as <registry>/<component> with that image's tag, "latest" when
// it has none. Throws when there is no Deployment with a container, or its
// image has an invalid tag.
ComponentImage manifest_image(std::string_view registry, const std::string& component,
                              const std::vector<const yaml::Node*>& documents,
                              const std::string& path);

// The tag of an image reference as go-containerregistry reads it loosely:
// after the last ':' unless a '/' follows it; "latest" when absent; nullopt
// when it is empty, longer than 128 or not of [A-Za-z0-9_.-].
std::optional<std::string> image_tag(std::string_view image);

}  // namespace fluxop::distribution
