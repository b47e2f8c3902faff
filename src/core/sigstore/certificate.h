// What a Fulcio certificate says and who vouches for it: the chain to a
// certificate authority of the trusted root, the SCTs of the CT logs, the
// signer's identity (SAN) and the OIDC issuer extension.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sigstore/trusted_root.h"

namespace fluxop::sigstore {

// The certificate that issued `leaf` in its chain to one of `authorities`
// valid at `time` (the authority's validFor and every certificate's
// validity), owned by that authority; throws fluxop::Error saying why there
// is none.
X509* verify_chain(X509* leaf, const std::vector<Authority>& authorities, std::int64_t time);

// At least one of the certificate's embedded SCTs is signed by a CT log of
// `logs`, over the certificate (as a precertificate of `issuer`), at a time
// in the log's validity and not after `now`; throws fluxop::Error otherwise.
void verify_embedded_scts(X509* leaf, X509* issuer, const std::vector<LogKey>& logs,
                          std::int64_t now);

// The subject alternative names: URIs, e-mail addresses, and Fulcio's
// username other-name.
std::vector<std::string> certificate_identities(X509* leaf);
// The OIDC issuer Fulcio recorded (1.3.6.1.4.1.57264.1.8, or the older
// 1.3.6.1.4.1.57264.1.1); empty when none.
std::string certificate_oidc_issuer(X509* leaf);
// Whether the certificate may sign code (extended key usage).
bool certificate_signs_code(X509* leaf);

}  // namespace fluxop::sigstore
