// Content digests (SHA-256 through OpenSSL's libcrypto, without its providers).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace fluxop {

// "sha256:<64 lowercase hex digits>" of `data`.
std::string sha256_digest(std::string_view data);

// The 32 bytes of `data`'s SHA-256 (a Content-Security-Policy hash is their base64).
std::string sha256_bytes(std::string_view data);

// "hmac-sha256:<64 lowercase hex digits>" of `data` under `key`.
std::string hmac_sha256(std::string_view key, std::string_view data);

// SHA-256 over data that arrives in pieces (a download, a file).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view data);
  // "sha256:<hex>" of everything so far; the hash then starts over.
  std::string finish();
  // The same as its 32 bytes.
  std::string finish_bytes();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// "sha256:<hex>" of a file's content, read in parts through the bounded
// reader (a regular file, of any size); throws fluxop::Error naming the path
// when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace fluxop
