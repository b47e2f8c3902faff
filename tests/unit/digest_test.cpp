#include "core/digest.h"

#include <doctest/doctest.h>

#include <string>

namespace fluxop {
namespace {

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 0xf];
  }
  return out;
}

TEST_CASE("sha256: FIPS 180-2 vectors, whole and in parts") {
  CHECK(sha256_digest("") ==
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_digest("abc") ==
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex(sha256_bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's in uneven parts; then the same object starts over.
  Sha256 hash;
  std::string part(999, 'a');
  for (int i = 0; i < 1001; ++i) hash.update(part);
  hash.update(std::string(1, 'a'));
  CHECK(hash.finish() == "sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  hash.update("abc");
  CHECK(hex(hash.finish_bytes()) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("hmac_sha256: RFC 4231 vectors, a key longer than the block hashed first") {
  CHECK(hmac_sha256(std::string(20, '\x0b'), "Hi There") ==
        "hmac-sha256:b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hmac_sha256("Jefe", "what do ya want for nothing?") ==
        "hmac-sha256:5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hmac_sha256(std::string(131, '\xaa'),
                    "Test Using Larger Than Block-Size Key - Hash Key First") ==
        "hmac-sha256:60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // A key of exactly one block is used as it is.
  CHECK(hmac_sha256(std::string(64, 'k'), "data") !=
        hmac_sha256(sha256_bytes(std::string(64, 'k')), "data"));
}

}  // namespace
}  // namespace fluxop
