#include "core/fleet/fleet.h"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "core/enum_table.h"
#include "core/error.h"

namespace fluxop::fleet {

std::vector<std::string> select_contexts(const std::vector<std::string>& available,
                                         const std::vector<std::string>& named, bool all,
                                         const std::string& selector) {
  if (!selector.empty() && !all) throw Error("--context-selector: only with --all-contexts");
  if (all && !named.empty()) throw Error("--all-contexts: not with --context");
  if (!all) {
    for (const std::string& name : named) {
      if (std::find(available.begin(), available.end(), name) == available.end())
        throw Error("--context: no context named " + quote(name) + " in the kubeconfig");
    }
    std::vector<std::string> unique;
    for (const std::string& name : named) {
      if (std::find(unique.begin(), unique.end(), name) == unique.end()) unique.push_back(name);
    }
    return unique;
  }
  std::vector<std::string> selected;
  for (const std::string& name : available) {
    if (selector.empty() || fnmatch(selector.c_str(), name.c_str(), 0) == 0)
      selected.push_back(name);
  }
  if (selected.empty()) {
    throw Error(selector.empty() ? std::string("--all-contexts: the kubeconfig has no context")
                                 : "--context-selector: no context matches " + quote(selector));
  }
  return selected;
}

namespace {

constexpr EnumName<Outcome> kOutcomes[] = {{Outcome::ok, "ok"},
                                           {Outcome::changed, "changed"},
                                           {Outcome::failed, "failed"},
                                           {Outcome::skipped, "skipped"}};
static_assert(covers_enum(kOutcomes));

}  // namespace

std::string_view outcome_name(Outcome outcome) { return enum_row(kOutcomes, outcome).name; }

std::vector<std::vector<std::size_t>> batches(std::size_t count, std::size_t size) {
  if (size == 0) size = std::max<std::size_t>(count, 1);
  std::vector<std::vector<std::size_t>> all;
  for (std::size_t first = 0; first < count; first += size) {
    std::vector<std::size_t>& batch = all.emplace_back();
    for (std::size_t i = first; i < std::min(count, first + size); ++i) batch.push_back(i);
  }
  return all;
}

namespace {

ClusterResult run_one(const std::function<ClusterResult(std::size_t)>& task, std::size_t index) {
  try {
    return task(index);
  } catch (const Error& e) {
    return {Outcome::failed, e.what()};
  } catch (const std::exception& e) {
    // A bug or an exhausted resource on one cluster's thread must not end
    // the process with the others half-done.
    return {Outcome::failed, std::string("internal error: ") + e.what()};
  }
}

}  // namespace

std::vector<ClusterResult> run(std::size_t count, const RunOptions& options,
                               const std::function<ClusterResult(std::size_t)>& task) {
  std::vector<ClusterResult> results(count);
  std::atomic<bool> stop{false};
  auto stopped = [&] { return stop || (options.cancelled && options.cancelled()); };
  for (const std::vector<std::size_t>& batch : batches(count, options.batch_size)) {
    if (stopped()) break;
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
      for (std::size_t at; !stopped() && (at = next++) < batch.size();) {
        ClusterResult& result = results[batch[at]];
        result = run_one(task, batch[at]);
        if (options.on_result) options.on_result(batch[at], result);
        if (result.outcome == Outcome::failed && options.fail_fast) stop = true;
      }
    };
    std::size_t threads = std::min(std::max<std::size_t>(options.parallel, 1), batch.size());
    if (threads == 1) {
      worker();  // no thread for one cluster: the one-context path stays as it was
    } else {
      std::vector<std::jthread> workers;
      for (std::size_t i = 0; i < threads; ++i) workers.emplace_back(worker);
    }
    if (options.stop_on_failure && std::any_of(batch.begin(), batch.end(), [&](std::size_t i) {
          return results[i].outcome == Outcome::failed;
        }))
      stop = true;
  }
  return results;
}

int exit_code(const std::vector<ClusterResult>& results, bool diff) {
  auto any = [&](Outcome outcome) {
    return std::any_of(results.begin(), results.end(),
                       [&](const ClusterResult& r) { return r.outcome == outcome; });
  };
  bool failed = any(Outcome::failed) || any(Outcome::skipped);
  if (diff) return failed ? 2 : any(Outcome::changed) ? 1 : 0;
  return failed ? 1 : 0;
}

}  // namespace fluxop::fleet
