#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/image_selection.h"
#include "cli/interrupt.h"
#include "cli/notice.h"
#include "cli/output.h"
#include "core/concurrently.h"
#include "core/error.h"
#include "core/oci/mirror.h"
#include "core/oci/push.h"
#include "core/oci/registry_access.h"
#include "core/signatures/image_signatures.h"

namespace fluxop::cli {

namespace {

struct MirrorCommandOptions {
  std::string destination;
  ImageSelectionFlags selection;
  std::vector<std::string> platforms;
  bool dry_run = false;
};

// Where the distribution artifact goes when it is a directory, not an
// artifact: the name the Flux Operator publishes it under.
constexpr std::string_view kArtifactRepository = "flux-operator-manifests";

// DEST: oci://HOST[:PORT]/PATH, a repository path the images go under.
oci::Reference parse_destination(const std::string& url) {
  oci::Reference dest;
  try {
    dest = oci::Reference::parse(url);
  } catch (const Error& e) {
    throw Error(std::string("DEST: ") + e.what());
  }
  std::string_view last = std::string_view(url).substr(url.rfind('/') + 1);
  if (!dest.digest.empty() || last.find(':') != std::string_view::npos)
    throw Error("DEST: " + url + ": a repository path, without a tag or digest");
  return dest;
}

oci::Reference under(const oci::Reference& dest, std::string_view name, const std::string& tag) {
  return {dest.registry, dest.repository + "/" + std::string(name), tag, ""};
}

std::string_view last_element(std::string_view repository) {
  return repository.substr(repository.rfind('/') + 1);
}

// The artifact (when it was pulled) and every image selected, each once.
std::vector<oci::MirrorCopy> mirror_copies(const SelectedImages& selected,
                                           const oci::Reference& dest) {
  std::vector<oci::MirrorCopy> copies;
  if (!selected.artifact_url.empty()) {
    oci::Reference source = oci::Reference::parse(selected.artifact_url);
    source.digest = selected.artifact_digest;
    copies.push_back({source, under(dest, last_element(source.repository), source.tag)});
  }
  std::set<std::string> seen;  // destination@digest
  for (const distribution::VersionImages& version : selected.versions) {
    for (const distribution::CatalogImage& image : version.images) {
      oci::Reference source;
      try {
        source =
            oci::Reference::parse("oci://" + image.name + ":" + image.new_tag + "@" + image.digest);
      } catch (const Error& e) {
        throw Error(selected.distribution.label(selected.distribution.image_catalog_path(
                        version.version, version.variant)) +
                    ": " + e.what());
      }
      oci::Reference target = under(dest, distribution::catalog_component(image), image.new_tag);
      if (seen.insert(target.str() + "@" + image.digest).second)
        copies.push_back({std::move(source), std::move(target)});
    }
  }
  return copies;
}

void run_mirror(const MirrorCommandOptions& options) {
  oci::Reference dest = parse_destination(options.destination);
  SelectedImages selected = select_images(options.selection);
  std::vector<oci::MirrorCopy> copies = mirror_copies(selected, dest);

  oci::MirrorOptions mirror;
  mirror.registry = oci::registry_options(options.selection.input.registry, {});
  // From here on a SIGINT or SIGTERM ends the transfers under way, so that
  // the blobs on their way are removed with their scratch directory: a
  // mirror run again resumes from what the destination holds.
  catch_interrupts();
  mirror.registry.cancelled = interrupted;
  mirror.platforms = options.platforms;
  mirror.dry_run = options.dry_run;
  // --verify: each image's signature too (the artifact's was, as it was
  // pulled), before anything is copied; several asked for at once, as the
  // copies go.
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.selection.input.registry);
  std::size_t first_image = selected.artifact_url.empty() ? 0 : 1;
  run_concurrently(copies.size() - first_image, mirror.concurrency, [&]() -> ItemWork {
    return [&](std::size_t i) {
      const oci::Reference& source = copies[first_image + i].source;
      artifacts.verify_image(
          source, signatures::default_identity(source.registry + "/" + source.repository));
    };
  });
  oci::RegistryClient source_client(mirror.registry);
  // Their signatures go with them. The referrers tag fallback is an index
  // of bundles, of no platform, which --platform would leave empty.
  for (oci::MirrorCopy& signature :
       signatures::signature_copies(source_client, copies, options.platforms.empty()))
    copies.push_back(std::move(signature));
  // A dry run's lines are its result, printed once it succeeded; a
  // mirror's, its progress.
  std::string planned;
  mirror.progress = [&planned, dry_run = options.dry_run](const std::string& line) {
    if (dry_run)
      planned += printable(line) + "\n";
    else
      print_notice(line);
  };
  oci::MirrorTotals totals;
  oci::Reference artifact = selected.artifact_url.empty()
                                ? under(dest, kArtifactRepository, "latest")
                                : copies.front().destination;
  run_interruptible([&] {
    totals = oci::mirror(copies, mirror);
    if (!selected.artifact_url.empty()) return;
    const std::string& dir = selected.distribution.root();
    if (options.dry_run) {
      planned += "would push the distribution " + printable(dir) + " as " +
                 printable(artifact.str()) + "\n";
    } else {
      oci::PushOptions push;
      push.registry = mirror.registry;
      oci::PushResult pushed = oci::push_distribution(dir, artifact, push);
      print_notice("pushed " + dir + " as " + artifact.pinned(pushed.digest));
    }
  });
  std::string summary = std::to_string(totals.images) + " images and artifacts, " +
                        std::to_string(totals.images_present) + " already there; " +
                        std::to_string(totals.blobs_copied) + " blobs (" +
                        std::to_string(totals.bytes_copied) + " bytes) " +
                        (options.dry_run ? "to copy" : "copied") + ", " +
                        std::to_string(totals.blobs_mounted) + " mounted, " +
                        std::to_string(totals.blobs_present) + " already there";
  if (options.dry_run) {
    std::cout << planned << "would mirror " << summary << "\n";
    return;
  }
  print_notice("mirrored " + summary);
  // The FluxInstance fields that install from the mirror: the registry the
  // images are under, the artifact, and the variant, which a registry of
  // one's own does not imply. Through the YAML emitter, which quotes what
  // YAML would read otherwise (an IPv6 host's "[").
  nlohmann::ordered_json distribution = {{"registry", dest.registry + "/" + dest.repository},
                                         {"artifact", artifact.str()},
                                         {"variant", selected.versions.front().variant}};
  std::cout << render_document({{"spec", {{"distribution", distribution}}}}, OutputFormat::Yaml);
}

}  // namespace

void add_mirror_command(CLI::App& app) {
  auto options = std::make_shared<MirrorCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "mirror",
      "Copy the distribution artifact and every image `images` lists to a registry of your own, "
      "digests preserved; print the .spec.distribution that installs from it");
  command->add_option("DEST", options->destination, "oci://HOST[:PORT]/PATH")
      ->required()
      ->option_text(" ");
  add_image_selection_flags(*command, options->selection);
  add_artifact_verify_flags(*command, options->selection.input.registry);
  command
      ->add_option("--platform", options->platforms,
                   "Copy only these platforms of a multi-platform image, e.g. linux/amd64 "
                   "(comma-separated; default: every platform)")
      ->delimiter(',')
      ->option_text("OS/ARCH[,...]");
  command->add_flag("--dry-run", options->dry_run,
                    "Print what would be copied and its size; copy nothing");
  command->callback([options] { run_mirror(*options); });
}

}  // namespace fluxop::cli
