#include "cli/fleet.h"

#include <malloc.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/notice.h"
#include "cli/table.h"
#include "core/kube/kubeconfig.h"

namespace fluxop::cli {

void add_fleet_flags(CLI::App& command, FleetFlags& flags) {
  command.add_flag("--all-contexts", flags.all_contexts,
                   "Run on every context of the kubeconfig (all the files of $KUBECONFIG), "
                   "concurrently");
  command
      .add_option("--context-selector", flags.selector,
                  "With --all-contexts: only the contexts whose name matches this shell glob, "
                  "e.g. 'staging-*'")
      ->option_text("GLOB");
  command
      .add_option("--parallel", flags.parallel,
                  "With several contexts: at most this many clusters at once")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}))
      ->option_text("N (default 8)");
  command.add_flag("--fail-fast", flags.fail_fast,
                   "With several contexts: start no more clusters once one has failed");
}

std::vector<std::string> fleet_contexts(const ClusterFlags& cluster, const FleetFlags& flags) {
  if (!flags.all_contexts && flags.selector.empty() && cluster.contexts.size() <= 1) return {};
  std::vector<std::string> available =
      kube::context_names({cluster.kubeconfig, ""}, kube::Environment::current());
  return fleet::select_contexts(available, cluster.contexts, flags.all_contexts, flags.selector);
}

std::vector<fleet::ClusterResult> run_fleet(
    const std::vector<std::string>& contexts, const ClusterFlags& cluster, const FleetFlags& flags,
    const std::function<fleet::ClusterResult(const FleetMember&)>& task) {
  catch_interrupts();
  // glibc gives each thread that allocates its own arena (up to 8 per core),
  // each holding on to its freed memory: ten clusters' JSON in ten arenas
  // is what a fleet's peak memory is made of. Two arenas keep it near one
  // cluster's, and the threads mostly wait on the network anyway.
  if (contexts.size() > 1) mallopt(M_ARENA_MAX, 2);
  fleet::RunOptions options{.parallel = flags.parallel,
                            .batch_size = flags.batch_size,
                            .stop_on_failure = flags.stop_on_failure,
                            .fail_fast = flags.fail_fast,
                            .cancelled = interrupted,
                            .on_result = [&](std::size_t i, const fleet::ClusterResult& result) {
                              if (result.outcome != fleet::Outcome::failed) return;
                              NoticePrefix prefix(contexts[i]);
                              print_notice("error: " + result.message);
                            }};
  std::vector<fleet::ClusterResult> results =
      fleet::run(contexts.size(), options, [&](std::size_t i) {
        NoticePrefix prefix(contexts[i]);
        FleetMember member{i, contexts[i], cluster};
        member.settings.context = contexts[i];
        return task(member);
      });
  // Interrupted: the exit status and message of an interrupted command.
  run_interruptible([] {
    if (interrupted()) throw Error("interrupted");
  });
  return results;
}

void print_fleet_summary(const std::vector<std::string>& contexts,
                         const std::vector<fleet::ClusterResult>& results,
                         const std::vector<std::string>& columns,
                         const std::function<std::vector<std::string>(std::size_t)>& cells) {
  std::vector<std::string> header = {"CLUSTER", "STATUS"};
  header.insert(header.end(), columns.begin(), columns.end());
  header.push_back("MESSAGE");
  std::vector<std::vector<std::string>> rows = {header};
  for (std::size_t i = 0; i < contexts.size(); ++i) {
    std::vector<std::string> row = {contexts[i],
                                    std::string(fleet::outcome_name(results[i].outcome))};
    std::vector<std::string> more = cells && results[i].outcome != fleet::Outcome::failed &&
                                            results[i].outcome != fleet::Outcome::skipped
                                        ? cells(i)
                                        : std::vector<std::string>(columns.size(), "-");
    row.insert(row.end(), more.begin(), more.end());
    row.push_back(one_line(results[i].message));
    rows.push_back(std::move(row));
  }
  std::cout << render_table(rows);
}

void exit_with(const std::vector<fleet::ClusterResult>& results, bool diff) {
  if (int code = fleet::exit_code(results, diff); code != 0) throw ExitStatus{code};
}

}  // namespace fluxop::cli
