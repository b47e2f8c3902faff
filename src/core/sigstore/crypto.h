// The few OpenSSL operations Sigstore verification is made of, each once:
// keys and certificates decoded, signatures checked, hashes, times. Bytes
// travel as std::string.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/evp.h>
#include <openssl/x509.h>

namespace fluxop::sigstore {

using Bytes = std::string;

template <auto Free>
struct OpensslFree {
  template <typename T>
  void operator()(T* object) const {
    Free(object);
  }
};
using PublicKey = std::unique_ptr<EVP_PKEY, OpensslFree<EVP_PKEY_free>>;
using Certificate = std::unique_ptr<X509, OpensslFree<X509_free>>;
// Keys and certificates of a trusted root, shared by the checks that use them.
using SharedKey = std::shared_ptr<EVP_PKEY>;
using SharedCertificate = std::shared_ptr<X509>;

// A DER SubjectPublicKeyInfo, a PEM "PUBLIC KEY", a DER or PEM certificate;
// nullptr when the bytes are not one.
PublicKey public_key_from_der(std::string_view der);
// A DER RSAPublicKey (PKCS #1), as older trusted roots hold CT logs' keys.
PublicKey rsa_public_key_from_der(std::string_view der);
PublicKey public_key_from_pem(std::string_view pem);
Certificate certificate_from_der(std::string_view der);
Certificate certificate_from_pem(std::string_view pem);
SharedKey shared(PublicKey key);
SharedCertificate shared(Certificate certificate);
Bytes certificate_der(X509* certificate);
Bytes public_key_der(EVP_PKEY* key);

enum class HashAlgorithm { sha256, sha384, sha512 };
// SHA2_256, sha256 (the spellings of bundles and Rekor entries); nullopt for another.
std::optional<HashAlgorithm> hash_algorithm(std::string_view name);
Bytes hash(HashAlgorithm algorithm, std::string_view data);
inline Bytes sha256(std::string_view data) { return hash(HashAlgorithm::sha256, data); }
std::string hex(std::string_view bytes);
// The bytes of lowercase hex digits; nullopt for anything else.
std::optional<Bytes> unhex(std::string_view digits);

// The hash `key` signs with, as the Sigstore algorithm registry (and cosign)
// pair them: SHA-384 for ECDSA P-384, SHA-512 for P-521, SHA-256 for the
// rest (P-256, RSA); Ed25519 hashes nothing.
HashAlgorithm signing_hash(EVP_PKEY* key);

// Whether `signature` is `key`'s over `message` (ECDSA and RSA PKCS#1 over
// its `algorithm` hash, Ed25519 over the message itself).
bool verify_signature(EVP_PKEY* key, std::string_view message, std::string_view signature,
                      HashAlgorithm algorithm = HashAlgorithm::sha256);
// The same over the message's hash alone: ECDSA and RSA only (Ed25519
// signs the whole message, and is refused).
bool verify_prehashed(EVP_PKEY* key, std::string_view digest, std::string_view signature,
                      HashAlgorithm algorithm = HashAlgorithm::sha256);

// Seconds since the epoch of an ASN.1 time; nullopt when it is not one.
std::optional<std::int64_t> asn1_seconds(const ASN1_TIME* time);

// Whether the certificate is signed by its own key (a root).
bool self_signed(X509* certificate);

}  // namespace fluxop::sigstore
