// The kustomization of one shard: a copy of the shardable controllers,
// renamed with the shard's suffix, selecting only the objects labelled for
// the shard, without the cluster-wide objects the main set already holds.
#pragma once

#include <string>
#include <vector>

#include "core/distribution/version.h"
#include "core/instance/instance.h"
#include "core/kustomize/transforms.h"

namespace fluxop::render {

// The component manifests the shard copies, in the instance's order.
std::vector<std::string> shard_components(const instance::FluxInstance& flux,
                                          const distribution::Version& version);

// Throws fluxop::Error naming the instance file and the shard's field when a
// name the shard makes, "<component>-<shard>" (its Deployments, Services and
// their pods' app label), is longer than the 63 characters a Service name and
// a label value may have: the API server would refuse it half-way through
// an apply.
void check_shard_names(const instance::FluxInstance& flux, const distribution::Version& version);

// The first patch of every shard's kustomization, which deletes the
// cluster-wide objects the main set already holds: it does the same in each
// shard, so it is applied once to the objects all shards copy. With
// thousands of shards, copying the CRDs into each only to delete them cost
// most of the render, and more nodes than a build may make.
kustomize::Transforms shard_copy_transforms();

// What the shard's kustomization does to its copy of the components after
// shard_copy_transforms(); with
// `persistent_storage`, the copy also holds the source-controller's claim
// (.spec.storage), which the shard's source-controller mounts instead of its
// emptyDir.
kustomize::Transforms shard_transforms(const instance::FluxInstance& flux,
                                       const distribution::Version& version,
                                       const std::string& shard, bool persistent_storage);

}  // namespace fluxop::render
