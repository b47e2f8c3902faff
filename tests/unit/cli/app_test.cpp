// Command lines run through the app main() runs (cli/app.h): exit codes,
// the one error line, nothing on stdout for an error.
#include "cli/app.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../shared_distribution.h"
#include "../temp_dir.h"
#include "cli/commands.h"

namespace fluxop::cli {
namespace {

struct Ran {
  int code;
  std::string out;
  std::string err;
};

// Runs `fluxopctl ARGS...` on a new app, as main() does (only the command
// the first argument names added, unless `every_command`), with stdout and
// stderr captured and a parse cache under `dir`.
Ran fluxopctl(const testing::TempDir& dir, const std::vector<std::string>& args,
              bool every_command = false) {
  yaml::ParseCache parse_cache(dir.path() / "parse-cache");
  CLI::App app{"fluxopctl"};
  add_commands(app, parse_cache, args.empty() || every_command ? "" : args.front());
  std::vector<const char*> argv{"fluxopctl"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out, err;
  std::streambuf* cout = std::cout.rdbuf(out.rdbuf());
  std::streambuf* cerr = std::cerr.rdbuf(err.rdbuf());
  int code = run(app, static_cast<int>(argv.size()), argv.data(), parse_cache);
  std::cout.rdbuf(cout);
  std::cerr.rdbuf(cerr);
  return {code, out.str(), err.str()};
}

constexpr std::string_view kInstance = R"(apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.9.x"
    registry: ghcr.io/fluxcd
  components:
    - source-controller
)";

TEST_CASE("cli app: alone, fluxopctl prints its usage on stdout and succeeds") {
  testing::TempDir dir;
  Ran ran = fluxopctl(dir, {});
  CHECK(ran.code == 0);
  CHECK(ran.out.find("apply") != std::string::npos);
  CHECK(ran.out.find("verify") != std::string::npos);
  CHECK(ran.err.empty());
}

TEST_CASE("cli app: an unknown command or flag is a usage error (2) naming the closest") {
  testing::TempDir dir;
  Ran command = fluxopctl(dir, {"aply", "instance.yaml"});
  CHECK(command.code == kExitUsage);
  CHECK(command.err ==
        "error: unknown command \"aply\" for \"fluxopctl\"; did you mean \"apply\"?\n");
  CHECK(command.out.empty());
  Ran flag = fluxopctl(dir, {"build", "--ouptut", "json", "instance.yaml"});
  CHECK(flag.code == kExitUsage);
  CHECK(flag.err == "error: unknown flag --ouptut; did you mean --output?\n");
  CHECK(flag.out.empty());
}

TEST_CASE("cli app: a bad flag value is a usage error naming the flag, before anything runs") {
  testing::TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"apply", "--dry-run=bogus", "instance.yaml"},
        {"build", "-o=xml", "instance.yaml"},
        {"apply", "--timeout", "soon", "instance.yaml"}}) {
    CAPTURE(args[1]);
    Ran ran = fluxopctl(dir, args);
    CHECK(ran.code == kExitUsage);
    std::string flag = args[1].substr(0, args[1].find('='));
    if (flag == "-o") flag = "--output";
    CHECK(ran.err.rfind("error: ", 0) == 0);
    CHECK(ran.err.find(flag) != std::string::npos);
    CHECK(std::count(ran.err.begin(), ran.err.end(), '\n') == 1);
    CHECK(ran.out.empty());
  }
}

TEST_CASE("cli app: a file that cannot be read is one error line naming it, exit 1") {
  testing::TempDir dir;
  std::string missing = (dir.path() / "missing.yaml").string();
  Ran ran = fluxopctl(dir, {"build", missing});
  CHECK(ran.code == 1);
  CHECK(ran.err.rfind("error: " + missing + ": ", 0) == 0);
  CHECK(std::count(ran.err.begin(), ran.err.end(), '\n') == 1);
  CHECK(ran.out.empty());
}

TEST_CASE("cli app: an invalid instance names its file and field, exit 1, nothing on stdout") {
  testing::TempDir dir;
  // A typo of a field, refused before any distribution is looked for.
  std::string text(kInstance);
  text.replace(text.find("    registry:"), 0, "    versoin: \"2.8.x\"\n");
  dir.write("instance.yaml", text);
  std::string file = (dir.path() / "instance.yaml").string();
  Ran ran = fluxopctl(dir, {"build", file});
  CHECK(ran.code == 1);
  CHECK(ran.err ==
        "error: " + file + ": .spec.distribution.versoin: unknown field (did you mean version?)\n");
  CHECK(ran.out.empty());
}

TEST_CASE("cli app: build renders to stdout and commits the parse cache") {
  if (!testing::have_shared_distribution()) return;
  testing::TempDir dir;
  dir.write("instance.yaml", kInstance);
  Ran ran = fluxopctl(dir, {"build", (dir.path() / "instance.yaml").string(),
                            "--distribution-artifact", testing::kSharedDistribution});
  CHECK(ran.code == 0);
  CHECK(ran.out.find("name: source-controller") != std::string::npos);
  CHECK_FALSE(std::filesystem::is_empty(dir.path() / "parse-cache"));
}

TEST_CASE("cli app: version -o json is one JSON document with the version") {
  testing::TempDir dir;
  Ran ran = fluxopctl(dir, {"version", "-o", "json"});
  CHECK(ran.code == 0);
  nlohmann::json document = nlohmann::json::parse(ran.out);
  CHECK(document.at("version").get<std::string>().find("fluxopctl") == std::string::npos);
  CHECK_FALSE(document.at("version").get<std::string>().empty());
}

TEST_CASE("cli app: a command's help ends with its examples and the global flags") {
  testing::TempDir dir;
  Ran ran = fluxopctl(dir, {"build", "--help"});
  CHECK(ran.code == 0);
  CHECK(ran.out.find("Examples:\n") != std::string::npos);
  CHECK(ran.out.find("see 'fluxopctl --help'") != std::string::npos);
}

}  // namespace
}  // namespace fluxop::cli

namespace fluxop::cli {
namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) names.push_back(command->get_name());
  return names;
}

TEST_CASE("cli app: each command group adds the commands it names, and together every command") {
  testing::TempDir dir;
  yaml::ParseCache parse_cache(dir.path());
  std::vector<std::string> named;
  for (const CommandGroup& group : command_groups()) {
    // help and completion read every command: never added alone.
    if (group.names.empty()) continue;
    for (std::string_view name : group.names) {
      CLI::App alone;
      add_commands(alone, parse_cache, name);
      CHECK(command_names(alone) ==
            std::vector<std::string>(group.names.begin(), group.names.end()));
    }
    named.insert(named.end(), group.names.begin(), group.names.end());
  }
  named.insert(named.end(), {"help", "completion"});
  CLI::App app;
  add_commands(app, parse_cache);
  CHECK(command_names(app) == named);
  // A name that is no command, or help, adds them all.
  for (std::string_view word : {"help", "completion", "bogus", "--kubeconfig"}) {
    CLI::App all;
    add_commands(all, parse_cache, word);
    CHECK(command_names(all) == named);
  }
}

TEST_CASE("cli app: a command added alone parses and answers as with every command added") {
  testing::TempDir dir;
  const std::vector<std::vector<std::string>> lines{
      {"build", "--help"},       {"build", "--distribution"},    {"apply", "-f"},
      {"wait", "--help"},        {"export", "report", "--help"}, {"version", "-o", "json"},
      {"build", "--kubeconfig"}, {"get", "--bogus", "--help"}};
  for (const std::vector<std::string>& args : lines) {
    CAPTURE(args.front());
    CAPTURE(args.back());
    Ran alone = fluxopctl(dir, args);
    Ran every = fluxopctl(dir, args, /*every_command=*/true);
    CHECK(alone.code == every.code);
    CHECK(alone.out == every.out);
    CHECK(alone.err == every.err);
  }
}

}  // namespace
}  // namespace fluxop::cli
