// RFC 3161 timestamps: a timestamp authority's signed word that some bytes
// (a bundle's signature) existed at a time.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/sigstore/trusted_root.h"

namespace fluxop::sigstore {

// The time `response` (a DER TimeStampResp) proves for `data`, checked
// against the timestamp authorities of the trusted root: its signer's chain
// at that time, the authority's validity, the message imprint. Throws
// fluxop::Error saying what failed.
std::int64_t verify_timestamp(std::string_view response, std::string_view data,
                              const std::vector<Authority>& authorities);

}  // namespace fluxop::sigstore
