// Copying images and artifacts from their registries to another, for a site
// that reaches no public registry (`fluxopctl mirror`). A copy keeps every
// manifest's bytes, so every digest a FluxInstance pins stays valid at the
// destination. What the destination has is skipped (a manifest or blob it
// answers HEAD for), which is how an interrupted mirror resumes; a blob
// already placed in another of its repositories is mounted rather than sent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/oci/registry.h"

namespace fluxop::oci {

// One image or artifact to copy: the source pinned to its digest, the
// destination named by the tag it gets there.
struct MirrorCopy {
  Reference source;
  Reference destination;
};

struct MirrorOptions {
  RegistryOptions registry;  // for the source and the destination alike
  // "os/architecture[/variant]": the children of an index copied; empty: all.
  std::vector<std::string> platforms;
  bool dry_run = false;  // read the source, ask the destination, write nothing
  int concurrency = 4;   // images copied at once
  // A line of progress (for stderr), called by one copy at a time.
  std::function<void(const std::string&)> progress;
};

struct MirrorTotals {
  int images = 0;
  int images_present = 0;  // the destination had the whole image
  int manifests_pushed = 0;
  int blobs_copied = 0;  // with --dry-run: those that would be
  int blobs_mounted = 0;
  int blobs_present = 0;
  std::uint64_t bytes_copied = 0;  // with --dry-run: what would be
};

// Copies each of `copies` (an image, or an index with its children);
// throws fluxop::Error naming the first copy that failed, once the copies
// under way have ended.
MirrorTotals mirror(const std::vector<MirrorCopy>& copies, const MirrorOptions& options);

// The children of an index a mirror copies: all of them without
// `platforms`, else those whose platform is named ("linux/arm64" names
// "linux/arm64/v8" too). Throws when `platforms` names none of them.
std::vector<Descriptor> mirrored_children(const Manifest& index,
                                          const std::vector<std::string>& platforms,
                                          const std::string& what);

// A blob larger than this is refused rather than copied (Flux's layers are
// tens of MB).
inline constexpr std::uint64_t kMaxMirrorBlobBytes = std::uint64_t{2} << 30;

}  // namespace fluxop::oci
