#include "core/oci/www_authenticate.h"

#include <doctest/doctest.h>

namespace fluxop::oci {
namespace {

TEST_CASE("WWW-Authenticate: ghcr.io's bearer challenge") {
  std::vector<Challenge> challenges = parse_www_authenticate(
      R"(Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:org/repo:pull")");
  REQUIRE(challenges.size() == 1);
  CHECK(challenges[0].scheme == "bearer");
  CHECK(challenges[0].params.at("realm") == "https://ghcr.io/token");
  CHECK(challenges[0].params.at("service") == "ghcr.io");
  CHECK(challenges[0].params.at("scope") == "repository:org/repo:pull");
}

TEST_CASE("WWW-Authenticate: schemes and parameter names are case-insensitive, values kept") {
  std::vector<Challenge> challenges = parse_www_authenticate(R"(BASIC Realm="My Registry")");
  REQUIRE(challenges.size() == 1);
  CHECK(challenges[0].scheme == "basic");
  CHECK(challenges[0].params.at("realm") == "My Registry");
}

TEST_CASE("WWW-Authenticate: several challenges, tokens, escapes and token68") {
  std::vector<Challenge> challenges = parse_www_authenticate(
      R"(Negotiate abc123==, Basic realm="a \"quoted\" \\ realm", charset=UTF-8,)"
      R"( Bearer realm=https://auth.example.com/token , service="registry")");
  REQUIRE(challenges.size() == 3);
  CHECK(challenges[0].scheme == "negotiate");
  CHECK(challenges[0].params.empty());
  CHECK(challenges[1].scheme == "basic");
  CHECK(challenges[1].params.at("realm") == R"(a "quoted" \ realm)");
  CHECK(challenges[1].params.at("charset") == "UTF-8");
  CHECK(challenges[2].scheme == "bearer");
  CHECK(challenges[2].params.at("realm") == "https://auth.example.com/token");
  CHECK(challenges[2].params.at("service") == "registry");
}

TEST_CASE("WWW-Authenticate: a scheme alone, empty and malformed headers") {
  std::vector<Challenge> challenges = parse_www_authenticate("Basic");
  REQUIRE(challenges.size() == 1);
  CHECK(challenges[0].scheme == "basic");
  CHECK(parse_www_authenticate("").empty());
  CHECK(parse_www_authenticate("  ,  ").empty());
  // An unterminated quote ends the parse; what came before is kept.
  challenges = parse_www_authenticate(R"(Bearer realm="https://x/token",service="unterminated)");
  REQUIRE(challenges.size() == 1);
  CHECK(challenges[0].params.at("realm") == "https://x/token");
  CHECK_FALSE(challenges[0].params.contains("service"));
  CHECK(parse_www_authenticate("=broken").empty());
}

}  // namespace
}  // namespace fluxop::oci
