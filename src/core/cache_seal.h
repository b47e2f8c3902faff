// The seal on what fluxopctl derives into its caches (a parse-cache entry, a
// layer's index, a tag's record). Whoever can write the cache directory can
// compute any digest of what they plant there; they cannot compute an
// HMAC-SHA256 under a key they cannot read. The key lives outside the cache,
// in the user's state directory, 0600: an entry planted, rewritten, restored
// from another machine's or branch's cache, or written by another user of a
// shared cache does not open, and is derived again from what it was derived
// from (the text, the blob) or, for a tag's record, not trusted.
#pragma once

#include <string>
#include <string_view>

namespace fluxop {

class CacheSeal {
 public:
  // No key: seals nothing and opens nothing (every entry is derived again).
  CacheSeal() = default;
  explicit CacheSeal(std::string key) : key_(std::move(key)) {}

  // The user's seal: the key in `key_file`, created there (32 random bytes,
  // 0600, exclusively) when missing. A key that cannot be read or created
  // (no HOME, a read-only home) gives the seal of no key.
  static CacheSeal from_key_file(const std::string& key_file);
  // The same for $XDG_STATE_HOME/fluxopctl/cache.key, or
  // $HOME/.local/state/fluxopctl/cache.key, made once per process.
  static const CacheSeal& user();
  // Where user() keeps its key; empty without HOME.
  static std::string user_key_file();

  bool has_key() const { return !key_.empty(); }
  // "hmac-sha256:<64 hex digits>" of `data`; empty without a key.
  std::string seal(std::string_view data) const;
  // Whether `seal` is this key's seal of `data`; never without a key.
  bool opens(std::string_view data, std::string_view seal) const;

 private:
  std::string key_;
};

}  // namespace fluxop
