#include "core/sigstore/timestamp.h"

#include <openssl/bio.h>
#include <openssl/ts.h>
#include <openssl/x509.h>

#include "core/error.h"
#include "core/file.h"
#include "core/rfc3339.h"

namespace fluxop::sigstore {

namespace {

using Response = std::unique_ptr<TS_RESP, OpensslFree<TS_RESP_free>>;
using VerifyContext = std::unique_ptr<TS_VERIFY_CTX, OpensslFree<TS_VERIFY_CTX_free>>;

}  // namespace

std::int64_t verify_timestamp(std::string_view response, std::string_view data,
                              const std::vector<Authority>& authorities) {
  const auto* in = reinterpret_cast<const unsigned char*>(response.data());
  Response decoded(d2i_TS_RESP(nullptr, &in, static_cast<long>(response.size())));
  if (!decoded) throw Error("timestamp: not a DER RFC 3161 response");
  TS_TST_INFO* info = TS_RESP_get_tst_info(decoded.get());
  if (info == nullptr) throw Error("timestamp: the response holds no timestamp");
  auto time = asn1_seconds(TS_TST_INFO_get_time(info));
  if (!time) throw Error("timestamp: its time cannot be read");
  std::string when = utc_rfc3339(static_cast<std::time_t>(*time));
  std::string why = "timestamp: no timestamp authority of the trusted root was valid at " + when;
  for (const Authority& authority : authorities) {
    if (!authority.valid.contains(*time)) continue;
    VerifyContext context(TS_VERIFY_CTX_new());
    X509_STORE* store = X509_STORE_new();
    STACK_OF(X509)* certificates = sk_X509_new_null();
    BIO* bytes = BIO_new(BIO_s_mem());
    if (!context || store == nullptr || certificates == nullptr || bytes == nullptr) {
      X509_STORE_free(store);
      sk_X509_free(certificates);
      BIO_free(bytes);
      throw Error("out of memory");
    }
    // The context owns what it is given from here on.
    TS_VERIFY_CTX_set_store(context.get(), store);
    TS_VERIFY_CTX_set_certs(context.get(), certificates);
    TS_VERIFY_CTX_set_data(context.get(), bytes);
    BIO_write(bytes, data.data(), static_cast<int>(data.size()));
    for (const SharedCertificate& certificate : authority.chain) {
      X509_STORE_add_cert(store, certificate.get());
      // Also as an untrusted certificate: a response may leave its signer out.
      X509_up_ref(certificate.get());
      sk_X509_push(certificates, certificate.get());
    }
    // The authority's certificates are trusted as its root is, at the time
    // the timestamp says (the chain may have expired since).
    X509_VERIFY_PARAM* param = X509_STORE_get0_param(store);
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN);
    X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(*time));
    TS_VERIFY_CTX_set_flags(context.get(), TS_VFY_VERSION | TS_VFY_SIGNATURE | TS_VFY_DATA);
    if (TS_RESP_verify_response(context.get(), decoded.get()) == 1) return *time;
    why = "timestamp at " + when + ": not signed by a timestamp authority of the trusted root" +
          " for this signature";
  }
  throw Error(why);
}

}  // namespace fluxop::sigstore
