// UTF-8: decoding and validation. YAML input must be valid UTF-8 (as for
// Go's YAML readers), and output replaces what is not, as Go's encoding/json
// does; what a terminal shows is measured by it (core/display.h), and a
// Secret's value that is not UTF-8 is kept as bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fluxop {

// Decodes the UTF-8 sequence at s[i] into `code_point`; returns its length,
// or 0 when it is not valid UTF-8.
std::size_t decode_utf8(std::string_view s, std::size_t i, char32_t& code_point);

// The byte offset of the first invalid UTF-8 sequence, if any.
std::optional<std::size_t> first_invalid_utf8(std::string_view s);

// `s` with every invalid sequence replaced by U+FFFD.
std::string to_valid_utf8(std::string_view s);

}  // namespace fluxop
