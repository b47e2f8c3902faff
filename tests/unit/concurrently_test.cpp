#include "core/concurrently.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace fluxop {
namespace {

TEST_CASE("run_concurrently: every item once, a worker made once per thread") {
  std::vector<std::atomic<int>> runs(50);
  std::atomic<int> workers{0};
  run_concurrently(runs.size(), 4, [&]() -> ItemWork {
    ++workers;
    return [&](std::size_t i) { ++runs[i]; };
  });
  for (const std::atomic<int>& count : runs) CHECK(count == 1);
  CHECK(workers >= 1);
  CHECK(workers <= 4);
  // Fewer items than threads: no idle thread is made.
  workers = 0;
  run_concurrently(2, 8, [&]() -> ItemWork {
    ++workers;
    return [](std::size_t) {};
  });
  CHECK(workers <= 2);
  // Nothing to do, and a concurrency below one, run on this thread alone.
  run_concurrently(0, 4, [] { return ItemWork([](std::size_t) { FAIL("no item"); }); });
  workers = 0;
  run_concurrently(3, 0, [&]() -> ItemWork {
    ++workers;
    return [](std::size_t) {};
  });
  CHECK(workers == 1);
}

TEST_CASE("run_concurrently: the items are in flight together") {
  // Each of the first three items waits until all three have started: a
  // serial run would never see three, and waits out the bound.
  std::mutex mutex;
  std::condition_variable started;
  int in_flight = 0;
  bool all_three = true;
  run_concurrently(3, 3, [&]() -> ItemWork {
    return [&](std::size_t) {
      std::unique_lock<std::mutex> held(mutex);
      ++in_flight;
      started.notify_all();
      if (!started.wait_for(held, std::chrono::seconds(60), [&] { return in_flight >= 3; }))
        all_three = false;
    };
  });
  CHECK(all_three);
}

TEST_CASE("run_concurrently: the error of the lowest failed item, as a serial run meets it") {
  // Item 1 fails only after item 3 has failed: the error said is item 1's.
  std::mutex mutex;
  std::condition_variable third_failed;
  bool third = false;
  CHECK_THROWS_WITH(run_concurrently(4, 4,
                                     [&]() -> ItemWork {
                                       return [&](std::size_t i) {
                                         std::unique_lock<std::mutex> held(mutex);
                                         if (i == 3) {
                                           third = true;
                                           third_failed.notify_all();
                                           throw std::runtime_error("item 3");
                                         }
                                         if (i == 1) {
                                           third_failed.wait_for(held, std::chrono::seconds(60),
                                                                 [&] { return third; });
                                           throw std::runtime_error("item 1");
                                         }
                                       };
                                     }),
                    "item 1");
  // Once one failed, no further item starts.
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH(run_concurrently(100, 1,
                                     [&]() -> ItemWork {
                                       return [&](std::size_t i) {
                                         ++ran;
                                         if (i == 5) throw std::runtime_error("item 5");
                                       };
                                     }),
                    "item 5");
  CHECK(ran == 6);
  // A worker that cannot be made.
  CHECK_THROWS_WITH(
      run_concurrently(3, 2, []() -> ItemWork { throw std::runtime_error("no scratch"); }),
      "no scratch");
}

}  // namespace
}  // namespace fluxop
