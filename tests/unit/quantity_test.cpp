#include "core/quantity.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace fluxop {
namespace {

TEST_CASE("quantity: what the API server reads") {
  for (std::string text : {"10Gi",
                           "1e3",
                           "500M",
                           "0.5Gi",
                           "1",
                           "0",
                           "100m",
                           "1.5",
                           ".5",
                           "5.",
                           "+1Ki",
                           "-1",
                           "1E",
                           "1E3",
                           "1e-3",
                           "1e+3",
                           "2Ei",
                           "3n",
                           "4u",
                           "5k",
                           "6T",
                           "7P",
                           "00012Mi",
                           "1.G",
                           "G",
                           ".",
                           "-",
                           "1e9223372036854775807",
                           "1e-9223372036854775808"}) {
    CAPTURE(text);
    CHECK(parse_quantity(text).has_value());
  }
}

TEST_CASE("quantity: what the API server refuses") {
  for (std::string text : {"",
                           "ten gigs",
                           "10 Gi",
                           " 10Gi",
                           "10Gi ",
                           "10gi",
                           "10GB",
                           "10Kb",
                           "1K",
                           "10Gii",
                           "1e",
                           "1e+",
                           "1ee3",
                           "1Ke3",
                           "1e3.5",
                           "1.5.5",
                           "--1",
                           "+-1",
                           "1,5",
                           "0x10",
                           "Gi1",
                           "1E9223372036854775808",
                           "1e-9223372036854775809",
                           "10Gi\n",
                           "1\nGi"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_quantity(text).has_value());
  }
}

TEST_CASE("quantity: the parts") {
  std::optional<Quantity> quantity = parse_quantity("-12.50Ki");
  REQUIRE(quantity);
  CHECK(quantity->negative);
  CHECK(quantity->integer == "12");
  CHECK(quantity->fraction == "50");
  CHECK(quantity->binary_exponent == 10);
  CHECK(quantity->decimal_exponent == 0);
  CHECK(parse_quantity("3m")->decimal_exponent == -3);
  CHECK(parse_quantity("3E")->decimal_exponent == 18);
  CHECK(parse_quantity("3E-2")->decimal_exponent == -2);
}

TEST_CASE("quantity: greater than zero") {
  for (std::string text : {"1", "10Gi", "0.5Gi", ".1", "1e-3", "+1", "0001"}) {
    CAPTURE(text);
    CHECK(is_positive(*parse_quantity(text)));
  }
  for (std::string text : {"0", "0Gi", "-1", "-10Gi", "0.0", "-0", "G", ".", "-", "0e5"}) {
    CAPTURE(text);
    CHECK_FALSE(is_positive(*parse_quantity(text)));
  }
}

}  // namespace
}  // namespace fluxop
