// Pulling a Flux distribution artifact into the cache: the manifest is
// resolved online (or, with --offline, from the cache's tag records), its
// tar+gzip layer downloaded, verified and indexed only when the cache does
// not already hold that manifest digest. The result holds the layer, read
// and verified, for a build to read from.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/distribution/distribution.h"
#include "core/oci/archive.h"
#include "core/oci/cache.h"
#include "core/oci/registry.h"

namespace fluxop::oci {

struct PullResult;

struct PullOptions {
  RegistryOptions registry;
  bool offline = false;  // the cache only; a tag resolves to its last known digest
  ExtractLimits limits;
  // Hears what a pull waits for (another fluxopctl pulling the same
  // artifact), a line for stderr; unset: nothing is said.
  std::function<void(const std::string&)> waiting;
  // While the registry resolves a tag, hears what the pull will most likely
  // return: the intact entry the tag named last. Work done on it is the
  // caller's to keep when the pull returns the same digest. It must not
  // throw.
  std::function<void(const PullResult&)> meanwhile;
};

struct PullResult {
  Reference ref;
  CachedArtifact artifact;
  std::shared_ptr<const Layer> layer;
  std::map<std::string, std::string> annotations;  // the manifest's
  bool downloaded = false;                         // false: the cache had it
  std::string warning;                             // for stderr, e.g. an offline resolution
  int requests = 0;                                // HTTP requests sent
};

PullResult pull(ArtifactCache& cache, const Reference& ref, const PullOptions& options);

// The distribution in a pulled artifact, named by its URL pinned to the
// manifest digest.
distribution::Distribution pulled_distribution(const PullResult& pulled);

// The annotations of a cached artifact's manifest; none when manifest.json
// does not have the entry's digest.
std::map<std::string, std::string> manifest_annotations(const ArtifactCache& cache,
                                                        const CachedArtifact& artifact);

}  // namespace fluxop::oci
