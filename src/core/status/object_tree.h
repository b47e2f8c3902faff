// What a Flux object applied, as a tree: the objects of its inventory
// (.status.inventory, which Kustomizations, HelmReleases since Flux 2.8 and
// FluxInstances keep), each with its readiness, and under each of those that
// keeps an inventory too, what it applied in turn. `fluxopctl tree` prints
// it; the daemon's details page shows it.
//
// Read-only, and never a Secret: a Secret of an inventory is named, not read
// (its data would travel for nothing), so its state is "not read". A
// HelmRelease of a helm-controller that keeps no inventory (Flux before
// 2.8) shows none: what it applied is only in Helm's storage, a Secret.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kube/cluster.h"

namespace fluxop::status {

enum class TreeState {
  ready,        // as kstatus reads it (a kind without rules: once it exists)
  in_progress,  // not ready yet
  failed,       // will not become ready by waiting
  not_found,    // in the inventory, gone from the cluster
  not_read,     // a Secret, beyond the limit of objects read, or refused
  count,        // not a state: the number of them
};
// "Ready", "InProgress", "Failed", "NotFound", "NotRead".
std::string_view tree_state_name(TreeState state);

struct TreeNode {
  kube::ObjectKey ref;
  TreeState state = TreeState::not_read;
  // Why it is not ready (redacted, escaped, cut as a resource's message).
  std::string message;
  // Whether it keeps an inventory (.status.inventory): an applier.
  bool has_inventory = false;
  std::vector<TreeNode> children;  // its inventory's objects, in its order
};

// At most this many objects are read for one tree, the root included:
// the rest are NotRead. An applier met again (a cycle: one under itself;
// or one in two inventories) is opened once, its other place saying so.
inline constexpr std::size_t kMaxTreeObjects = 10'000;

// The tree of `root`; throws fluxop::Error naming it when it does not
// exist. Each level's objects are read together (one request each, in
// flight at once).
TreeNode object_tree(kube::Cluster& cluster, const kube::ObjectKey& root,
                     std::size_t max_objects = kMaxTreeObjects);

// The tree as `flux tree` draws it, a line per object
// ("├── Deployment/apps/podinfo  InProgress: message").
std::string tree_text(const TreeNode& root);

// The tree as a document: kind, namespace, name, apiVersion, state,
// message, resources (the children).
nlohmann::ordered_json tree_json(const TreeNode& root);

// The objects of the tree, the root included, and how many are in `state`.
std::size_t tree_size(const TreeNode& root);
std::size_t tree_count(const TreeNode& root, TreeState state);

}  // namespace fluxop::status
