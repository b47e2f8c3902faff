#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/color.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "core/cache_root.h"
#include "core/error.h"
#include "core/yaml/parse_cache.h"

namespace {

using fluxop::cli::kExitUsage;

// Every error is one short line on stderr: a message that spans lines (from
// a library) is joined, and a value no message quoted is cut.
int fail(const std::string& message, int code) {
  std::cerr << "error: " << fluxop::one_line(message) << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fluxopctl: render, apply and diff Flux installations from a FluxInstance"};
  app.name("fluxopctl");
  app.require_subcommand(1);
  // Options of the app (--color) are taken after a command too.
  app.fallthrough();
  fluxop::cli::color::add_color_flag(app);
  app.set_version_flag("--version", std::string("fluxopctl ") + FLUXOPCTL_VERSION);
  fluxop::cli::add_version_command(app);
  // Entries are written once the command has read everything it parsed.
  fluxop::yaml::ParseCache parse_cache = fluxop::yaml::user_parse_cache(fluxop::user_cache_root());
  fluxop::cli::add_kustomize_command(app, parse_cache);
  fluxop::cli::add_build_command(app, parse_cache);
  fluxop::cli::add_pull_command(app);
  fluxop::cli::add_push_command(app);
  fluxop::cli::add_apply_command(app, parse_cache);
  fluxop::cli::add_diff_command(app, parse_cache);
  fluxop::cli::add_delete_command(app);
  fluxop::cli::add_instance_commands(app);
  fluxop::cli::add_report_command(app);
  fluxop::cli::add_help_command(app);
  fluxop::cli::add_completion_command(app);
  try {
    std::vector<std::string> args = fluxop::cli::command_line(app, argc, argv);
    app.parse(args);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(fluxop::cli::usage_message(app, e), kExitUsage);
  } catch (const fluxop::cli::ExitStatus& status) {
    parse_cache.commit();  // diff: changes found, all read
    return status.code;
  } catch (const fluxop::cli::CommandError& e) {
    return fail(e.what(), e.code());
  } catch (const fluxop::Error& e) {
    return fail(e.what(), 1);
  } catch (const std::exception& e) {
    return fail(std::string("internal: ") + e.what(), 1);
  }
  parse_cache.commit();
  return 0;
}
