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
#include "core/distribution/distribution.h"
#include "core/yaml/parse_cache.h"

namespace fluxop::distribution {

// For each component in order: flux/<version>/<component>.yaml, the image
// of its Deployment's container (the last one, should there be several),
// as <registry>/<component> with that image's tag, "latest" when it has none. Throws when a file is
// missing, has no Deployment, or an image has an invalid tag.
// The manifests are parsed through `parse_cache` when given.
std::vector<ComponentImage> manifest_images(const Distribution& distribution,
                                            const Version& version, std::string_view registry,
                                            const std::vector<std::string>& components,
                                            yaml::ParseCache* parse_cache);

// The same for one component, from the documents of its manifest, read
// from `path` (what errors name).
ComponentImage manifest_image(std::string_view registry, const std::string& component,
                              const std::vector<const yaml::Node*>& documents,
                              const std::string& path);

// The tag of an image reference as go-containerregistry reads it loosely:
// after the last ':' unless a '/' follows it; "latest" when absent; nullopt
// when it is empty, longer than 128 or not of [A-Za-z0-9_.-].
std::optional<std::string> image_tag(std::string_view image);

}  // namespace fluxop::distribution
