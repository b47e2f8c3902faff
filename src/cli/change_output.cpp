#include "cli/change_output.h"

#include <iostream>
#include <map>

#include "cli/color.h"
#include "cli/duration_check.h"
#include "core/error.h"
#include "core/plural.h"

namespace fluxop::cli {

void add_change_set_flags(CLI::App& command, ChangeSetFlags& flags) {
  command
      .add_option("--lock-timeout", flags.lock_timeout,
                  "How long to wait for another apply of the instance to finish")
      ->check(duration_check("1m"))
      ->option_text("DURATION (default 1m)");
  add_dry_run_flag(command, flags.dry_run);
  command.add_option("-o,--output", flags.output, "json: the change set as a JSON document")
      ->check(CLI::IsMember({"json"}))
      ->option_text("json");
}

CLI::Option* add_dry_run_flag(CLI::App& command, std::string& mode) {
  return command
      .add_flag("--dry-run", mode,
                "Change nothing: every write is sent as an API server dry run (client, the "
                "default of a bare --dry-run, and server alike), what would change is said")
      // A flag alone reads "true": kubectl's bare --dry-run, client.
      ->transform(CLI::Validator(
          [](std::string& value) {
            if (value == "true") value = "client";
            return std::string();
          },
          ""))
      ->check(CLI::IsMember({"none", "client", "server"}))
      ->option_text("[=none|client|server]");
}

std::string dry_run_summary(const std::vector<ssa::Change>& changes) {
  std::map<std::string, std::size_t> actions;
  std::size_t changed = 0;
  for (const ssa::Change& change : changes) {
    if (change.action == ssa::Action::Unchanged || change.action == ssa::Action::Skipped) continue;
    ++changed;
    ++actions[std::string(ssa::action_name(change.action))];
  }
  std::string detail;
  for (const auto& [action, count] : actions)
    detail += (detail.empty() ? " (" : ", ") + std::to_string(count) + " " + action;
  return "Dry run: " + count_of(changed, "object") + " would change" +
         (detail.empty() ? "" : detail + ")") + "; nothing was written";
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
