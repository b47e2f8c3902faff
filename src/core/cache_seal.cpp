#include "core/cache_seal.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <filesystem>

#include "core/digest.h"
#include "core/error.h"
#include "core/file.h"

namespace fluxop {

namespace {

constexpr std::size_t kKeyBytes = 32;

}  // namespace

CacheSeal CacheSeal::from_key_file(const std::string& key_file) {
  if (key_file.empty()) return {};
  // A key that is anything but what this creates (a FIFO, a device, a
  // short file) is no key: the caches are then only slower.
  auto read_key = [&] {
    std::optional<std::string> key = read_kept_file(key_file, kKeyBytes);
    return key && key->size() == kKeyBytes ? CacheSeal(std::move(*key)) : CacheSeal();
  };
  if (CacheSeal seal = read_key(); seal.has_key()) return seal;
  std::string key(kKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), kKeyBytes) != 1) return {};
  try {
    create_directories(std::filesystem::path(key_file).parent_path().string());
    if (create_file_atomically(key_file, key, 0600)) return CacheSeal(std::move(key));
  } catch (const Error&) {
    return {};
  }
  return read_key();  // another process created it first
}

std::string CacheSeal::user_key_file() {
  const char* state = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path base;
  if (state && std::filesystem::path(state).is_absolute()) {
    base = state;
  } else if (home && *home) {
    base = std::filesystem::path(home) / ".local" / "state";
  } else {
    return "";
  }
  return (base / "fluxopctl" / "cache.key").string();
}

const CacheSeal& CacheSeal::user() {
  static const CacheSeal seal = from_key_file(user_key_file());
  return seal;
}

std::string CacheSeal::seal(std::string_view data) const {
  return key_.empty() ? "" : hmac_sha256(key_, data);
}

bool CacheSeal::opens(std::string_view data, std::string_view seal) const {
  if (key_.empty()) return false;
  std::string expected = this->seal(data);
  return expected.size() == seal.size() &&
         CRYPTO_memcmp(expected.data(), seal.data(), seal.size()) == 0;
}

}  // namespace fluxop
