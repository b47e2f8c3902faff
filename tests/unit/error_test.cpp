#include "core/error.h"
#include "core/redact.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace fluxop {
namespace {

TEST_CASE("quote: a short value whole, in double quotes") {
  CHECK(quote("") == "\"\"");
  CHECK(quote("ten gigs") == "\"ten gigs\"");
  CHECK(quote(std::string(40, 'a')) == "\"" + std::string(40, 'a') + "\"");
}

TEST_CASE("quote: a long value cut after 40 characters") {
  CHECK(quote(std::string(41, 'a')) == "\"" + std::string(40, 'a') + "\"...");
  std::string huge(10 * 1024 * 1024, 'x');
  CHECK(quote(huge) == "\"" + std::string(40, 'x') + "\"...");
  // Characters, not bytes: a cut never splits one.
  std::string accented;
  for (int i = 0; i < 41; ++i) accented += "\u00e9";
  CHECK(quote(accented) == "\"" + accented.substr(0, 80) + "\"...");
}

TEST_CASE("quote: escapes keep the message one line") {
  CHECK(quote("a\nb") == "\"a\\nb\"");
  CHECK(quote("a\r\tb") == "\"a\\r\\tb\"");
  CHECK(quote("say \"hi\" \\o/") == "\"say \\\"hi\\\" \\\\o/\"");
  CHECK(quote(std::string("a\0b\x1b\x7f", 5)) == "\"a\\x00b\\x1b\\x7f\"");
  std::string lines;
  for (int i = 0; i < 100; ++i) lines += "line\n";
  CHECK(quote(lines).find('\n') == std::string::npos);
}

}  // namespace
}  // namespace fluxop

namespace fluxop {
namespace {

TEST_CASE("one_line: lines joined, a value no quote() shortened cut") {
  CHECK(one_line("a: b\nc") == "a: b c");
  std::string huge(10 * 1024 * 1024, 'x');
  CHECK(one_line("f.yaml: no such file: " + huge + " (here)") ==
        "f.yaml: no such file: " + std::string(40, 'x') + "... (here)");
  std::string path(kLongestWord, 'p');
  CHECK(one_line("at " + path) == "at " + path);  // long, but not past the bound
  CHECK(one_line("") == "");
  CHECK(one_line("end ") == "end ");
}

}  // namespace
}  // namespace fluxop

namespace fluxop {
namespace {

TEST_CASE("printable: control characters a peer sent never reach the terminal raw") {
  // Clear the screen, set the window title, a CSI as C1, a fake error line.
  CHECK(printable("\x1b[2J\x1b]0;pwned\x07") == "\\x1b[2J\\x1b]0;pwned\\x07");
  CHECK(printable("a\xc2\x9b"
                  "31mred") == "a\\x9b31mred");
  CHECK(printable("ok\nerror: fake") == "ok\\nerror: fake");
  CHECK(printable(std::string("\0\x7f", 2)) == "\\x00\\x7f");
  // The rest is kept: quotes, backslashes, UTF-8 beyond the C1 block.
  CHECK(printable("say \"hi\" \\ caf\xc3\xa9 \xc2\xa0") == "say \"hi\" \\ caf\xc3\xa9 \xc2\xa0");
}

TEST_CASE("one_line and quote escape what printable escapes") {
  CHECK(one_line("status: \x1b[2Jdone\nnext") == "status: \\x1b[2Jdone next");
  CHECK(quote("\xc2\x9b") == "\"\\x9b\"");
  CHECK(quote("abc", std::string::npos) == "\"abc\"");
}

}  // namespace
}  // namespace fluxop

namespace fluxop {
namespace {

TEST_CASE("printable_json: DEL and C1 escaped as JSON escapes, the rest as the printer wrote it") {
  CHECK(printable_json("{\"a\":\"x\xc2\x9b"
                       "31m\x7f\\u001b\xc3\xa9\"}") ==
        "{\"a\":\"x\\u009b31m\\u007f\\u001b\xc3\xa9\"}");
  CHECK(nlohmann::json::parse(printable_json(nlohmann::json("\xc2\x85\x7f").dump())) ==
        "\xc2\x85\x7f");
}

}  // namespace
}  // namespace fluxop

namespace fluxop {
namespace {

// Issue 41: a proxy's password, a token in .spec.sync.url or in an oci://
// reference never reaches a message, whole or cut.
TEST_CASE("redaction: a URL's user information and secret query values, in every message form") {
  CHECK(redact_secrets("HTTPS_PROXY: htps://flux:s3cret@proxy:3128: not a URL") ==
        "HTTPS_PROXY: htps://***@proxy:3128: not a URL");
  CHECK(redact_secrets("Unsupported proxy syntax in 'http://flux:s3cret@proxy:x'") ==
        "Unsupported proxy syntax in 'http://***@proxy:x'");
  CHECK(redact_secrets("proxy flux:s3cret@proxy:3128 refused") == "proxy ***@proxy:3128 refused");
  CHECK(redact_secrets("proxy-url=flux:s3cret@proxy") == "proxy-url=***@proxy");
  CHECK(redact_secrets("htps:/flux:s3cret@proxy") == "***@proxy");
  CHECK(redact_secrets("https://ghp_token@github.com/org/repo") ==
        "https://***@github.com/org/repo");
  CHECK(redact_secrets("oci://user:p@ss,w(o)rd@ghcr.io/org/flux:v1") ==
        "oci://***@ghcr.io/org/flux:v1");
  CHECK(redact_secrets("https://s3/b?X-Amz-Credential=AK&X-Amz-Signature=abc&x=1#f") ==
        "https://s3/b?X-Amz-Credential=***&X-Amz-Signature=***&x=1#f");
  // Each URL of a word: in another's query, or run together.
  CHECK(redact_secrets("https://host/login?next=https://flux:s3cret@git.example.com/r") ==
        "https://host/login?next=https://***@git.example.com/r");
  CHECK(redact_secrets("http://u:s3cret@proxy:3128oci://t0ken@registry/r") ==
        "http://***@proxy:3128oci://***@registry/r");
  // What is no secret stays.
  for (std::string_view kept :
       {"oci://ghcr.io/org/flux@sha256:0123", "ghcr.io/org/flux:v1@sha256:0123", "a@b.example.com",
        "https://github.com/org/repo?ref=main", "time: 12:30 @ home", "no URL at all"}) {
    CHECK(redact_secrets(kept) == kept);
  }
  // Cut at 40 characters, the token is gone before the cut.
  std::string url = "https://x-access-token:ghp_0123456789abcdefghij@github.com/org/repo.git";
  CHECK(quote(url).find("ghp_") == std::string::npos);
  CHECK(quote(url) == "\"https://***@github.com/org/repo.git\"");
  CHECK(one_line("error: " + url).find("ghp_") == std::string::npos);
  CHECK(printable(url).find("ghp_") == std::string::npos);
  CHECK(one_line(std::string(600, 'x') + url).find("ghp_") == std::string::npos);
}

}  // namespace
}  // namespace fluxop
