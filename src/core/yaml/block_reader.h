// A fast reader for the block-style YAML that Kubernetes manifests are
// written in, in front of yaml-cpp, whose scanner costs most of a cold build
// (issue 15). It builds the very Nodes that parse.cpp builds from yaml-cpp's
// events (tags, styles, null forms, marks, key order) for the subset it is
// sure of; for anything else it gives up before returning anything, and the
// caller parses the whole text with yaml-cpp, whose errors, messages and
// limits thus stay the only ones.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::yaml {

// The documents of `text`, or nullopt when it leaves the subset read here:
// block maps and sequences (indentless ones under a key too) whose keys are
// scalars on one line; plain, single- and double-quoted scalars on one line;
// literal and folded block scalars with chomping indicators; {} and [];
// comments, "---" and "...". Anchors, aliases, tags, directives, other flow
// collections, complex or merge keys, multi-line flow scalars, tabs, CR,
// NEL, LS, PS, BOM, duplicate keys, any error, more than `max_nodes` nodes
// or deep nesting: nullopt. `text` is valid UTF-8 without control
// characters (parse.cpp checks that first); other input is read safely.
std::optional<std::vector<Node>> read_block_documents(std::string_view text, std::size_t max_nodes);

}  // namespace fluxop::yaml
