#include "cli/table.h"

#include <algorithm>

#include "core/display.h"
#include "core/error.h"

namespace fluxop::cli {

namespace {

// kubectl's tabwriter: cells at least 6 wide, 3 spaces of padding.
constexpr std::size_t kMinWidth = 6;
constexpr std::size_t kPadding = 3;

}  // namespace

std::string render_table(const std::vector<std::vector<std::string>>& cells) {
  // Cells hold what the cluster sent.
  std::vector<std::vector<std::string>> rows;
  for (const std::vector<std::string>& row : cells) {
    rows.emplace_back();
    for (const std::string& cell : row) rows.back().push_back(printable(cell));
  }
  std::vector<std::size_t> widths;
  for (const std::vector<std::string>& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], display_columns(row[i]));
  }
  std::string out;
  for (const std::vector<std::string>& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size())
        line.append(std::max(widths[i] + kPadding, kMinWidth) - display_columns(row[i]), ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace fluxop::cli
