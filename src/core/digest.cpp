#include "core/digest.h"

#include <openssl/evp.h>

#include "core/error.h"

namespace fluxop {

std::string sha256_digest(std::string_view data) {
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), hash, &size, EVP_sha256(), nullptr) != 1) {
    throw Error("SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string digest = "sha256:";
  for (unsigned int i = 0; i < size; ++i) {
    digest += kHex[hash[i] >> 4];
    digest += kHex[hash[i] & 0xf];
  }
  return digest;
}

}  // namespace fluxop
