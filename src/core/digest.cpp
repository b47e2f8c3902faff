#include "core/digest.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <limits>

#include "core/error.h"
#include "core/file.h"

namespace fluxop {

namespace {

// `prefix` and the lowercase hex digits of `hash`.
std::string hex_digest(std::string_view hash, const char* prefix = "sha256:") {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string digest = prefix;
  for (char c : hash) {
    auto byte = static_cast<unsigned char>(c);
    digest += kHex[byte >> 4];
    digest += kHex[byte & 0xf];
  }
  return digest;
}

}  // namespace

// SHA-256 through OpenSSL's low-level functions, deprecated since 3.0 in
// favour of EVP. EVP's first use initialises the default provider and reads
// openssl.cnf: 0.7 ms, more than a build hashes in all; a build that needs
// no TLS pays it for nothing. These run the same assembly (SHA-NI where the
// CPU has it) without a provider.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct Sha256::Context {
  SHA256_CTX state;
};

Sha256::Sha256() : context_(std::make_unique<Context>()) { SHA256_Init(&context_->state); }

void Sha256::update(std::string_view data) {
  SHA256_Update(&context_->state, data.data(), data.size());
}

std::string Sha256::finish_bytes() {
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256_Final(hash, &context_->state);
  SHA256_Init(&context_->state);
  return std::string(reinterpret_cast<const char*>(hash), sizeof hash);
}
#pragma GCC diagnostic pop

Sha256::~Sha256() = default;

std::string Sha256::finish() { return hex_digest(finish_bytes()); }

std::string sha256_bytes(std::string_view data) {
  Sha256 hash;
  hash.update(data);
  return hash.finish_bytes();
}

std::string sha256_digest(std::string_view data) { return hex_digest(sha256_bytes(data)); }

// HMAC (RFC 2104) over the SHA-256 above, for the same reason.
std::string hmac_sha256(std::string_view key, std::string_view data) {
  constexpr std::size_t kBlock = SHA256_CBLOCK;
  std::string padded_key = key.size() > kBlock ? sha256_bytes(key) : std::string(key);
  padded_key.resize(kBlock, '\0');
  auto pad = [&padded_key](char with) {
    std::string out = padded_key;
    for (char& c : out) c = static_cast<char>(c ^ with);
    return out;
  };
  Sha256 hash;
  std::string inner_pad = pad(0x36);
  hash.update(inner_pad);
  hash.update(data);
  std::string inner = hash.finish_bytes();
  std::string outer_pad = pad(0x5c);
  hash.update(outer_pad);
  hash.update(inner);
  std::string mac = hash.finish_bytes();
  for (std::string* secret : {&padded_key, &inner_pad, &outer_pad})
    OPENSSL_cleanse(secret->data(), secret->size());
  return hex_digest(mac, "hmac-sha256:");
}

std::string sha256_file(const std::string& path) {
  InputFile file(path, std::numeric_limits<std::uint64_t>::max());
  Sha256 hash;
  char buffer[1 << 16];
  while (std::size_t read = file.read(buffer, sizeof buffer)) hash.update({buffer, read});
  return hash.finish();
}

}  // namespace fluxop
