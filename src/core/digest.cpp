#include "core/digest.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <limits>

#include "core/error.h"
#include "core/file.h"

namespace fluxop {

namespace {

// `prefix` and the lowercase hex digits of `hash`.
std::string hex_digest(const unsigned char* hash, unsigned int size,
                       const char* prefix = "sha256:") {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string digest = prefix;
  for (unsigned int i = 0; i < size; ++i) {
    digest += kHex[hash[i] >> 4];
    digest += kHex[hash[i] & 0xf];
  }
  return digest;
}

}  // namespace

std::string sha256_bytes(std::string_view data) {
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), hash, &size, EVP_sha256(), nullptr) != 1) {
    throw Error("SHA-256 failed");
  }
  return std::string(reinterpret_cast<const char*>(hash), size);
}

std::string sha256_digest(std::string_view data) {
  std::string hash = sha256_bytes(data);
  return hex_digest(reinterpret_cast<const unsigned char*>(hash.data()),
                    static_cast<unsigned int>(hash.size()));
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &size))
    throw Error("HMAC-SHA256 failed");
  return hex_digest(mac, size, "hmac-sha256:");
}

struct Sha256::Context {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md{EVP_MD_CTX_new(), EVP_MD_CTX_free};
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (!context_->md || EVP_DigestInit_ex(context_->md.get(), EVP_sha256(), nullptr) != 1) {
    throw Error("SHA-256 failed");
  }
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view data) {
  if (EVP_DigestUpdate(context_->md.get(), data.data(), data.size()) != 1) {
    throw Error("SHA-256 failed");
  }
}

std::string Sha256::finish() {
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context_->md.get(), hash, &size) != 1 ||
      EVP_DigestInit_ex(context_->md.get(), EVP_sha256(), nullptr) != 1) {
    throw Error("SHA-256 failed");
  }
  return hex_digest(hash, size);
}

std::string sha256_file(const std::string& path) {
  InputFile file(path, std::numeric_limits<std::uint64_t>::max());
  Sha256 hash;
  char buffer[1 << 16];
  while (std::size_t read = file.read(buffer, sizeof buffer)) hash.update({buffer, read});
  return hash.finish();
}

}  // namespace fluxop
