// Tables as kubectl prints them: columns padded to their widest cell plus
// three spaces, the last one not padded.
#pragma once

#include <string>
#include <vector>

namespace fluxop::cli {

// The rows (the first is the header), one line each.
std::string render_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace fluxop::cli
