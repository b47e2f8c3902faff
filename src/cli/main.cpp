#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <string_view>

#include "cli/cluster_flags.h"
#include "cli/color.h"
#include "cli/commands.h"
#include "cli/examples.h"
#include "cli/usage.h"
#include "core/cache_root.h"
#include "core/error.h"
#include "core/yaml/parse_cache.h"

// FLUXOPCTL_GIT_VERSION, the version `git describe` gives (cmake/build_info.cmake).
#include "build_info.inc"

namespace {

using fluxop::cli::kExitUsage;

// Every error is one short line on stderr: a message that spans lines (from
// a library) is joined, and a value no message quoted is cut.
int fail(const std::string& message, int code) {
  std::cerr << "error: " << fluxop::one_line(message) << "\n";
  return code;
}

// What a command printed counts only once it is written: a full disk or a
// closed pipe behind stdout (`build > /dev/full`) fails the command, whatever
// it returned.
int flushed(int code) {
  errno = 0;
  bool written =
      static_cast<bool>(std::cout.flush()) && std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (written) return code;
  int error = errno;
  // A write that failed earlier, in a flush of the stream's buffer, left no
  // errno: a regular file at the file-size limit says why.
  struct stat info {};
  struct rlimit limit {};
  if (error == 0 && fstat(STDOUT_FILENO, &info) == 0 && S_ISREG(info.st_mode) &&
      getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<rlim_t>(info.st_size) >= limit.rlim_cur)
    error = EFBIG;
  return fail(std::string("stdout: ") + (error ? std::strerror(error) : "write error"),
              code == 0 ? 1 : code);
}

// The command's name, for an error no input names ("build: out of memory").
std::string command_of(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) return command->get_name();
  return app.get_name();
}

int run(CLI::App& app, int argc, char** argv, fluxop::yaml::ParseCache& parse_cache) {
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
  } catch (const std::filesystem::filesystem_error& e) {
    // The standard library's message starts "filesystem error: cannot ...":
    // the path and the system's reason are what the user acts on.
    std::string what = e.path1().empty() ? command_of(app) : e.path1().string();
    return fail(what + ": " + e.code().message(), 1);
  } catch (const std::bad_alloc&) {
    return fail(command_of(app) + ": out of memory", 1);
  } catch (const std::exception& e) {
    return fail(std::string("internal: ") + e.what(), 1);
  }
  parse_cache.commit();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file-size limit (`ulimit -f`), a write fails with EFBIG and is an
  // error line naming the file, as a full disk is, never a death by signal
  // with half the output written.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"fluxopctl: render, apply and diff Flux installations from a FluxInstance"};
  app.name("fluxopctl");
  // Alone, fluxopctl prints its usage on stdout and succeeds, as kubectl.
  app.require_subcommand(0, 1);
  app.callback([&app] {
    if (app.get_subcommands().empty()) std::cout << app.help();
  });
  // Options of the app (the global flags) are taken after a command too.
  app.fallthrough();
  fluxop::cli::color::add_color_flag(app);
  fluxop::cli::add_global_cluster_flags(app);
  app.set_version_flag("--version", std::string("fluxopctl ") + FLUXOPCTL_GIT_VERSION);
  fluxop::cli::add_version_command(app);
  // Entries are written once the command has read everything it parsed.
  fluxop::yaml::ParseCache parse_cache = fluxop::yaml::user_parse_cache(fluxop::user_cache_root());
  fluxop::cli::add_kustomize_command(app, parse_cache);
  fluxop::cli::add_build_command(app, parse_cache);
  fluxop::cli::add_pull_command(app);
  fluxop::cli::add_push_command(app);
  fluxop::cli::add_images_command(app);
  fluxop::cli::add_mirror_command(app);
  fluxop::cli::add_apply_command(app, parse_cache);
  fluxop::cli::add_diff_command(app, parse_cache);
  fluxop::cli::add_check_command(app, parse_cache);
  fluxop::cli::add_delete_command(app);
  fluxop::cli::add_instance_commands(app);
  fluxop::cli::add_report_command(app);
  fluxop::cli::add_verify_command(app);
  fluxop::cli::add_create_command(app);
  fluxop::cli::add_adopt_command(app, parse_cache);
  fluxop::cli::add_help_command(app);
  fluxop::cli::add_completion_command(app);
  // A command's help lists its own flags; the global ones are the app's.
  for (CLI::App* command : app.get_subcommands({})) {
    std::string footer;
    if (std::string_view examples = fluxop::cli::command_examples(command->get_name());
        !examples.empty())
      footer.append("Examples:\n").append(examples).append("\n\n");
    command->footer(footer +
                    "Global flags, before or after the command (kubeconfig, context, namespace, "
                    "as, as-group, request-timeout, timeout, color): see 'fluxopctl --help'");
  }
  return flushed(run(app, argc, argv, parse_cache));
}
