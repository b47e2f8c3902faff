#include "core/display.h"

#include <doctest/doctest.h>

#include <array>
#include <random>
#include <string>
#include <string_view>

#include "core/error.h"

namespace fluxop {
namespace {

constexpr std::string_view kToken = "Zq9Xw7Vu5Ts3";

// Whether any 4 characters of the token are in `text`: a cut before the
// redaction showed as much as fitted.
bool shows_token(std::string_view text) {
  for (std::size_t at = 0; at + 4 <= kToken.size(); ++at) {
    if (text.find(kToken.substr(at, 4)) != std::string_view::npos) return true;
  }
  return false;
}

// A raw control character: C0, DEL, or C1 as UTF-8 encodes it.
bool has_control(std::string_view text) {
  for (std::size_t at = 0; at < text.size(); ++at) {
    auto byte = static_cast<unsigned char>(text[at]);
    if (byte < 0x20 || byte == 0x7F) return true;
    if (byte == 0xC2 && at + 1 < text.size() && static_cast<unsigned char>(text[at + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[at + 1]) <= 0x9F)
      return true;
  }
  return false;
}

TEST_CASE("display: columns count characters as a terminal draws them") {
  CHECK(display_columns("abc") == 3);
  CHECK(display_columns("\xe6\xbc\xa2\xe5\xad\x97") == 4);  // two CJK ideographs
  CHECK(display_columns("e\xcc\x81") == 1);                 // e and a combining acute
  CHECK(display_columns("\xf0\x9f\x98\x80") == 2);          // an emoji
  CHECK(display_columns("\xff") == 1);                      // not UTF-8
  CHECK(display_columns("\\x1b") == 4);                     // an escape as printed
}

TEST_CASE("display: a cut falls after the redaction, at every width") {
  std::string cause = "Failed: https://flux:" + std::string(kToken) + "@git.example.com/fleet.git";
  for (std::size_t width = 0; width <= cause.size() + 4; ++width) {
    std::string shown = printable_within(cause, width);
    CAPTURE(width);
    CAPTURE(shown);
    CHECK_FALSE(shows_token(shown));
    CHECK(display_columns(shown) <= width);
  }
  CHECK(printable_within(cause, 200) == "Failed: https://***@git.example.com/fleet.git");
}

TEST_CASE("display: escapes and characters are never split, and count their columns") {
  // "\x01" takes four columns once escaped: 10 bytes of raw controls are 40.
  std::string controls(10, '\x01');
  CHECK(printable_within(controls, 40) == printable(controls));
  CHECK(printable_within(controls, 39) == "\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01...");
  CHECK(printable_within(controls, 9) == "\\x01...");
  // Wide characters: cut before one that would not fit.
  std::string wide = "\xe6\xbc\xa2\xe6\xbc\xa2\xe6\xbc\xa2";  // three ideographs, 6 columns
  CHECK(printable_within(wide, 6) == wide);
  CHECK(printable_within(wide, 5) == "\xe6\xbc\xa2...");
  CHECK(printable_within("abc", 2) == "..");
}

// Any text of URLs with user information, control characters, multi-byte
// and invalid UTF-8, at any width: no secret, no raw control character, and
// within the width; whole where it fits.
TEST_CASE("display: property, over random texts and widths") {
  const std::array<std::string, 14> parts = {"word ",
                                             "https://user:" + std::string(kToken) + "@host/p ",
                                             "oci://" + std::string(kToken) + "@registry/r ",
                                             "http://u:" + std::string(kToken) + "@proxy:3128",
                                             "\x1b[31m",
                                             "\n",
                                             "\t",
                                             "\x7f",
                                             "\xc2\x9b",
                                             "\xc3\xa9",
                                             "\xe6\xbc\xa2",
                                             "\xf0\x9f\x98\x80",
                                             "e\xcc\x81",
                                             "\xff"};
  std::mt19937 random(52);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    std::size_t count = random() % 12;
    for (std::size_t i = 0; i < count; ++i) text += parts[random() % parts.size()];
    std::size_t width = random() % 130;
    std::string shown = printable_within(text, width);
    CAPTURE(text);
    CAPTURE(width);
    CHECK_FALSE(shows_token(shown));
    CHECK_FALSE(has_control(shown));
    CHECK(display_columns(shown) <= width);
    if (display_columns(printable(text)) <= width) CHECK(shown == printable(text));
  }
}

}  // namespace
}  // namespace fluxop
