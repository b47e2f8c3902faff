#include "core/fleet/fleet.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "core/error.h"

using fluxop::Error;
using fluxop::fleet::ClusterResult;
using fluxop::fleet::Outcome;
using fluxop::fleet::RunOptions;
using Names = std::vector<std::string>;

namespace {

RunOptions options(std::size_t parallel, std::size_t batch_size = 0, bool stop_on_failure = false,
                   bool fail_fast = false) {
  RunOptions options;
  options.parallel = parallel;
  options.batch_size = batch_size;
  options.stop_on_failure = stop_on_failure;
  options.fail_fast = fail_fast;
  return options;
}

}  // namespace

TEST_CASE("fleet: contexts named, or all of them matching the selector") {
  Names available = {"kind-dev", "prod-eu", "prod-us", "staging-eu"};
  using fluxop::fleet::select_contexts;
  CHECK(select_contexts(available, {"prod-us", "kind-dev", "prod-us"}, false, "") ==
        Names{"prod-us", "kind-dev"});
  CHECK(select_contexts(available, {}, true, "") == available);
  CHECK(select_contexts(available, {}, true, "prod-*") == Names{"prod-eu", "prod-us"});
  CHECK(select_contexts(available, {}, true, "*-eu") == Names{"prod-eu", "staging-eu"});
  CHECK_THROWS_WITH_AS(select_contexts(available, {"prod-us", "qa"}, false, ""),
                       "--context: no context named \"qa\" in the kubeconfig", Error);
  CHECK_THROWS_WITH_AS(select_contexts(available, {}, true, "qa-*"),
                       "--context-selector: no context matches \"qa-*\"", Error);
  CHECK_THROWS_WITH_AS(select_contexts(available, {"prod-us"}, false, "prod-*"),
                       "--context-selector: only with --all-contexts", Error);
  CHECK_THROWS_WITH_AS(select_contexts(available, {"prod-us"}, true, ""),
                       "--all-contexts: not with --context", Error);
  CHECK_THROWS_WITH_AS(select_contexts({}, {}, true, ""),
                       "--all-contexts: the kubeconfig has no context", Error);
}

TEST_CASE("fleet: batches of the rollout, in order, the last one shorter") {
  using fluxop::fleet::batches;
  using Batches = std::vector<std::vector<std::size_t>>;
  CHECK(batches(5, 2) == Batches{{0, 1}, {2, 3}, {4}});
  CHECK(batches(3, 0) == Batches{{0, 1, 2}});
  CHECK(batches(2, 5) == Batches{{0, 1}});
  CHECK(batches(0, 2).empty());
}

TEST_CASE("fleet: exit codes, diff's and the others'") {
  using fluxop::fleet::exit_code;
  std::vector<ClusterResult> ok = {{Outcome::ok, ""}, {Outcome::ok, ""}};
  std::vector<ClusterResult> changed = {{Outcome::ok, ""}, {Outcome::changed, ""}};
  std::vector<ClusterResult> failed = {{Outcome::changed, ""}, {Outcome::failed, "x"}};
  std::vector<ClusterResult> skipped = {{Outcome::ok, ""}, {Outcome::skipped, ""}};
  CHECK(exit_code(ok, true) == 0);
  CHECK(exit_code(changed, true) == 1);
  CHECK(exit_code(failed, true) == 2);
  CHECK(exit_code(skipped, true) == 2);
  CHECK(exit_code(ok, false) == 0);
  CHECK(exit_code(changed, false) == 0);
  CHECK(exit_code(failed, false) == 1);
  CHECK(exit_code(skipped, false) == 1);
}

TEST_CASE("fleet: clusters run concurrently, at most --parallel at once, a failure isolated") {
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  auto task = [&](std::size_t i) {
    int now = ++running;
    for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
    if (i == 1) throw Error("unreachable");
    return ClusterResult{i == 2 ? Outcome::changed : Outcome::ok, ""};
  };
  std::vector<ClusterResult> results = fluxop::fleet::run(6, options(3), task);
  REQUIRE(results.size() == 6);
  CHECK(results[0].outcome == Outcome::ok);
  CHECK(results[1].outcome == Outcome::failed);
  CHECK(results[1].message == "unreachable");
  CHECK(results[2].outcome == Outcome::changed);
  for (std::size_t i = 3; i < 6; ++i) CHECK(results[i].outcome == Outcome::ok);
  CHECK(most <= 3);
  CHECK(most >= 2);  // at once, not one after the other
}

TEST_CASE("fleet: --fail-fast starts nothing after a failure") {
  std::vector<ClusterResult> results = fluxop::fleet::run(
      4, options(1, 0, false, /*fail_fast=*/true), [](std::size_t i) -> ClusterResult {
        if (i == 1) throw Error("refused");
        return {Outcome::ok, ""};
      });
  CHECK(results[0].outcome == Outcome::ok);
  CHECK(results[1].outcome == Outcome::failed);
  CHECK(results[2].outcome == Outcome::skipped);
  CHECK(results[3].outcome == Outcome::skipped);
}

TEST_CASE("fleet: a rollout in batches stops after the batch that failed, with --stop-on-failure") {
  std::mutex mutex;
  std::vector<std::size_t> started;
  auto task = [&](std::size_t i) -> ClusterResult {
    {
      std::lock_guard lock(mutex);
      started.push_back(i);
    }
    if (i == 2) return {Outcome::failed, "not ready"};
    return {Outcome::ok, ""};
  };
  std::vector<ClusterResult> results =
      fluxop::fleet::run(6, options(8, 2, /*stop_on_failure=*/true), task);
  // The canary batch (0, 1), then (2, 3), which failed: 4 and 5 never start.
  CHECK(started.size() == 4);
  CHECK(results[3].outcome == Outcome::ok);  // its batch went on: only later ones stop
  CHECK(results[4].outcome == Outcome::skipped);
  CHECK(results[5].outcome == Outcome::skipped);

  started.clear();
  results = fluxop::fleet::run(6, options(8, 2), task);
  CHECK(started.size() == 6);  // without --stop-on-failure every batch runs
  CHECK(results[5].outcome == Outcome::ok);
}
