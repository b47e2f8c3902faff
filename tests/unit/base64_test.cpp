#include "core/base64.h"

#include <doctest/doctest.h>

namespace fluxop {
namespace {

TEST_CASE("base64: RFC 4648 test vectors both ways") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    CHECK(base64_encode(plain) == encoded);
    CHECK(base64_decode(encoded) == std::optional<std::string>(plain));
  }
  CHECK(base64_encode(std::string("\xff\xfe\x00", 3)) == "//4A");
  CHECK(base64_decode("//4A") == std::string("\xff\xfe\x00", 3));
}

TEST_CASE("base64: malformed input is refused") {
  CHECK_FALSE(base64_decode("Zm9"));       // not a multiple of 4
  CHECK_FALSE(base64_decode("Zm9v!A=="));  // bad character
  CHECK_FALSE(base64_decode("Z==="));      // too much padding
  CHECK_FALSE(base64_decode("Zg==Zg=="));  // padding in the middle
  CHECK_FALSE(base64_decode("Zm=v"));      // padding before data
}

}  // namespace
}  // namespace fluxop
