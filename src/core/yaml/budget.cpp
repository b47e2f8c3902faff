#include "core/yaml/budget.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace fluxop::yaml {

namespace {

// Recursion stops at kMaxDepth + 1 levels, so the stack is bounded too.
void walk(const Node& node, std::size_t level, std::size_t max_nodes, Extent& extent) {
  ++extent.nodes;
  extent.depth = std::max(extent.depth, level);
  extent.text_bytes += node.text().size();
  if (extent.nodes > max_nodes || level > kMaxDepth) return;
  for (const Node::Entry& entry : node.entries()) {
    extent.text_bytes += entry.first.size();
    walk(entry.second, level + 1, max_nodes, extent);
    if (extent.nodes > max_nodes || extent.depth > kMaxDepth) return;
  }
  for (const Node& item : node.items()) {
    walk(item, level + 1, max_nodes, extent);
    if (extent.nodes > max_nodes || extent.depth > kMaxDepth) return;
  }
}

}  // namespace

std::string too_deep() { return "nested deeper than " + std::to_string(kMaxDepth) + " levels"; }

Extent extent_of(const Node& tree, std::size_t max_nodes) {
  Extent extent;
  walk(tree, 1, max_nodes, extent);
  return extent;
}

void check_depth(const Node& tree, std::size_t at_depth) {
  if (at_depth >= kMaxDepth) throw Error(too_deep());
  if (extent_of(tree, static_cast<std::size_t>(-1)).depth > kMaxDepth - at_depth)
    throw Error(too_deep());
}

void NodeBudget::charge_copies(const Node& tree, std::size_t copies, std::size_t at_depth) {
  if (at_depth >= kMaxDepth) throw Error(too_deep());
  if (copies == 0) return;
  // Each copy within what is left, and all of them: the products cannot
  // overflow, each factor bounded by what is left.
  Extent extent = extent_of(tree, (kMaxNodes - used_) / copies);
  if (extent.depth > kMaxDepth - at_depth) throw Error(too_deep());
  if (extent.nodes > (kMaxNodes - used_) / copies) {
    throw Error("the build makes more than " + std::to_string(kMaxNodes) + " nodes");
  }
  if (extent.text_bytes > (kMaxTextBytes - text_used_) / copies) {
    throw Error("the build makes more than " + std::to_string(kMaxTextBytes >> 20) +
                " MiB of text");
  }
  used_ += extent.nodes * copies;
  text_used_ += extent.text_bytes * copies;
}

}  // namespace fluxop::yaml
