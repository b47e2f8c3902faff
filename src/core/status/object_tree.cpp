#include "core/status/object_tree.h"

#include <map>
#include <set>

#include "core/display.h"
#include "core/enum_table.h"
#include "core/error.h"
#include "core/kube/meta.h"
#include "core/reconcile/inventory.h"
#include "core/report/report.h"
#include "core/ssa/health.h"

namespace fluxop::status {

namespace {

using nlohmann::json;

constexpr EnumName<TreeState> kTreeStates[] = {{TreeState::ready, "Ready"},
                                               {TreeState::in_progress, "InProgress"},
                                               {TreeState::failed, "Failed"},
                                               {TreeState::not_found, "NotFound"},
                                               {TreeState::not_read, "NotRead"}};
static_assert(covers_enum(kTreeStates));

// The key of an object the cluster serves, in a version it serves: an
// inventory keeps the version an object was applied in, which an upgrade of
// its CRD may have stopped serving. Unchanged when the kind is not served.
class ServedVersions {
 public:
  explicit ServedVersions(kube::Cluster& cluster) : cluster_(cluster) {}

  kube::ObjectKey served(kube::ObjectKey ref) {
    if (cluster_.has_kind(ref)) return ref;
    auto [known, added] = groups_.try_emplace(ref.group);
    if (added) {
      known->second =
          cluster_.served_kinds([&](std::string_view group) { return group == ref.group; });
    }
    for (const kube::ObjectKey& kind : known->second) {
      if (kind.kind == ref.kind) ref.version = kind.version;
    }
    return ref;
  }

 private:
  kube::Cluster& cluster_;
  std::map<std::string, std::vector<kube::ObjectKey>> groups_;
};

// The node's state and message from its live object.
void read_state(TreeNode& node, const json& live) {
  ssa::Health health = ssa::object_health(live);
  node.state = health.ready    ? TreeState::ready
               : health.failed ? TreeState::failed
                               : TreeState::in_progress;
  if (!health.ready) node.message = printable_within(health.message, report::kMaxResourceMessage);
  if (const json* inventory = kube::at(live, "/status/inventory")) {
    node.has_inventory = true;
    for (kube::ObjectKey& ref : reconcile::read_inventory(*inventory))
      node.children.emplace_back().ref = std::move(ref);
  }
}

void draw(const TreeNode& node, const std::string& indent, bool last, bool root, std::string& out) {
  if (!root) out += indent + (last ? "└── " : "├── ");
  out += kube::display_name(node.ref);
  out += "  ";
  out += tree_state_name(node.state);
  if (!node.message.empty()) out += ": " + node.message;
  out += "\n";
  std::string below = root ? "" : indent + (last ? "    " : "│   ");
  for (std::size_t i = 0; i < node.children.size(); ++i)
    draw(node.children[i], below, i + 1 == node.children.size(), false, out);
}

}  // namespace

std::string_view tree_state_name(TreeState state) { return enum_row(kTreeStates, state).name; }

TreeNode object_tree(kube::Cluster& cluster, const kube::ObjectKey& root, std::size_t max_objects) {
  ServedVersions versions(cluster);
  TreeNode tree;
  tree.ref = versions.served(root);
  std::optional<json> live = cluster.has_kind(tree.ref) ? cluster.get(tree.ref) : std::nullopt;
  if (!live) throw Error(kube::display_name(root) + ": not found");
  read_state(tree, *live);
  std::size_t read = 1;
  // The appliers met on the way: one met again (a cycle, or one in two
  // inventories) is opened once.
  std::set<std::string> appliers = {reconcile::inventory_id(tree.ref)};
  std::vector<TreeNode*> level = {&tree};
  while (!level.empty()) {
    std::vector<TreeNode*> nodes;
    std::vector<kube::ListQuery> queries;
    for (TreeNode* parent : level) {
      for (TreeNode& child : parent->children) {
        if (child.ref.kind == "Secret" && child.ref.group.empty()) {
          child.message = "a Secret: fluxopctl reads none";
          continue;
        }
        if (read >= max_objects) {
          child.message = "beyond the " + std::to_string(max_objects) + " objects read";
          continue;
        }
        ++read;
        child.ref = versions.served(child.ref);
        nodes.push_back(&child);
        queries.push_back({child.ref, {}, child.ref.name});
      }
    }
    std::vector<std::vector<json>> answers;
    std::vector<std::string> failures(queries.size());
    try {
      answers = cluster.list_all(queries);
    } catch (const Error&) {
      // One object refused (forbidden to the reader, say) must not hide
      // the others: each is read alone, and what failed said on its node.
      answers.assign(queries.size(), {});
      for (std::size_t i = 0; i < queries.size(); ++i) {
        try {
          answers[i] = std::move(cluster.list_all({queries[i]}).front());
        } catch (const Error& error) {
          failures[i] = error.what();
        }
      }
    }
    std::vector<TreeNode*> next;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      TreeNode& node = *nodes[i];
      if (!failures[i].empty()) {
        node.message = printable_within(failures[i], report::kMaxResourceMessage);
        continue;
      }
      if (answers[i].empty()) {
        node.state = TreeState::not_found;
        continue;
      }
      read_state(node, answers[i].front());
      if (node.children.empty()) continue;
      if (!appliers.insert(reconcile::inventory_id(node.ref)).second) {
        node.children.clear();
        node.message = "its inventory is drawn at its other place in this tree";
        continue;
      }
      next.push_back(&node);
    }
    level = std::move(next);
  }
  return tree;
}

std::string tree_text(const TreeNode& root) {
  std::string out;
  draw(root, "", true, true, out);
  return out;
}

nlohmann::ordered_json tree_json(const TreeNode& root) {
  nlohmann::ordered_json node = {{"kind", root.ref.kind},
                                 {"namespace", root.ref.ns},
                                 {"name", root.ref.name},
                                 {"apiVersion", kube::api_version(root.ref)},
                                 {"state", tree_state_name(root.state)}};
  if (!root.message.empty()) node["message"] = root.message;
  if (root.has_inventory) {
    node["resources"] = nlohmann::ordered_json::array();
    for (const TreeNode& child : root.children) node["resources"].push_back(tree_json(child));
  }
  return node;
}

std::size_t tree_size(const TreeNode& root) {
  std::size_t size = 1;
  for (const TreeNode& child : root.children) size += tree_size(child);
  return size;
}

std::size_t tree_count(const TreeNode& root, TreeState state) {
  std::size_t count = root.state == state ? 1 : 0;
  for (const TreeNode& child : root.children) count += tree_count(child, state);
  return count;
}

}  // namespace fluxop::status
