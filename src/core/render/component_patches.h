// The patches that configure each Flux component's arguments (events
// address, namespaces watched, log level, storage address), source-controller's
// persistent storage, and the label selector that keeps the main controllers
// off the shards' objects.
#pragma once

#include <string>
#include <vector>

#include "core/distribution/version.h"
#include "core/instance/instance.h"
#include "core/render/patch.h"

namespace fluxop::render {

// The annotation the shard controller sets carry, which the main set's
// patches exclude.
inline constexpr const char* kShardRoleAnnotation = "sharding.fluxcd.io/role";

// The controllers that run once per shard: from Flux 2.9 source-watcher too.
std::vector<std::string> shardable_components(const distribution::Version& version);

// For each component in order, its argument patches (and source-controller's
// storage patch when .spec.storage is set); then, when sharded, the main
// controllers' label selector.
std::vector<Patch> component_patches(const instance::FluxInstance& flux,
                                     const distribution::Version& version);

// notification-controller's address as the controllers send events to it.
std::string events_address(const instance::FluxInstance& flux);

}  // namespace fluxop::render
