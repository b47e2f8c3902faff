#include "core/names.h"

#include <algorithm>

namespace fluxop {

namespace {

constexpr std::size_t kMaxLabelLength = 63;
constexpr std::size_t kMaxSubdomainLength = 253;

bool is_lower_alphanumeric(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alphanumeric(char c) { return is_lower_alphanumeric(c) || (c >= 'A' && c <= 'Z'); }

// Not empty, starting and ending with an `edge` character, and every
// character either an `edge` one or one of `inner`.
bool well_formed(std::string_view text, bool (*edge)(char), std::string_view inner) {
  return !text.empty() && edge(text.front()) && edge(text.back()) &&
         std::all_of(text.begin(), text.end(),
                     [&](char c) { return edge(c) || inner.find(c) != std::string_view::npos; });
}

// A DNS label without its length limit: a part of a DNS subdomain.
bool is_domain_part(std::string_view part) { return well_formed(part, is_lower_alphanumeric, "-"); }

}  // namespace

bool is_dns_label(std::string_view name) {
  return name.size() <= kMaxLabelLength && is_domain_part(name);
}

bool is_dns_subdomain(std::string_view name) {
  if (name.size() > kMaxSubdomainLength) return false;
  for (std::size_t start = 0;;) {
    std::size_t dot = name.find('.', start);
    if (!is_domain_part(name.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_label_key(std::string_view key) {
  std::size_t slash = key.find('/');
  if (slash != std::string_view::npos && !is_dns_subdomain(key.substr(0, slash))) return false;
  std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  return !name.empty() && is_label_value(name);
}

bool is_object_name(std::string_view name) {
  return !name.empty() && name.size() <= kMaxSubdomainLength && name != "." && name != ".." &&
         std::none_of(name.begin(), name.end(), [](char c) {
           return c == '/' || c == '%' || static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
         });
}

bool is_label_value(std::string_view value) {
  return value.empty() ||
         (value.size() <= kMaxLabelLength && well_formed(value, is_alphanumeric, "-_."));
}

}  // namespace fluxop
