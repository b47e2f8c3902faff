#include "core/sigstore/crypto.h"

#include <ctime>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace fluxop::sigstore {

namespace {

using Bio = std::unique_ptr<BIO, OpensslFree<BIO_free>>;
using DigestContext = std::unique_ptr<EVP_MD_CTX, OpensslFree<EVP_MD_CTX_free>>;
using KeyContext = std::unique_ptr<EVP_PKEY_CTX, OpensslFree<EVP_PKEY_CTX_free>>;

Bio memory_bio(std::string_view bytes) {
  return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

const EVP_MD* digest_of(HashAlgorithm algorithm) {
  switch (algorithm) {
    case HashAlgorithm::sha384:
      return EVP_sha384();
    case HashAlgorithm::sha512:
      return EVP_sha512();
    case HashAlgorithm::sha256:
      break;
  }
  return EVP_sha256();
}

bool signs_whole_message(EVP_PKEY* key) {
  int id = EVP_PKEY_get_base_id(key);
  return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448;
}

template <typename T, int (*Encode)(const T*, unsigned char**)>
Bytes der_of(const T* object) {
  int size = Encode(object, nullptr);
  if (size <= 0) return {};
  Bytes der(static_cast<std::size_t>(size), '\0');
  auto* out = reinterpret_cast<unsigned char*>(der.data());
  Encode(object, &out);
  return der;
}

}  // namespace

PublicKey public_key_from_der(std::string_view der) {
  const auto* in = reinterpret_cast<const unsigned char*>(der.data());
  PublicKey key(d2i_PUBKEY(nullptr, &in, static_cast<long>(der.size())));
  if (key && in != reinterpret_cast<const unsigned char*>(der.data() + der.size())) return nullptr;
  return key;
}

PublicKey rsa_public_key_from_der(std::string_view der) {
  const auto* in = reinterpret_cast<const unsigned char*>(der.data());
  PublicKey key(d2i_PublicKey(EVP_PKEY_RSA, nullptr, &in, static_cast<long>(der.size())));
  if (key && in != reinterpret_cast<const unsigned char*>(der.data() + der.size())) return nullptr;
  return key;
}

PublicKey public_key_from_pem(std::string_view pem) {
  Bio bio = memory_bio(pem);
  return PublicKey(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

Certificate certificate_from_der(std::string_view der) {
  const auto* in = reinterpret_cast<const unsigned char*>(der.data());
  Certificate certificate(d2i_X509(nullptr, &in, static_cast<long>(der.size())));
  if (certificate && in != reinterpret_cast<const unsigned char*>(der.data() + der.size()))
    return nullptr;
  return certificate;
}

Certificate certificate_from_pem(std::string_view pem) {
  Bio bio = memory_bio(pem);
  return Certificate(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

SharedKey shared(PublicKey key) { return SharedKey(key.release(), EVP_PKEY_free); }

SharedCertificate shared(Certificate certificate) {
  return SharedCertificate(certificate.release(), X509_free);
}

Bytes certificate_der(X509* certificate) { return der_of<X509, i2d_X509>(certificate); }

Bytes public_key_der(EVP_PKEY* key) { return der_of<EVP_PKEY, i2d_PUBKEY>(key); }

std::optional<HashAlgorithm> hash_algorithm(std::string_view name) {
  if (name == "SHA2_256" || name == "sha256") return HashAlgorithm::sha256;
  if (name == "SHA2_384" || name == "sha384") return HashAlgorithm::sha384;
  if (name == "SHA2_512" || name == "sha512") return HashAlgorithm::sha512;
  return std::nullopt;
}

Bytes hash(HashAlgorithm algorithm, std::string_view data) {
  const EVP_MD* md = digest_of(algorithm);
  Bytes out(static_cast<std::size_t>(EVP_MD_get_size(md)), '\0');
  EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), nullptr, md,
             nullptr);
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::optional<Bytes> unhex(std::string_view digits) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (digits.size() % 2 != 0) return std::nullopt;
  Bytes bytes;
  bytes.reserve(digits.size() / 2);
  for (std::size_t i = 0; i < digits.size(); i += 2) {
    int high = nibble(digits[i]);
    int low = nibble(digits[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes += static_cast<char>(high * 16 + low);
  }
  return bytes;
}

HashAlgorithm signing_hash(EVP_PKEY* key) {
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) return HashAlgorithm::sha256;
  switch (EVP_PKEY_get_bits(key)) {
    case 384:
      return HashAlgorithm::sha384;
    case 521:
      return HashAlgorithm::sha512;
    default:
      return HashAlgorithm::sha256;
  }
}

bool verify_signature(EVP_PKEY* key, std::string_view message, std::string_view signature,
                      HashAlgorithm algorithm) {
  DigestContext context(EVP_MD_CTX_new());
  if (!context) return false;
  const EVP_MD* md = signs_whole_message(key) ? nullptr : digest_of(algorithm);
  if (EVP_DigestVerifyInit(context.get(), nullptr, md, nullptr, key) != 1) return false;
  return EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                          message.size()) == 1;
}

bool verify_prehashed(EVP_PKEY* key, std::string_view digest, std::string_view signature,
                      HashAlgorithm algorithm) {
  if (signs_whole_message(key)) return false;
  KeyContext context(EVP_PKEY_CTX_new(key, nullptr));
  if (!context || EVP_PKEY_verify_init(context.get()) != 1 ||
      EVP_PKEY_CTX_set_signature_md(context.get(), digest_of(algorithm)) != 1)
    return false;
  return EVP_PKEY_verify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                         signature.size(), reinterpret_cast<const unsigned char*>(digest.data()),
                         digest.size()) == 1;
}

std::optional<std::int64_t> asn1_seconds(const ASN1_TIME* time) {
  std::tm utc{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &utc) != 1) return std::nullopt;
  return static_cast<std::int64_t>(timegm(&utc));
}

bool self_signed(X509* certificate) {
  return X509_check_issued(certificate, certificate) == X509_V_OK &&
         X509_verify(certificate, X509_get0_pubkey(certificate)) == 1;
}

}  // namespace fluxop::sigstore
