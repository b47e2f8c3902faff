// OCI referrers (distribution spec 1.1): the manifests whose `subject` names
// another manifest, listed by a registry's referrers API or, where it serves
// none, by the "referrers tag schema": an index tagged `sha256-<hex>` that
// whoever pushes a referrer keeps up to date. The decisions here; the
// requests in registry.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/oci/registry.h"

namespace fluxop::oci {

// The referrers tag of `digest` ("sha256:<hex>"): "sha256-<hex>".
std::string referrers_tag(std::string_view digest);

// Whether a registry answering GET /v2/NAME/referrers/DIGEST with `status`
// does not serve the referrers API, so that the referrers tag stands in for
// it: 404 (what the spec asks of it), 405 and 501 (a method or endpoint it
// does not implement), and 400 (registries that predate the API read
// "referrers" as a malformed tag or digest; cosign's client reads 400 as
// this too, so a mirror finds what cosign finds). Any other failure
// (401, 403, 5xx) is an error, not an absence.
bool referrers_api_not_served(long status);

// The descriptor of the referrer `manifest` that a referrers list holds:
// its media type, digest and size, its artifactType (else its config's media
// type) and every annotation it carries.
Descriptor referrer_descriptor(const Manifest& manifest);

// The referrers tag's index with `referrer` added: `existing` (nullopt when
// the tag is not there: an empty index) with its entries and fields kept as
// they are; nullopt when it already lists `referrer`'s digest. Throws
// fluxop::Error, prefixed with `what`, when `existing` is not an OCI index
// (the tag holds something else, which is not overwritten).
std::optional<std::string> referrers_index_adding(const std::optional<Manifest>& existing,
                                                  const Descriptor& referrer,
                                                  const std::string& what);

}  // namespace fluxop::oci
