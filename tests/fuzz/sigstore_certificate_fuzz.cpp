// libFuzzer target for what a Sigstore verification decodes beside the
// bundle's JSON, the first byte picking which: a certificate (DER: its
// identities, OIDC issuer, usage, chain and SCTs against the built-in
// trusted root), a checkpoint (a signed note), an RFC 3161 timestamp
// response, a trusted root. Each is read or refused with fluxop::Error.
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/sigstore/certificate.h"
#include "core/sigstore/timestamp.h"
#include "core/sigstore/tlog.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fluxop::sigstore;
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const TrustedRoot& root = public_good_trusted_root();
  try {
    switch (data[0] % 4) {
      case 0: {
        Certificate certificate = certificate_from_der(bytes);
        if (!certificate) return 0;
        certificate_identities(certificate.get());
        certificate_oidc_issuer(certificate.get());
        certificate_signs_code(certificate.get());
        self_signed(certificate.get());
        verify_embedded_scts(certificate.get(), certificate.get(), root.ct_logs, 1'800'000'000);
        verify_chain(certificate.get(), root.certificate_authorities, 1'700'000'000);
        break;
      }
      case 1:
        verify_checkpoint(bytes, root.transparency_logs.front(), 1, sha256(""));
        break;
      case 2:
        verify_timestamp(bytes, "signature", root.timestamp_authorities);
        break;
      default:
        parse_trusted_root(bytes, "trusted_root.json");
    }
  } catch (const fluxop::Error&) {
  }
  return 0;
}
