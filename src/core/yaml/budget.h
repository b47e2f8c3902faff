// The bounds on every tree fluxopctl holds: the nodes of what one command
// parses and builds, and the levels of any one tree. Parsing counts against
// them (parse.h), and so does every transformation that makes new nodes (a
// JSON patch's copy, a merge, a generated object), so that a small input
// cannot amplify into a tree many times its size.
#pragma once

#include <cstddef>
#include <string>

#include "core/yaml/node.h"

namespace fluxop::yaml {

// About 250 MiB of nodes. Flux's whole distribution (v2.9) holds about 6,000.
inline constexpr std::size_t kMaxNodes = 1'000'000;
// The text of the nodes (scalars and keys): a few nodes can hold a lot of it
// (a JSON patch copying one long string). Twice what a build may read
// (file.h), so that patches can make as much again; Flux's distribution
// (v2.9) holds about 2 MB.
inline constexpr std::size_t kMaxTextBytes = std::size_t{128} << 20;
// Levels of maps and sequences, the root's included. Flux's objects (a CRD's
// schema the deepest) have at most 21; a printer indents each node by its depth,
// so printing N nodes takes O(N * kMaxDepth) bytes, never O(N^2).
inline constexpr std::size_t kMaxDepth = 100;

struct Extent {
  std::size_t nodes = 0;
  std::size_t depth = 0;  // a scalar has one level
  std::size_t text_bytes = 0;
};

// The nodes and levels of `tree`; the walk stops once past `max_nodes`
// nodes or kMaxDepth levels, and then returns only that it is past them.
Extent extent_of(const Node& tree, std::size_t max_nodes = kMaxNodes);

// What is said of a tree past kMaxDepth: "nested deeper than 100 levels".
std::string too_deep();

// Throws fluxop::Error too_deep() when `tree`, placed
// `at_depth` levels below a root, would be.
void check_depth(const Node& tree, std::size_t at_depth = 0);

// The nodes one build makes, shared by every transformation of it. Charges
// are never refunded: they bound what a build creates, not what it keeps.
class NodeBudget {
 public:
  // Counts `tree`, about to be inserted `at_depth` levels below the root of
  // an object; throws fluxop::Error when the build passes kMaxNodes nodes or
  // kMaxTextBytes of text, or the tree kMaxDepth levels, before the caller
  // copies anything.
  void charge(const Node& tree, std::size_t at_depth = 0) { charge_copies(tree, 1, at_depth); }
  // The same for `copies` copies of `tree` (metadata set on every object of
  // a build), counted once and charged before any copy is made.
  void charge_copies(const Node& tree, std::size_t copies, std::size_t at_depth = 0);
  std::size_t used() const { return used_; }

 private:
  std::size_t used_ = 0;
  std::size_t text_used_ = 0;
};

}  // namespace fluxop::yaml
