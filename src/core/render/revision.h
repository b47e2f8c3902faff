// The content digest upstream's builder records as an instance's revision.
#pragma once

#include <string>
#include <string_view>

namespace fluxop::render {

// "sha256:<64 lowercase hex digits>" of `data`.
std::string sha256_digest(std::string_view data);

}  // namespace fluxop::render
