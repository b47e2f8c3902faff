// libFuzzer target for a Sigstore bundle (sigstore/bundle.h parse_bundle)
// and its verification (sigstore/verify.h) against the built-in trusted
// root: every field a bundle carries is decoded and checked (certificates,
// log entry bodies, checkpoints, RFC 3161 timestamps) and either verifies
// or throws fluxop::Error; a forged bundle never verifies.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/sigstore/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fluxop::sigstore;
  std::string text(reinterpret_cast<const char*>(data), size);
  Bundle bundle;
  try {
    bundle = parse_bundle(text, "bundle");
  } catch (const fluxop::Error&) {
    return 0;
  }
  const TrustedRoot& root = public_good_trusted_root();
  Policy keyless{Expected{"^https://github\\.com/", true}, Expected{".*", true}, std::nullopt};
  try {
    verify_bundle(bundle, Artifact::of_bytes("fuzz"), keyless, root, 1'800'000'000);
    std::abort();  // no certificate of the public-good CA signs inputs made here
  } catch (const fluxop::Error&) {
  }
  Policy key;
  key.public_key_pem =
      "-----BEGIN PUBLIC KEY-----\n"
      "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEymzBuCseCbUEnXdSxbwBGHRDpqCB\n"
      "Yy1xHYAtL1QYuk6Ic7ej4LL6J0VkFFE2aHXlvgPqw7FaPN6FVVO7w/kR5A==\n"
      "-----END PUBLIC KEY-----\n";
  try {
    verify_bundle(bundle, Artifact::of_digest(sha256("fuzz")), key, root, 1'800'000'000);
  } catch (const fluxop::Error&) {
  }
  return 0;
}
