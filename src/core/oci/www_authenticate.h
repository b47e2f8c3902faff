// The challenges of a WWW-Authenticate header (RFC 9110 section 11.6.1), as
// registries send them: `Bearer realm="https://ghcr.io/token",service="ghcr.io",
// scope="repository:org/repo:pull"` or `Basic realm="Registry"`.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fluxop::oci {

struct Challenge {
  std::string scheme;                         // lowercased: "bearer", "basic"
  std::map<std::string, std::string> params;  // keys lowercased, values unquoted
};

// Every challenge of the header, in order; malformed parts end the parse
// (what was read before them is kept), since a registry's header is only a hint.
std::vector<Challenge> parse_www_authenticate(std::string_view header);

}  // namespace fluxop::oci
