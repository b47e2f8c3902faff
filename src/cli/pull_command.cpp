#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/duration_check.h"
#include "cli/notice.h"
#include "cli/output.h"
#include "cli/registry_flags.h"
#include "cli/table.h"
#include "core/distribution/distribution.h"
#include "core/distribution/locate.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/oci/layer_files.h"

namespace fluxop::cli {

namespace {

using nlohmann::ordered_json;

struct PullCommandOptions {
  std::string url;
  RegistryFlags registry;
  bool list = false;
  bool prune = false;
  std::string older_than = "720h";
  OutputFormat format = OutputFormat::Yaml;
  bool format_given = false;  // --list: a table unless -o says yaml or json
};

ordered_json versions(const std::shared_ptr<const oci::Layer>& layer) {
  ordered_json out = ordered_json::array();
  try {
    distribution::Distribution content = oci::layer_distribution(layer, "");
    for (const distribution::Version& version : content.versions()) out.push_back(version.original);
  } catch (const Error&) {
    // Not a Flux distribution (any artifact can be pulled): no versions.
  }
  return out;
}

// `path` is the extracted content, empty when it was never asked for.
ordered_json describe(const oci::CachedArtifact& artifact,
                      const std::shared_ptr<const oci::Layer>& layer, const std::string& path,
                      const std::map<std::string, std::string>& annotations) {
  auto annotation = [&](const char* name) {
    auto it = annotations.find(std::string("org.opencontainers.image.") + name);
    return it == annotations.end() ? std::string() : it->second;
  };
  return {{"digest", artifact.digest},          {"source", annotation("source")},
          {"revision", annotation("revision")}, {"created", annotation("created")},
          {"versions", versions(layer)},        {"path", path}};
}

// What build uses when nothing else names a distribution (see
// distribution/locate.h): FLUXOPCTL_DISTRIBUTION when it is an oci:// URL,
// else the default artifact.
std::string default_url() {
  std::string env = distribution::Environment::current().distribution;
  return distribution::is_oci_url(env) ? env : std::string(distribution::kDefaultArtifact);
}

void print(const ordered_json& document, OutputFormat format) {
  std::cout << render_document(document, format);
}

// `pull --list` at a glance: a row per reference (an artifact no tag points
// to, one with "-"), its digest shortened as docker shows image IDs.
std::string cache_table(const ordered_json& entries) {
  std::vector<std::vector<std::string>> rows = {{"REFERENCE", "DIGEST", "VERSIONS", "PULLED"}};
  for (const ordered_json& entry : entries) {
    std::string digest = entry.value("digest", "");
    if (digest.starts_with("sha256:")) digest = digest.substr(0, 19);
    const ordered_json& listed = entry["versions"];
    std::string versions = listed.empty()       ? "-"
                           : listed.size() == 1 ? listed.front().get<std::string>()
                                                : listed.front().get<std::string>() + " .. " +
                                                      listed.back().get<std::string>() + " (" +
                                                      std::to_string(listed.size()) + ")";
    if (entry["references"].empty()) rows.push_back({"-", digest, versions, "-"});
    for (const ordered_json& ref : entry["references"])
      rows.push_back({ref.value("url", ""), digest, versions, ref.value("pulled", "")});
  }
  if (rows.size() == 1) return "No artifact in the cache.\n";
  return render_table(rows);
}

void run_pull(const PullCommandOptions& options) {
  if (options.list) {
    oci::ArtifactCache cache = registry_artifacts(options.registry).cache();
    ordered_json entries = ordered_json::array();
    for (const oci::ArtifactCache::Entry& entry : cache.list()) {
      auto layer = std::make_shared<oci::Layer>();
      if (!cache.verify(entry.artifact, layer.get()).empty()) layer->index = {};
      std::error_code error;
      std::string path = std::filesystem::is_directory(entry.artifact.content(), error)
                             ? entry.artifact.content()
                             : "";
      ordered_json item =
          describe(entry.artifact, layer, path, oci::manifest_annotations(cache, entry.artifact));
      item["references"] = ordered_json::array();
      for (const oci::RefRecord& ref : entry.refs)
        item["references"].push_back({{"url", ref.url}, {"pulled", ref.pulled}});
      entries.push_back(std::move(item));
    }
    if (options.format_given)
      print(entries, options.format);
    else
      std::cout << cache_table(entries);
    return;
  }
  if (options.prune) {
    std::chrono::nanoseconds age = *parse_go_duration(options.older_than);
    oci::ArtifactCache cache = registry_artifacts(options.registry).cache();
    for (const std::string& digest :
         cache.prune(std::chrono::duration_cast<std::chrono::seconds>(age))) {
      std::cout << "deleted " << digest << "\n";
    }
    return;
  }
  std::string url = options.url.empty() ? default_url() : options.url;
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.registry);
  oci::PullResult result = artifacts.pull_artifact(url, "", {}, {});
  // Extracted for whoever reads `path` (e.g. to push it elsewhere); builds
  // read the layer itself.
  oci::ArtifactCache cache = artifacts.cache();
  std::string path;
  {
    std::unique_ptr<FileLock> held = cache.lock_entry(result.artifact.digest, print_notice);
    path = cache.extract(result.artifact, *result.layer);
  }
  ordered_json document = {{"url", result.ref.str()}};
  document.update(describe(result.artifact, result.layer, path, result.annotations));
  print(document, options.format);
}

}  // namespace

void add_pull_command(CLI::App& app) {
  auto options = std::make_shared<PullCommandOptions>();
  auto* cmd = app.add_subcommand(
      "pull", "Pull a Flux distribution artifact into fluxopctl's cache, or list or prune it");
  auto* url = cmd->add_option("URL", options->url,
                              "oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST] (default: "
                              "FLUXOPCTL_DISTRIBUTION when it is an oci:// URL, else " +
                                  std::string(distribution::kDefaultArtifact) +
                                  ", which build then uses offline)")
                  ->option_text(" ");
  auto* list = cmd->add_flag("--list", options->list, "List the cached artifacts")->excludes(url);
  cmd->add_flag("--prune", options->prune,
                "Delete cached artifacts that no tag points to or that were not used for "
                "--older-than")
      ->excludes(url)
      ->excludes(list);
  cmd->add_option("--older-than", options->older_than,
                  "With --prune: drop references unused for this long")
      ->check(duration_check("720h"))
      ->option_text("DURATION (default 720h)");
  add_registry_flags(*cmd, options->registry, /*offline=*/true);
  add_artifact_verify_flags(*cmd, options->registry);
  add_output_flag(*cmd, options->format);
  CLI::Option* output = cmd->get_option("--output");
  cmd->callback([options, output] {
    options->format_given = output->count() > 0;
    run_pull(*options);
  });
}

}  // namespace fluxop::cli
