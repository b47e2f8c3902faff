// A Sigstore trusted root (trusted_root.json, media type
// application/vnd.dev.sigstore.trustedroot+json): the keys of the
// transparency logs and CT logs, and the certificate chains of the
// certificate and timestamp authorities, each with the time it is trusted
// for. The public-good instance's is compiled in (share/sigstore); nothing
// refreshes it over the network.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sigstore/crypto.h"

namespace fluxop::sigstore {

// Seconds since the epoch; both ends included.
struct TimeRange {
  std::int64_t start = 0;
  std::optional<std::int64_t> end;
  bool contains(std::int64_t time) const { return time >= start && (!end || time <= *end); }
};

// A transparency log (Rekor) or a certificate transparency log.
struct LogKey {
  std::string base_url;
  Bytes log_id;  // the key's id: what entries and SCTs name the log by
  SharedKey key;
  TimeRange valid;
};

// A Fulcio CA or a timestamp authority: its chain, the leaf-most first.
struct Authority {
  std::string uri;
  std::vector<SharedCertificate> chain;
  TimeRange valid;
};

struct TrustedRoot {
  std::vector<LogKey> transparency_logs;
  std::vector<LogKey> ct_logs;
  std::vector<Authority> certificate_authorities;
  std::vector<Authority> timestamp_authorities;

  const LogKey* transparency_log(std::string_view log_id) const;
};

// Throws fluxop::Error "<name>: <field>: <what is wrong>".
TrustedRoot parse_trusted_root(std::string_view json, const std::string& name);

// The public-good instance's (share/sigstore/trusted_root.json), parsed once.
const TrustedRoot& public_good_trusted_root();

}  // namespace fluxop::sigstore
