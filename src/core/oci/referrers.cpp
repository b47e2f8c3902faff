#include "core/oci/referrers.h"

namespace fluxop::oci {

std::string referrers_tag(std::string_view digest) {
  std::string tag(digest);
  if (auto colon = tag.find(':'); colon != std::string::npos) tag[colon] = '-';
  return tag;
}

bool referrers_api_not_served(long status) {
  return status == 400 || status == 404 || status == 405 || status == 501;
}

}  // namespace fluxop::oci
