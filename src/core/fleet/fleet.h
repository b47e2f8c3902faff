// A fleet: one command on several clusters (kubeconfig contexts), which
// contexts, in what order and how many at once, and what the fleet's outcome
// is. It knows nothing of what the command does on a cluster.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace fluxop::fleet {

// The contexts a command runs on, in the order given: `named` (--context,
// repeated; each must be one of `available`), or with `all` (--all-contexts)
// every one of `available` whose name matches the shell glob `selector`
// (--context-selector; empty: all). Throws fluxop::Error naming the flag
// when a named context is missing, when none is selected, or for
// --context-selector without --all-contexts.
std::vector<std::string> select_contexts(const std::vector<std::string>& available,
                                         const std::vector<std::string>& named, bool all,
                                         const std::string& selector);

enum class Outcome {
  ok,       // done, nothing to report
  changed,  // done, and it would change something (diff)
  failed,
  skipped,  // not started: a failure stopped the fleet first
  count,    // not an outcome: the number of them
};

// "ok", "changed", "failed", "skipped": the summary's and -o json's word.
std::string_view outcome_name(Outcome outcome);

struct ClusterResult {
  Outcome outcome = Outcome::skipped;
  std::string message;  // one line for the summary table
};

// The clusters, indexes into the contexts, in the batches of a rollout:
// `size` each in order (0: one batch of all).
std::vector<std::vector<std::size_t>> batches(std::size_t count, std::size_t size);

struct RunOptions {
  std::size_t parallel = 8;         // clusters at once, at least 1
  std::size_t batch_size = 0;       // 0: no batches
  bool stop_on_failure = false;     // no batch after one with a failure
  bool fail_fast = false;           // no cluster started after a failure
  std::function<bool()> cancelled;  // a signal: nothing more is started
  // Hears of each cluster's result as it ends, on its thread.
  std::function<void(std::size_t, const ClusterResult&)> on_result;
};

// Runs `task` on each context (by index), at most `parallel` at once, batch
// after batch; a task that throws fluxop::Error has failed with its message.
// One cluster's failure does not stop the others unless `fail_fast` or
// `stop_on_failure` says so; those not started are skipped. The results are
// in the contexts' order.
std::vector<ClusterResult> run(std::size_t count, const RunOptions& options,
                               const std::function<ClusterResult(std::size_t)>& task);

// The command's exit code for the fleet: diff's 2 when a cluster failed or
// was skipped, else 1 when one would change, else 0; the others' 1 when a
// cluster failed or was skipped, else 0.
int exit_code(const std::vector<ClusterResult>& results, bool diff);

}  // namespace fluxop::fleet
