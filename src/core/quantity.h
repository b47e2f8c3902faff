// Kubernetes resource quantities ("10Gi", "500m", "1e3"), read with the
// grammar the API server reads them with: an optional sign, a decimal number
// (either side of the point may be empty) and a suffix, one of n u m k M G T
// P E, Ki Mi Gi Ti Pi Ei, or an exponent (e3, E-2).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fluxop {

struct Quantity {
  bool negative = false;
  std::string_view integer;           // the digits before the point, maybe none
  std::string_view fraction;          // the digits after it, maybe none
  std::int64_t decimal_exponent = 0;  // of the suffix: 3 for k, -3 for m, 5 for e5
  int binary_exponent = 0;            // of the suffix: 10 for Ki, 20 for Mi, ...
};

// nullopt when `text` is no quantity ("ten gigs", "10gb", " 10Gi"). The
// parts view `text`.
std::optional<Quantity> parse_quantity(std::string_view text);

// Whether it is greater than zero (what a storage request must be).
bool is_positive(const Quantity& quantity);

}  // namespace fluxop
