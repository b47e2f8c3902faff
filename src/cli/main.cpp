#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"

namespace {

constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fluxopctl: render, apply and diff Flux installations from a FluxInstance"};
  app.name("fluxopctl");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("fluxopctl ") + FLUXOPCTL_VERSION);
  fluxop::cli::add_version_command(app);
  fluxop::cli::add_kustomize_command(app);
  fluxop::cli::add_build_command(app);
  fluxop::cli::add_pull_command(app);
  fluxop::cli::add_push_command(app);
  fluxop::cli::add_apply_command(app);
  fluxop::cli::add_diff_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const fluxop::cli::ExitStatus& status) {
    return status.code;
  } catch (const fluxop::cli::CommandError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return e.code();
  } catch (const fluxop::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
