// libFuzzer target for the one redaction (core/error.h): whatever text
// surrounds a URL, no password or token of it survives into a message. The
// input is cut at NUL bytes into the text before, a user, a secret, a host
// and the text after; the secret goes where a URL keeps secrets (a password,
// a URL's user, a proxy's user:password without a scheme, a token in the
// query), and no form of a message (printable, quote at any length,
// one_line) may hold it. A secret that the surrounding text holds anyway is
// no finding.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/redact.h"

namespace {

// Characters a URL's user information or a query value may hold unencoded
// (RFC 3986 unreserved, sub-delims but the quote and '&', which ends a query
// value, percent).
bool secret_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-._~!$()*+,;=%").find(c) != std::string_view::npos;
}

std::string keep(std::string_view text, bool (*allowed)(char)) {
  std::string out;
  for (char c : text) {
    if (allowed(c)) out += c;
  }
  return out;
}

bool host_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  while (parts.size() < 4) {
    std::size_t nul = input.find('\0');
    if (nul == std::string_view::npos) break;
    parts.push_back(input.substr(0, nul));
    input.remove_prefix(nul + 1);
  }
  if (parts.size() < 4) return 0;
  std::string before(parts[0]), after(input);
  if (before.find('\x01') != std::string::npos || after.find('\x01') != std::string::npos) return 0;
  std::string user = keep(parts[1], secret_character);
  std::string secret = keep(parts[2], secret_character);
  std::string host = keep(parts[3], host_character);
  if (secret.size() < 6 || host.empty()) return 0;
  // The secret's places, as a mark the text cannot hold: a secret the rest
  // of the text holds anyway is no finding.
  const std::string mark = "\x01";
  std::vector<std::string> urls = {
      "https://" + user + ":" + mark + "@" + host + "/org/repo.git",
      "oci://" + user + (user.empty() ? "" : ":") + mark + "@" + host + "/flux:v1",
      "htps://" + user + ":" + mark + "@" + host + ":3128",
      "https://" + mark + "@" + host,
      user + ":" + mark + "@" + host + ":3128",
      "http://" + host + "/blob?X-Amz-Signature=" + mark + "&a=b",
      "https://" + host + "/token?service=x&access_token=" + mark,
  };
  for (const std::string& url : urls) {
    for (const std::string& marked : {before + " " + url + " " + after, before + " '" + url + "'",
                                      url + "\n" + after, "\"" + url + "\": " + after}) {
      if ((marked + "***").find(secret) != std::string::npos) continue;
      std::string text = marked;
      text.replace(text.find(mark), mark.size(), secret);
      for (const std::string& message :
           {fluxop::printable(text), fluxop::quote(text), fluxop::quote(text, 1000),
            fluxop::one_line(text), fluxop::redact_secrets(text)}) {
        if (message.find(secret) != std::string::npos) std::abort();
      }
    }
  }
  return 0;
}
