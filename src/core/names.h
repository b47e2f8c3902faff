// Kubernetes' rules for names, as the API server applies them: a value that
// breaks them is refused on apply, and one that becomes part of a path (a
// name such as "../x") could reach outside it.
#pragma once

#include <string_view>

namespace fluxop {

// At most 63 lowercase letters, digits and '-', starting and ending with a
// letter or digit: namespaces, Service names, names other names are built on.
bool is_dns_label(std::string_view name);

// At most 253 characters: DNS labels (of any length) joined by '.'. Most
// object names: Secrets, ServiceAccounts, Flux sources; also DNS domains.
bool is_dns_subdomain(std::string_view name);

// A label or annotation key: a name of at most 63 letters, digits, '-', '_'
// and '.', starting and ending with a letter or digit, optionally after a DNS
// subdomain and '/' ("sharding.fluxcd.io/key").
bool is_label_key(std::string_view key);

// A label value: empty, or at most 63 letters, digits, '-', '_' and '.',
// starting and ending with a letter or digit.
bool is_label_value(std::string_view value);

// What every object's name is, whatever its kind (Kubernetes' path segment
// rule, which each kind narrows): at most 253 characters, not "." or "..",
// without '/', '%' or control characters, so that it is a URL path segment
// and a file name of its own.
bool is_object_name(std::string_view name);

// One of the rules above and the error message for a value that breaks it.
struct NameRule {
  bool (*valid)(std::string_view);
  std::string_view requirement;
};

inline constexpr NameRule kDnsLabel{
    is_dns_label,
    "must be a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and "
    "ending with a letter or digit"};
inline constexpr NameRule kDnsSubdomain{
    is_dns_subdomain,
    "must be a DNS-1123 subdomain: at most 253 characters, parts of lowercase letters, digits "
    "and '-' joined by '.', each starting and ending with a letter or digit"};
inline constexpr NameRule kLabelKey{
    is_label_key,
    "must be a label key: at most 63 letters, digits, '-', '_' and '.', starting and ending with "
    "a letter or digit, optionally after a DNS-1123 subdomain and '/'"};
// Annotation keys follow the label keys' rule.
inline constexpr NameRule kAnnotationKey{
    is_label_key,
    "must be an annotation key: at most 63 letters, digits, '-', '_' and '.', starting and "
    "ending with a letter or digit, optionally after a DNS-1123 subdomain and '/'"};
inline constexpr NameRule kLabelValue{
    is_label_value,
    "must be a label value: empty, or at most 63 letters, digits, '-', '_' and '.', starting "
    "and ending with a letter or digit"};

}  // namespace fluxop
