// Parsed YAML kept on disk, keyed by the SHA-256 of the text. The Flux
// manifests are read on every build and yaml-cpp spends most of a build's
// time on them; a cached parse loads in a fraction of that.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cache_seal.h"
#include "core/yaml/node.h"

namespace fluxop::yaml {

class ParseCache {
 public:
  // Texts smaller than this parse faster than a cache entry loads.
  static constexpr std::size_t kMinimumSize = 1024;

  // An empty `dir`, or a seal without a key, disables the cache. Null
  // `seal`: the user's (CacheSeal::user()), made when first needed.
  explicit ParseCache(std::filesystem::path dir, const CacheSeal* seal = nullptr);

  // The documents of `text`, as parse_documents() gives them. A missing,
  // damaged or forged entry (one the seal does not open: see encode_entry)
  // is parsed anew, and its new entry kept for commit().
  std::vector<Node> parse_documents(std::string_view text, std::string_view source);

  // Writes the entries parsed since the last commit or discard, each whole
  // or not at all; called once what read them succeeded, so that a run that
  // fails writes nothing. Failing to write is not an error (the cache only
  // saves time).
  void commit();
  // Forgets them (a daemon's render that failed).
  void discard() { pending_.clear(); }

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  const CacheSeal* seal_;
  std::vector<std::pair<std::filesystem::path, std::string>> pending_;  // entry, data
};

// The parse cache under fluxopctl's cache root (core/cache_root.h):
// <cache_root>/parsed, sealed with the user's key (CacheSeal::user());
// disabled when `cache_root` is empty, FLUXOPCTL_NO_PARSE_CACHE is set or
// there is no key. The command that renders creates it,
// hands it to what parses, and commits or discards it.
ParseCache user_parse_cache(const std::string& cache_root);

// The documents of `text`: through `cache` when given, else parsed.
std::vector<Node> parse_documents(std::string_view text, std::string_view source,
                                  ParseCache* cache);

// Encoding of documents for the cache (exposed for tests).
std::string encode_documents(const std::vector<Node>& documents);
// nullopt when `data` is not a complete encoding.
std::optional<std::vector<Node>> decode_documents(std::string_view data);

// A cache entry: the documents parsed from the text whose digest
// ("sha256:<hex>") is `source_digest`, with that digest and the seal of both.
std::string encode_entry(std::string_view source_digest, const std::vector<Node>& documents,
                         const CacheSeal& seal);
// The documents of an entry; nullopt unless it is of this format version,
// was parsed from the text of `source_digest`, and `seal` opens it: whole,
// unchanged, and written by a holder of the key.
std::optional<std::vector<Node>> decode_entry(std::string_view data, std::string_view source_digest,
                                              const CacheSeal& seal);

}  // namespace fluxop::yaml
