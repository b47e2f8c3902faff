#include "cli/app.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cluster_flags.h"
#include "cli/color.h"
#include "cli/commands.h"
#include "cli/examples.h"
#include "cli/usage.h"
#include "core/error.h"

// FLUXOPCTL_GIT_VERSION, the version `git describe` gives (cmake/build_info.cmake).
#include "build_info.inc"

namespace fluxop::cli {

int error_line(const std::string& message, int code) {
  std::cerr << "error: " << one_line(message) << "\n";
  return code;
}

namespace {

// The command's name, for an error no input names ("build: out of memory").
std::string command_of(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) return command->get_name();
  return app.get_name();
}

}  // namespace

const std::vector<CommandGroup>& command_groups() {
  using Cache = yaml::ParseCache;
  static const std::vector<CommandGroup> groups{
      {{"version"}, [](CLI::App& app, Cache&) { add_version_command(app); }},
      {{"kustomize"}, add_kustomize_command},
      {{"build"}, add_build_command},
      {{"pull"}, [](CLI::App& app, Cache&) { add_pull_command(app); }},
      {{"push"}, [](CLI::App& app, Cache&) { add_push_command(app); }},
      {{"images"}, [](CLI::App& app, Cache&) { add_images_command(app); }},
      {{"mirror"}, [](CLI::App& app, Cache&) { add_mirror_command(app); }},
      {{"apply"}, add_apply_command},
      {{"diff"}, add_diff_command},
      {{"check"}, add_check_command},
      {{"delete"}, [](CLI::App& app, Cache&) { add_delete_command(app); }},
      {{"get"}, [](CLI::App& app, Cache&) { add_get_command(app); }},
      {{"wait", "reconcile", "suspend", "resume"},
       [](CLI::App& app, Cache&) { add_request_commands(app); }},
      {{"report", "export"}, [](CLI::App& app, Cache&) { add_report_command(app); }},
      {{"tree"}, [](CLI::App& app, Cache&) { add_tree_command(app); }},
      {{"verify"}, [](CLI::App& app, Cache&) { add_verify_command(app); }},
      {{"create"}, [](CLI::App& app, Cache&) { add_create_command(app); }},
      {{"adopt"}, add_adopt_command},
      // help and completion read every command: never added alone.
      {{}, [](CLI::App& app, Cache&) { add_help_command(app); }},
      {{}, [](CLI::App& app, Cache&) { add_completion_command(app); }},
  };
  return groups;
}

void add_commands(CLI::App& app, yaml::ParseCache& parse_cache, std::string_view first_word) {
  app.name("fluxopctl");
  // Alone, fluxopctl prints its usage on stdout and succeeds, as kubectl.
  app.require_subcommand(0, 1);
  app.callback([&app] {
    if (app.get_subcommands().empty()) std::cout << app.help();
  });
  // Options of the app (the global flags) are taken after a command too.
  app.fallthrough();
  color::add_color_flag(app);
  add_global_cluster_flags(app);
  app.set_version_flag("--version", std::string("fluxopctl ") + FLUXOPCTL_GIT_VERSION);
  const std::vector<CommandGroup>& groups = command_groups();
  auto named = std::find_if(groups.begin(), groups.end(), [first_word](const CommandGroup& group) {
    return std::find(group.names.begin(), group.names.end(), first_word) != group.names.end();
  });
  if (named != groups.end()) {
    named->add(app, parse_cache);
  } else {
    for (const CommandGroup& group : groups) group.add(app, parse_cache);
  }
  // A command's help lists its own flags; the global ones are the app's.
  for (CLI::App* command : app.get_subcommands({})) {
    std::string footer;
    if (std::string_view examples = command_examples(command->get_name()); !examples.empty())
      footer.append("Examples:\n").append(examples).append("\n\n");
    command->footer(footer +
                    "Global flags, before or after the command (kubeconfig, context, namespace, "
                    "as, as-group, request-timeout, timeout, color): see 'fluxopctl --help'");
  }
}

int run(CLI::App& app, int argc, const char* const* argv, yaml::ParseCache& parse_cache) {
  try {
    std::vector<std::string> args = command_line(app, argc, argv);
    app.parse(args);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return error_line(usage_message(app, e), kExitUsage);
  } catch (const ExitStatus& status) {
    parse_cache.commit();  // diff: changes found, all read
    return status.code;
  } catch (const CommandError& e) {
    return error_line(e.what(), e.code());
  } catch (const Error& e) {
    return error_line(e.what(), 1);
  } catch (const std::filesystem::filesystem_error& e) {
    // The standard library's message starts "filesystem error: cannot ...":
    // the path and the system's reason are what the user acts on.
    std::string what = e.path1().empty() ? command_of(app) : e.path1().string();
    return error_line(what + ": " + e.code().message(), 1);
  } catch (const std::bad_alloc&) {
    return error_line(command_of(app) + ": out of memory", 1);
  } catch (const std::exception& e) {
    return error_line(std::string("internal: ") + e.what(), 1);
  }
  parse_cache.commit();
  return 0;
}

}  // namespace fluxop::cli
