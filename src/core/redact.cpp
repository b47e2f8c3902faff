#include "core/redact.h"

#include <string>

namespace fluxop {

namespace {

// Characters that end a word a URL may be part of: what a message puts
// around a URL, never what a URL's user information may hold (brackets,
// commas and semicolons may be in a password).
bool ends_word(char c) {
  return static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' ||
         c == '`' || c == '\\' || static_cast<unsigned char>(c) == 0x7f;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool secret_parameter(std::string_view name) {
  std::string lowered;
  for (char c : name) lowered += lower(c);
  for (std::string_view word :
       {"token", "password", "passwd", "secret", "signature", "sig", "key", "credential", "auth"}) {
    if (lowered.find(word) != std::string::npos) return true;
  }
  return false;
}

// One word (no space, quote or bracket in it) with its secrets redacted.
std::string redact_word(std::string_view word) {
  std::string out(word);
  // User information: what precedes the last '@' of an authority, from the
  // scheme's "//" to that '@'; without a scheme (a proxy given as
  // "user:pass@host:port", a mistyped "htps:/user:pass@host",
  // "proxy=user:pass@host"), from the last '/' or '=' before the first ':'.
  std::size_t scheme = out.find("://");
  std::size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  if (scheme == std::string::npos) {
    std::size_t colon = out.find(':');
    if (colon == std::string::npos || out.find('@', colon) == std::string::npos) return out;
    std::size_t before = colon == 0 ? std::string::npos : out.find_last_of("/=", colon - 1);
    start = before == std::string::npos ? 0 : before + 1;
  }
  // The authority's end: after the scheme, its first '/', '?' or '#';
  // without one, the first after an '@' (a mistyped "htps:/" holds a '/').
  std::size_t end =
      out.find_first_of("/?#", scheme != std::string::npos ? start : out.find('@', start));
  std::size_t at = out.rfind('@', end == std::string::npos ? std::string::npos : end);
  if (at != std::string::npos && at >= start) {
    std::string_view info = std::string_view(out).substr(start, at - start);
    std::string_view after = std::string_view(out).substr(at + 1);
    // "flux@sha256:<hex>" is a digest, "name@example.com" an address: only
    // a password ("user:pass") or a URL's user ("https://TOKEN@") is secret.
    bool digest = after.starts_with("sha256:") || after.starts_with("sha512:");
    if (!info.empty() && !digest &&
        (scheme != std::string::npos || info.find(':') != std::string_view::npos)) {
      out.replace(start, at - start, "***");
    }
  }
  // Secret query parameters: "?X-Amz-Signature=...&token=...".
  std::size_t query = out.find('?', start);
  if (scheme == std::string::npos || query == std::string::npos) return out;
  for (std::size_t at_name = query + 1; at_name < out.size();) {
    std::size_t amp = out.find_first_of("&#", at_name);
    if (amp == std::string::npos) amp = out.size();
    std::size_t eq = out.find('=', at_name);
    if (eq != std::string::npos && eq < amp &&
        secret_parameter(std::string_view(out).substr(at_name, eq - at_name)) && amp > eq + 1) {
      out.replace(eq + 1, amp - eq - 1, "***");
      amp = eq + 4;
    }
    if (amp >= out.size() || out[amp] == '#') break;
    at_name = amp + 1;
  }
  return out;
}

// A word with each URL in it redacted as one, from each "://" to the next:
// a URL in another's query ("?next=https://user:pass@host"), URLs run
// together. A loop, not a recursion: a word may hold a million.
std::string redact_urls(std::string_view word) {
  std::string out;
  std::size_t from = 0;
  std::size_t next = word.find("://");
  if (next != std::string_view::npos) next = word.find("://", next + 3);
  while (next != std::string_view::npos) {
    out += redact_word(word.substr(from, next - from));
    from = next;
    next = word.find("://", next + 3);
  }
  return out + redact_word(word.substr(from));
}

}  // namespace

std::string redact_secrets(std::string_view text) {
  // Most text holds no URL: returned as it is, at the cost of one scan.
  if (text.find('@') == std::string_view::npos && text.find('?') == std::string_view::npos)
    return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = at;
    while (end < text.size() && !ends_word(text[end])) ++end;
    if (end > at) {
      out += redact_urls(text.substr(at, end - at));
      at = end;
    } else {
      out += text[at++];
    }
  }
  return out;
}

}  // namespace fluxop
