#include "core/digest.h"

#include <openssl/evp.h>

#include <fstream>

#include "core/error.h"

namespace fluxop {

namespace {

std::string hex_digest(const unsigned char* hash, unsigned int size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string digest = "sha256:";
  for (unsigned int i = 0; i < size; ++i) {
    digest += kHex[hash[i] >> 4];
    digest += kHex[hash[i] & 0xf];
  }
  return digest;
}

}  // namespace

std::string sha256_digest(std::string_view data) {
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), hash, &size, EVP_sha256(), nullptr) != 1) {
    throw Error("SHA-256 failed");
  }
  return hex_digest(hash, size);
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
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(path + ": cannot read");
  Sha256 hash;
  char buffer[1 << 16];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    hash.update({buffer, static_cast<std::size_t>(file.gcount())});
  }
  if (file.bad()) throw Error(path + ": cannot read");
  return hash.finish();
}

}  // namespace fluxop
