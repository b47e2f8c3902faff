#include <iostream>
#include <map>
#include <memory>

#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/instance_input.h"
#include "cli/notice.h"
#include "cli/registry_flags.h"
#include "core/adopt/adopt.h"
#include "core/adopt/live_installation.h"
#include "core/display.h"
#include "core/distribution/locate.h"
#include "core/instance/instance.h"
#include "core/names.h"
#include "core/reconcile/pipeline.h"
#include "core/yaml/emit.h"

namespace fluxop::cli {

namespace {

struct AdoptCommandOptions {
  std::string dir = ".";
  bool from_cluster = false;
  std::string ns = "flux-system";
  ClusterFlags cluster;
  std::string version_range;
  std::string distribution_artifact;
  RegistryFlags registry;
  yaml::ParseCache* parse_cache = nullptr;
};

// A value as the report prints it: JSON, on one line, cut to 160 columns.
std::string shown(const std::optional<nlohmann::json>& value) {
  constexpr std::size_t kShown = 160;
  if (!value) return "(none)";
  return printable_within(value->dump(), kShown);
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

void print_field(const adopt::FieldDifference& difference, std::string_view indent = "  ") {
  std::cerr << indent << printable(difference.object) << " " << printable(difference.path)
            << ": installed " << shown(difference.installed) << ", rendered "
            << shown(difference.rendered) << "\n";
}

// The proof on stderr; the instance alone goes to stdout.
void report(const adopt::Adoption& adoption, const adopt::Installation& installation,
            bool from_cluster) {
  const adopt::Comparison& proof = adoption.proof;
  std::map<adopt::Expected, std::size_t> expected;
  for (const adopt::FieldDifference& difference : proof.fields) {
    if (difference.expected) ++expected[*difference.expected];
  }
  std::cerr << "adopt: Flux " << printable(adoption.version) << ", "
            << plural(proof.compared, "object", "objects") << " compared: " << proof.equal
            << " the same, " << proof.compared - proof.equal << " different\n";
  if (!expected.empty()) {
    std::cerr << "as it always does, the operator (once for all objects):\n";
    for (const auto& [id, count] : expected) {
      std::cerr << "  " << adopt::info(id).summary << " (" << plural(count, "field", "fields")
                << ")\n";
      if (!adopt::info(id).listed) continue;
      for (const adopt::FieldDifference& difference : proof.fields) {
        if (difference.expected == id) print_field(difference, "    ");
      }
    }
  }
  for (const std::string& object : proof.rendered_only) {
    std::cerr << "  installs " << printable(object) << ", which the installation does not have\n";
  }
  if (adoption.carried_patches > 0) {
    std::cerr << "carried over: " << plural(adoption.carried_patches, "patch", "patches")
              << " of the bootstrap kustomization";
    if (adoption.patches_without_namespace > 0) {
      std::cerr << " (" << adoption.patches_without_namespace
                << " without the namespace they named: the operator patches its manifests "
                   "before it sets their namespace)";
    }
    std::cerr << "\n";
  }
  if (!adoption.reproduced.empty()) {
    std::cerr << "reproduced by "
              << plural(adoption.generated_patches, "generated patch", "generated patches")
              << " (hand edits, flux bootstrap options; the sync's settings and the directory's "
                 "patches where marked):\n";
    for (const adopt::FieldDifference& difference : adoption.reproduced) {
      print_field(difference);
      if (difference.configuration) {
        std::cerr << "    (set by the directory's patches)\n";
      } else if (adopt::sync_setting(difference)) {
        std::cerr << "    (a setting of the sync that .spec.sync has no field for)\n";
      }
    }
  }
  std::vector<const adopt::FieldDifference*> lost = adoption.lost();
  if (!lost.empty() || !proof.installed_only.empty()) {
    std::cerr << "not reproduced by the FluxInstance:\n";
    for (const adopt::FieldDifference* difference : lost) print_field(*difference);
    for (const std::string& object : proof.installed_only) {
      std::cerr << "  " << printable(object)
                << ": installed only; keep it in a file of the repository other than "
                << adopt::kComponentsFile << "\n";
    }
    return;
  }
  std::cerr << "next steps:\n"
            << "  1. save this FluxInstance (e.g. flux-instance.yaml) and check it: "
               "fluxopctl diff flux-instance.yaml\n"
            << "  2. fluxopctl apply flux-instance.yaml (takes the objects over, deletes none)\n"
            << "  3. remove " << adopt::kComponentsFile << " and " << adopt::kSyncFile
            << " from the resources of "
            << (from_cluster ? std::string("the bootstrap directory's ")
                             : printable(installation.origin) + "/")
            << "kustomization.yaml and from the repository, then commit and push\n";
}

void run_adopt(const AdoptCommandOptions& options) {
  adopt::Installation installation;
  if (options.from_cluster) {
    if (!is_dns_label(options.ns)) {
      throw CommandError(
          "--namespace: " + quote(options.ns) + " " + std::string(kDnsLabel.requirement),
          kExitUsage);
    }
    ConnectedCluster connection = connect(options.cluster, /*dry_run=*/false);
    installation = adopt::read_cluster(*connection.cluster, options.ns);
  } else {
    installation = adopt::read_directory(options.dir, disk(), options.parse_cache);
  }
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.registry);
  reconcile::RenderRequest request =
      distribution_request(options.distribution_artifact, options.parse_cache);
  std::string digest;
  distribution::Distribution dist =
      reconcile::locate_distribution(artifacts, instance::FluxInstance{}, request, {}, digest);
  adopt::Adoption adoption =
      adopt::adopt(installation, dist,
                   {.version_range = options.version_range, .parse_cache = options.parse_cache});
  std::string out = yaml::emit(adoption.instance);
  report(adoption, installation, options.from_cluster);
  std::cout << out;
  if (!adoption.lost().empty() || !adoption.proof.installed_only.empty()) throw ExitStatus{1};
}

}  // namespace

void add_adopt_command(CLI::App& app, yaml::ParseCache& parse_cache) {
  auto options = std::make_shared<AdoptCommandOptions>();
  options->parse_cache = &parse_cache;
  auto* cmd = app.add_subcommand(
      "adopt",
      "Print the FluxInstance that reproduces a flux bootstrap installation, proven by rendering "
      "it and comparing the render with the installation field by field; exit 1 when something "
      "of the installation would be lost");
  auto* dir = cmd->add_option("DIR", options->dir,
                              "The bootstrap directory (gotk-components.yaml, gotk-sync.yaml, "
                              "kustomization.yaml)")
                  ->default_str(".");
  cmd->add_flag("--from-cluster", options->from_cluster,
                "Read the installation from the cluster instead: the objects flux bootstrap "
                "labelled in the namespace (-n, default flux-system), as their appliers set them")
      ->excludes(dir);
  add_cluster_flags(*cmd, options->cluster, /*writes=*/false);
  global_option(*cmd, "--namespace").each([options](const std::string& value) {
    options->ns = value;
  });
  cmd->add_option("--version-range", options->version_range,
                  "Write this semver range (e.g. 2.9.x) as .spec.distribution.version instead of "
                  "the exact version installed; it must contain it")
      ->option_text("RANGE");
  cmd->add_option("--distribution-artifact", options->distribution_artifact,
                  "Flux distribution: oci://HOST/REPO[:TAG|@DIGEST], a directory or file://DIR "
                  "(default: FLUXOPCTL_DISTRIBUTION, what `fluxopctl pull` fetched, the cache)")
      ->option_text("URL|DIR");
  add_registry_flags(*cmd, options->registry, /*offline=*/true);
  cmd->callback([options] { run_adopt(*options); });
}

}  // namespace fluxop::cli
