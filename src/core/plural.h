// Counts in messages, as people write them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fluxop {

// A count and its noun, plural unless one: "1 object", "2 objects" (the
// noun takes an s).
std::string count_of(std::size_t count, std::string_view noun);

}  // namespace fluxop
