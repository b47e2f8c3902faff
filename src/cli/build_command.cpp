#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/instance_input.h"
#include "cli/instance_target.h"
#include "cli/output.h"
#include "core/ascii.h"
#include "core/distribution/locate.h"
#include "core/error.h"
#include "core/file.h"
#include "core/instance/instance.h"
#include "core/plural.h"
#include "core/render/render.h"
#include "core/yaml/emit.h"
#include "core/yaml/json.h"

namespace fluxop::cli {

namespace fs = std::filesystem;

namespace {

// Lists the files `build --output-dir` wrote, so a rerun may replace them
// and nothing else.
constexpr const char* kOutputDirIndex = ".fluxopctl-build";
// Where a build writes its files before they replace the previous ones (a
// directory in the output directory, so that each file moves in one rename).
constexpr std::string_view kStagingPrefix = ".fluxopctl-staging-";

struct BuildOptions {
  InstanceInput input;
  OutputFormat format = OutputFormat::Yaml;
  std::string output_dir;
  bool verbose = false;
};

// Prints upstream's stream: every object, the first included, after a
// "---" line. YAML goes out in parts of about 64 KiB, its whole text never
// held: the fresh pages a 300 KB string grows through cost a warm build a
// twentieth of its time. Emitting cannot fail: a failed write is stdout's
// error (main's flushed()).
void print_stream(const std::vector<yaml::Node>& objects, OutputFormat format) {
  if (format == OutputFormat::Json) {
    std::cout << render_objects(objects, format);
    return;
  }
  constexpr std::size_t kPart = 64 * 1024;
  std::string part;
  part.reserve(2 * kPart);
  for (const yaml::Node& object : objects) {
    part += "---\n";
    yaml::emit_to(part, object);
    if (part.size() < kPart) continue;
    std::cout << part;
    part.clear();
  }
  std::cout << part;
}

// "<kind>-<namespace>-<name>.yaml" (no namespace for cluster-scoped objects),
// lowercase, with characters unsafe in file names as '_'.
std::string object_file_name(const yaml::Node& object, OutputFormat format) {
  std::string name = object.string_at({"kind"});
  for (const char* field : {"namespace", "name"}) {
    std::string value = object.string_at({"metadata", field});
    if (!value.empty()) name += "-" + value;
  }
  name = lowercase(name);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return name + (format == OutputFormat::Json ? ".json" : ".yaml");
}

// The files of an earlier build in `dir` (listed in its index), which a new
// one replaces: `dir` may be empty, or hold only those, the index, and what
// an interrupted build left (its staging directories). Anything else is
// refused. Empty when `dir` does not exist.
std::vector<fs::path> previous_output(const fs::path& dir) {
  std::error_code error;
  if (!fs::exists(dir, error)) return {};
  if (!fs::is_directory(dir, error)) throw Error(dir.string() + ": not a directory");
  std::set<std::string> written{kOutputDirIndex};
  fs::path index = dir / kOutputDirIndex;
  if (fs::exists(fs::symlink_status(index, error))) {
    std::istringstream lines(read_input_file(index.string()));
    for (std::string line; std::getline(lines, line);) written.insert(line);
  }
  std::vector<fs::path> entries;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    bool staging = name.starts_with(kStagingPrefix);
    if (!written.contains(name) && !staging) {
      throw Error(dir.string() + ": holds " + name +
                  ", which fluxopctl build did not write; give a new or empty directory");
    }
    // A directory under a name the index lists holds what no build wrote:
    // said before anything is written.
    if (!staging && entry.is_directory(error) && !fs::is_empty(entry.path(), error))
      throw Error(entry.path().string() + ": Directory not empty");
    entries.push_back(entry.path());
  }
  if (error) throw Error(dir.string() + ": " + error.message());
  return entries;
}

// Writes one file per object. The previous build's files stay whole until
// the new ones are all written (a full disk, a file-size limit, an
// interruption leave them as they were): the new files are written into a
// staging directory, then each is renamed over its old name, the old files
// the new build has not are removed, and the index comes last.
void write_output_dir(const fs::path& dir, const std::vector<yaml::Node>& objects,
                      OutputFormat format) {
  std::vector<std::pair<std::string, std::string>> files;
  std::set<std::string> names{kOutputDirIndex};
  std::string index;
  for (const yaml::Node& object : objects) {
    std::string name = object_file_name(object, format);
    if (!names.insert(name).second) throw Error(dir.string() + ": two objects would be " + name);
    files.emplace_back(name, format == OutputFormat::Json
                                 ? printable_json(yaml::to_json(object).dump(4)) + "\n"
                                 : yaml::emit(object));
    index += name + "\n";
  }
  files.emplace_back(kOutputDirIndex, index);
  std::vector<fs::path> previous = previous_output(dir);
  create_directories(dir.string());
  std::string staging = create_unique_directory((dir / kStagingPrefix).string());
  std::error_code error;
  try {
    for (const auto& [name, text] : files) write_new_file(staging + "/" + name, text);
    // Until the new index replaces it, the old one lists both builds' files,
    // so that a directory left half replaced is still one a build replaces.
    std::string both;
    for (const fs::path& old : previous) both += old.filename().string() + "\n";
    write_file_atomically((dir / kOutputDirIndex).string(), both + index);
    for (const auto& [name, text] : files) {
      if (name == kOutputDirIndex) continue;
      fs::rename(fs::path(staging) / name, dir / name, error);
      if (error) throw Error((dir / name).string() + ": cannot write: " + error.message());
    }
  } catch (const Error&) {
    fs::remove_all(staging, error);
    throw;
  }
  for (const fs::path& old : previous) {
    std::string name = old.filename().string();
    if (name.starts_with(kStagingPrefix)) {
      fs::remove_all(old, error);  // an interrupted build's
    } else if (!names.contains(name)) {
      fs::remove(old, error);
    }
  }
  fs::rename(fs::path(staging) / kOutputDirIndex, dir / kOutputDirIndex, error);
  if (error) throw Error((dir / kOutputDirIndex).string() + ": cannot write: " + error.message());
  fs::remove_all(staging, error);
}

void run_build(const BuildOptions& options) {
  RenderedInstance instance = render_input(options.input, options.verbose);
  const render::Rendered& rendered = instance.rendered;

  // Everything is rendered before anything is printed, so a failure leaves
  // stdout empty.
  if (!options.output_dir.empty())
    write_output_dir(options.output_dir, rendered.objects, options.format);
  say_distribution(instance);
  if (options.verbose) std::cerr << "revision: " << rendered.revision << "\n";
  if (!options.output_dir.empty()) {
    std::cerr << "wrote " << count_of(rendered.objects.size(), "object") << " to "
              << options.output_dir << "\n";
  } else {
    print_stream(rendered.objects, options.format);
  }
}

}  // namespace

void add_build_command(CLI::App& app, yaml::ParseCache& parse_cache) {
  auto options = std::make_shared<BuildOptions>();
  options->input.parse_cache = &parse_cache;
  auto* cmd =
      app.add_subcommand("build",
                         "Render a FluxInstance into the Flux installation it describes, as "
                         "`flux-operator build instance` does (or, with --operator, as the "
                         "in-cluster operator does)");
  add_instance_flags(*cmd, options->input);
  add_artifact_verify_flags(*cmd, options->input.registry);
  add_upstream_spelling(*cmd, UpstreamName::none);
  add_operator_kind_refusals(*cmd);
  add_output_flag(*cmd, options->format);
  cmd->add_option("--output-dir", options->output_dir,
                  "Write one file per object into DIR (new, empty, or written by an earlier "
                  "build) instead of stdout")
      ->option_text("DIR");
  cmd->add_flag_function(
      "--operator",
      [options](std::int64_t) { options->input.mode = render::Mode::operator_controller; },
      "Render as the in-cluster Flux Operator does, as apply and diff do: images pinned by the "
      "digests of the distribution's image catalog, shard storage, the CRD's defaults");
  cmd->add_flag("-v,--verbose", options->verbose,
                "Print the revision (vX.Y.Z@sha256:...) on stderr");
  cmd->callback([options] { run_build(*options); });
}

}  // namespace fluxop::cli
