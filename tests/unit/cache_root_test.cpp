#include "core/cache_root.h"

#include <doctest/doctest.h>

namespace fluxop {
namespace {

TEST_CASE("cache root: under XDG_CACHE_HOME when it is absolute, else ~/.cache") {
  CHECK(user_cache_root("/xdg", "/home/u") == "/xdg/fluxopctl");
  CHECK(user_cache_root("", "/home/u") == "/home/u/.cache/fluxopctl");
  // The XDG spec says to ignore a relative value.
  CHECK(user_cache_root("relative", "/home/u") == "/home/u/.cache/fluxopctl");
  CHECK(user_cache_root("/xdg", "") == "/xdg/fluxopctl");
  CHECK(user_cache_root("", "").empty());
  CHECK(user_cache_root("relative", "").empty());
}

}  // namespace
}  // namespace fluxop
