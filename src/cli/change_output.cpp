#include "cli/change_output.h"

#include <iostream>

#include "cli/color.h"
#include "cli/duration_check.h"
#include "core/error.h"

namespace fluxop::cli {

void add_change_set_flags(CLI::App& command, ChangeSetFlags& flags) {
  command
      .add_option("--lock-timeout", flags.lock_timeout,
                  "How long to wait for another apply of the instance to finish")
      ->check(duration_check("1m"))
      ->option_text("DURATION (default 1m)");
  command
      .add_option("--dry-run", flags.dry_run,
                  "server: send every write as an API server dry run; nothing changes")
      ->check(CLI::IsMember({"none", "server"}))
      ->option_text("none|server");
  command.add_option("-o,--output", flags.output, "json: the change set as a JSON document")
      ->check(CLI::IsMember({"json"}))
      ->option_text("json");
}

ChangeSetOutput::ChangeSetOutput(const ChangeSetFlags& flags, bool verbose)
    : json_(flags.json()),
      verbose_(verbose),
      document_({{"dryRun", flags.server_dry_run()}, {"changes", nullptr}}) {}

std::function<void(const ssa::Change&)> ChangeSetOutput::on_change() {
  return [this](const ssa::Change& change) {
    changes_.push_back(change);
    if (json_ || (change.action == ssa::Action::Unchanged && !verbose_)) return;
    std::string suffix = document_["dryRun"].get<bool>() ? " (server dry run)" : "";
    std::cout << color::change(change.action, printable(ssa::change_line(change)) + suffix) << "\n"
              << std::flush;
  };
}

void ChangeSetOutput::run(const std::function<void()>& command) {
  try {
    command();
  } catch (const Error& error) {
    if (!json_) throw;
    document_["error"] = error.what();
    document_["changes"] = ssa::change_set_json(changes_);
    std::cout << printable_json(document_.dump(4)) << "\n";
    throw;
  }
  if (json_) {
    document_["changes"] = ssa::change_set_json(changes_);
    std::cout << printable_json(document_.dump(4)) << "\n";
  }
}

}  // namespace fluxop::cli
