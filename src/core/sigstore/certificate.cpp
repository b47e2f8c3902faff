#include "core/sigstore/certificate.h"

#include <openssl/asn1.h>
#include <openssl/ct.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core/error.h"
#include "core/file.h"
#include "core/rfc3339.h"

namespace fluxop::sigstore {

namespace {

using Store = std::unique_ptr<X509_STORE, OpensslFree<X509_STORE_free>>;
using StoreContext = std::unique_ptr<X509_STORE_CTX, OpensslFree<X509_STORE_CTX_free>>;
using Object = std::unique_ptr<ASN1_OBJECT, OpensslFree<ASN1_OBJECT_free>>;

struct SctListFree {
  void operator()(STACK_OF(SCT) * list) const { SCT_LIST_free(list); }
};
struct GeneralNamesFree {
  void operator()(GENERAL_NAMES* names) const { GENERAL_NAMES_free(names); }
};

std::string string_of(const ASN1_STRING* value) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                     static_cast<std::size_t>(ASN1_STRING_length(value)));
}

// The DER-encoded value of the extension `oid`, when the certificate has it.
std::optional<Bytes> extension_value(X509* certificate, const char* oid) {
  Object object(OBJ_txt2obj(oid, 1));
  if (!object) return std::nullopt;
  int index = X509_get_ext_by_OBJ(certificate, object.get(), -1);
  if (index < 0) return std::nullopt;
  return string_of(X509_EXTENSION_get_data(X509_get_ext(certificate, index)));
}

// The bytes a CT log signs for a precertificate (RFC 6962 3.2): the SCT's
// version, its timestamp, the issuer's key hash, the certificate's TBS
// without the SCT list, and the SCT's extensions.
std::optional<Bytes> signed_sct_data(X509* leaf, X509* issuer, const SCT* sct) {
  Certificate precertificate(X509_dup(leaf));
  if (!precertificate) return std::nullopt;
  int index = X509_get_ext_by_NID(precertificate.get(), NID_ct_precert_scts, -1);
  if (index >= 0) X509_EXTENSION_free(X509_delete_ext(precertificate.get(), index));
  unsigned char* tbs = nullptr;
  int tbs_size = i2d_re_X509_tbs(precertificate.get(), &tbs);
  if (tbs_size <= 0) return std::nullopt;
  Bytes tbs_der(reinterpret_cast<char*>(tbs), static_cast<std::size_t>(tbs_size));
  OPENSSL_free(tbs);
  unsigned char* extensions = nullptr;
  std::size_t extensions_size = SCT_get0_extensions(sct, &extensions);
  Bytes out;
  auto put = [&out](std::uint64_t value, int bytes) {
    for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8)
      out += static_cast<char>((value >> shift) & 0xff);
  };
  put(0, 1);  // v1
  put(0, 1);  // certificate_timestamp
  put(SCT_get_timestamp(sct), 8);
  put(1, 2);  // precert_entry
  out += sha256(public_key_der(X509_get0_pubkey(issuer)));
  put(tbs_der.size(), 3);
  out += tbs_der;
  put(extensions_size, 2);
  out.append(reinterpret_cast<const char*>(extensions), extensions_size);
  return out;
}

}  // namespace

X509* verify_chain(X509* leaf, const std::vector<Authority>& authorities, std::int64_t time) {
  std::string why = "no certificate authority of the trusted root was valid at " +
                    utc_rfc3339(static_cast<std::time_t>(time));
  for (const Authority& authority : authorities) {
    if (!authority.valid.contains(time)) continue;
    Store store(X509_STORE_new());
    StoreContext context(X509_STORE_CTX_new());
    if (!store || !context) throw Error("out of memory");
    for (const SharedCertificate& certificate : authority.chain)
      X509_STORE_add_cert(store.get(), certificate.get());
    if (X509_STORE_CTX_init(context.get(), store.get(), leaf, nullptr) != 1)
      throw Error("out of memory");
    // The authority's intermediate is trusted as its root is: the chain may
    // end at either.
    X509_STORE_CTX_set_flags(context.get(), X509_V_FLAG_PARTIAL_CHAIN);
    X509_STORE_CTX_set_time(context.get(), 0, static_cast<time_t>(time));
    if (X509_verify_cert(context.get()) == 1) {
      STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(context.get());
      if (sk_X509_num(chain) < 2) continue;
      X509* issuer = sk_X509_value(chain, 1);
      for (const SharedCertificate& certificate : authority.chain)
        if (X509_cmp(certificate.get(), issuer) == 0) return certificate.get();
      continue;
    }
    why = std::string("certificate chain: ") +
          X509_verify_cert_error_string(X509_STORE_CTX_get_error(context.get())) + " at " +
          utc_rfc3339(static_cast<std::time_t>(time));
  }
  throw Error(why);
}

void verify_embedded_scts(X509* leaf, X509* issuer, const std::vector<LogKey>& logs,
                          std::int64_t now) {
  std::unique_ptr<STACK_OF(SCT), SctListFree> scts(
      static_cast<STACK_OF(SCT)*>(X509_get_ext_d2i(leaf, NID_ct_precert_scts, nullptr, nullptr)));
  if (!scts || sk_SCT_num(scts.get()) == 0) throw Error("certificate: no SCT");
  std::string why = "certificate: no SCT from a CT log of the trusted root";
  for (int i = 0; i < sk_SCT_num(scts.get()); ++i) {
    const SCT* sct = sk_SCT_value(scts.get(), i);
    unsigned char* id = nullptr;
    std::size_t id_size = SCT_get0_log_id(sct, &id);
    Bytes log_id(reinterpret_cast<const char*>(id), id_size);
    std::int64_t seconds = static_cast<std::int64_t>(SCT_get_timestamp(sct) / 1000);
    for (const LogKey& log : logs) {
      if (log.log_id != log_id) continue;
      if (SCT_get_version(sct) != SCT_VERSION_V1 || !log.valid.contains(seconds) || seconds > now) {
        why = "certificate: SCT at a time its CT log is not trusted for";
        continue;
      }
      unsigned char* signature = nullptr;
      std::size_t signature_size = SCT_get0_signature(sct, &signature);
      auto data = signed_sct_data(leaf, issuer, sct);
      if (data && verify_signature(log.key.get(), *data,
                                   Bytes(reinterpret_cast<const char*>(signature), signature_size)))
        return;
      why = "certificate: SCT signature does not verify with its CT log's key";
    }
  }
  throw Error(why);
}

std::vector<std::string> certificate_identities(X509* leaf) {
  std::vector<std::string> identities;
  std::unique_ptr<GENERAL_NAMES, GeneralNamesFree> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return identities;
  Object username(OBJ_txt2obj("1.3.6.1.4.1.57264.1.7", 1));
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_URI || name->type == GEN_EMAIL) {
      identities.push_back(string_of(name->d.ia5));
    } else if (name->type == GEN_OTHERNAME && username &&
               OBJ_cmp(name->d.otherName->type_id, username.get()) == 0 &&
               name->d.otherName->value->type == V_ASN1_UTF8STRING) {
      identities.push_back(string_of(name->d.otherName->value->value.utf8string));
    }
  }
  return identities;
}

std::string certificate_oidc_issuer(X509* leaf) {
  if (auto value = extension_value(leaf, "1.3.6.1.4.1.57264.1.8")) {
    const auto* in = reinterpret_cast<const unsigned char*>(value->data());
    std::unique_ptr<ASN1_UTF8STRING, OpensslFree<ASN1_UTF8STRING_free>> text(
        d2i_ASN1_UTF8STRING(nullptr, &in, static_cast<long>(value->size())));
    if (text) return string_of(text.get());
  }
  return extension_value(leaf, "1.3.6.1.4.1.57264.1.1").value_or("");
}

bool certificate_signs_code(X509* leaf) {
  return (X509_get_extension_flags(leaf) & EXFLAG_XKUSAGE) != 0 &&
         (X509_get_extended_key_usage(leaf) & XKU_CODE_SIGN) != 0;
}

}  // namespace fluxop::sigstore
