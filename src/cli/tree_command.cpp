// tree KIND/NAME: what a Kustomization, a HelmRelease or a FluxInstance
// applied, and what those applied in turn, with each object's readiness
// (status::object_tree), as `flux tree kustomization` and the upstream CLI's
// `tree ks NAME` draw it; both spellings are taken.
#include <iostream>
#include <memory>

#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/notice.h"
#include "cli/output.h"
#include "core/ascii.h"
#include "core/error.h"
#include "core/reconcile/instance_object.h"
#include "core/status/object_tree.h"

namespace fluxop::cli {

namespace {

struct TreeOptions {
  ClusterFlags cluster;
  std::vector<std::string> target;  // KIND/NAME, or KIND NAME
  std::string ns = "flux-system";
  std::string output = "tree";
};

// The kinds whose inventory a tree shows, by every name they are given.
struct TreeKind {
  std::string_view names;  // comma-separated, lower case
  kube::ObjectKey kind;
};
const TreeKind kTreeKinds[] = {
    {"kustomization,kustomizations,ks",
     {"kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "", ""}},
    {"helmrelease,helmreleases,hr", {"helm.toolkit.fluxcd.io", "v2", "HelmRelease", "", ""}},
    {"fluxinstance,fluxinstances,instance", reconcile::instance_ref("", "")},
};

[[noreturn]] void usage(const std::string& message) {
  throw CommandError("KIND/NAME: " + message, kExitUsage);
}

kube::ObjectKey tree_root(const TreeOptions& options) {
  std::string kind_name, name;
  if (options.target.size() == 1) {
    const std::string& target = options.target.front();
    std::size_t slash = target.find('/');
    if (slash == std::string::npos || target.find('/', slash + 1) != std::string::npos)
      usage(quote(target) + " is not KIND/NAME");
    kind_name = target.substr(0, slash);
    name = target.substr(slash + 1);
  } else if (options.target.size() == 2) {
    kind_name = options.target[0];
    name = options.target[1];
  } else {
    usage("give KIND/NAME or KIND NAME, not " + std::to_string(options.target.size()) +
          " arguments");
  }
  if (name.empty()) usage("the name is empty");
  std::string wanted = lowercase(kind_name);
  for (const TreeKind& known : kTreeKinds) {
    for (std::string_view names = known.names; !names.empty();) {
      std::string_view one = names.substr(0, names.find(','));
      names.remove_prefix(std::min(names.size(), one.size() + 1));
      if (one != wanted) continue;
      kube::ObjectKey root = known.kind;
      root.ns = options.ns;
      root.name = name;
      return root;
    }
  }
  usage(quote(kind_name) +
        " has no inventory to draw: give kustomization (ks), helmrelease (hr) or fluxinstance");
}

void run_tree(const TreeOptions& options) {
  kube::ObjectKey root = tree_root(options);
  ConnectedCluster connected = connect(options.cluster, /*dry_run=*/false);
  status::TreeNode tree = status::object_tree(*connected.cluster, root);
  // Why the tree is its root alone: said, rather than left to guess (a
  // HelmRelease of Flux before 2.8 keeps what it applied in Helm's storage
  // only, a Secret).
  if (!tree.has_inventory) {
    print_notice(kube::display_name(tree.ref) + " keeps no inventory: " +
                 (tree.ref.kind == "HelmRelease"
                      ? "a HelmRelease keeps one since Flux 2.8; before, what it applied is only "
                        "in Helm's storage, a Secret, which fluxopctl does not read"
                      : "it has applied nothing yet"));
  }
  if (options.output == "tree") {
    std::cout << status::tree_text(tree);
    return;
  }
  std::cout << render_document(status::tree_json(tree),
                               options.output == "json" ? OutputFormat::Json : OutputFormat::Yaml);
}

}  // namespace

void add_tree_command(CLI::App& app) {
  auto options = std::make_shared<TreeOptions>();
  auto* cmd = app.add_subcommand(
      "tree",
      "Show what a Kustomization, a HelmRelease or the FluxInstance applied, as a tree, and "
      "what those applied in turn, with each object's readiness (a Secret is named, never read)");
  cmd->add_option("KIND/NAME", options->target,
                  "kustomization/NAME (ks), helmrelease/NAME (hr) or fluxinstance/NAME; also "
                  "KIND NAME, as the upstream CLI spells it")
      ->required()
      ->expected(1, 2)
      ->option_text(" ");
  cmd->add_option("-o,--output", options->output,
                  "tree: a line per object; yaml or json: the tree as a document")
      ->check(CLI::IsMember({"tree", "yaml", "json"}))
      ->option_text("tree|yaml|json (default tree)");
  add_cluster_flags(*cmd, options->cluster, /*writes=*/false);
  global_option(*cmd, "--namespace").each([options](const std::string& value) {
    options->ns = value;
  });
  cmd->callback([options] { run_tree(*options); });
}

}  // namespace fluxop::cli
