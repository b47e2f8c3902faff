#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/instance_input.h"
#include "cli/instance_target.h"
#include "cli/output.h"
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

struct BuildOptions {
  InstanceInput input;
  OutputFormat format = OutputFormat::Yaml;
  std::string output_dir;
  bool verbose = false;
};

// Upstream's stream: every object, the first included, after a "---" line.
std::string stream(const std::vector<yaml::Node>& objects, OutputFormat format) {
  if (format == OutputFormat::Json) return render_objects(objects, format);
  std::string out;
  for (const yaml::Node& object : objects) {
    out += "---\n";
    yaml::emit_to(out, object);
  }
  return out;
}

// "<kind>-<namespace>-<name>.yaml" (no namespace for cluster-scoped objects),
// lowercase, with characters unsafe in file names as '_'.
std::string object_file_name(const yaml::Node& object, OutputFormat format) {
  std::string name = object.string_at({"kind"});
  for (const char* field : {"namespace", "name"}) {
    std::string value = object.string_at({"metadata", field});
    if (!value.empty()) name += "-" + value;
  }
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  }
  return name + (format == OutputFormat::Json ? ".json" : ".yaml");
}

// Empties `dir` for a new build: it may be missing, empty, or hold only the
// files of an earlier build (listed in its index). Anything else is refused.
void prepare_output_dir(const fs::path& dir) {
  std::error_code error;
  if (!fs::exists(dir, error)) {
    if (!fs::create_directories(dir, error)) throw Error(dir.string() + ": " + error.message());
    return;
  }
  if (!fs::is_directory(dir, error)) throw Error(dir.string() + ": not a directory");
  std::set<std::string> written{kOutputDirIndex};
  std::ifstream index(dir / kOutputDirIndex);
  for (std::string line; std::getline(index, line);) written.insert(line);
  std::vector<fs::path> entries;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    if (!written.contains(name)) {
      throw Error(dir.string() + ": holds " + name +
                  ", which fluxopctl build did not write; give a new or empty directory");
    }
    entries.push_back(entry.path());
  }
  if (error) throw Error(dir.string() + ": " + error.message());
  for (const fs::path& entry : entries) fs::remove(entry);
}

// Writes one file per object; all of them are formatted before the directory
// is touched.
void write_output_dir(const fs::path& dir, const std::vector<yaml::Node>& objects,
                      OutputFormat format) {
  std::vector<std::pair<std::string, std::string>> files;
  std::set<std::string> names;
  for (const yaml::Node& object : objects) {
    std::string name = object_file_name(object, format);
    if (!names.insert(name).second) throw Error(dir.string() + ": two objects would be " + name);
    files.emplace_back(name, format == OutputFormat::Json
                                 ? printable_json(yaml::to_json(object).dump(4)) + "\n"
                                 : yaml::emit(object));
  }
  prepare_output_dir(dir);
  std::string index;
  for (const auto& [name, text] : files) {
    write_file((dir / name).string(), text);
    index += name + "\n";
  }
  write_file((dir / kOutputDirIndex).string(), index);
}

void run_build(const BuildOptions& options) {
  RenderedInstance instance = render_input(options.input, options.verbose);
  const render::Rendered& rendered = instance.rendered;

  // Everything is rendered before anything is printed, so a failure leaves
  // stdout empty.
  std::string out;
  if (options.output_dir.empty())
    out = stream(rendered.objects, options.format);
  else
    write_output_dir(options.output_dir, rendered.objects, options.format);
  say_distribution(instance);
  if (options.verbose) std::cerr << "revision: " << rendered.revision << "\n";
  if (!options.output_dir.empty()) {
    std::cerr << "wrote " << count_of(rendered.objects.size(), "object") << " to "
              << options.output_dir << "\n";
  }
  std::cout << out;
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
