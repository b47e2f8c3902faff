#include "core/concurrently.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace fluxop {

void run_concurrently(std::size_t count, int concurrency,
                      const std::function<ItemWork()>& make_worker) {
  std::atomic<std::size_t> next{0};
  // The lowest item that failed (count: none): items above it do not start,
  // items below it all run, so its error is the one a serial run meets.
  std::atomic<std::size_t> lowest_failed{count};
  // One slot per item: each is written by the one thread that ran it.
  std::vector<std::exception_ptr> item_errors(count);
  std::atomic<std::size_t> items_ended{0};
  std::mutex worker_error_mutex;
  std::exception_ptr worker_error;
  auto run = [&] {
    ItemWork work;
    try {
      work = make_worker();
    } catch (...) {
      std::lock_guard<std::mutex> held(worker_error_mutex);
      if (!worker_error) worker_error = std::current_exception();
      return;
    }
    for (std::size_t i = next++; i < lowest_failed; i = next++) {
      try {
        work(i);
      } catch (...) {
        item_errors[i] = std::current_exception();
        std::size_t lowest = lowest_failed;
        while (i < lowest && !lowest_failed.compare_exchange_weak(lowest, i)) {
        }
      }
      ++items_ended;
    }
  };
  std::size_t threads_wanted =
      std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, concurrency)));
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < threads_wanted; ++i) {
    // A thread the system refuses leaves the items to the others.
    try {
      threads.emplace_back(run);
    } catch (const std::system_error&) {
      break;
    }
  }
  run();
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : item_errors)
    if (error) std::rethrow_exception(error);
  // Items left undone with none failed: no thread had a worker.
  if (items_ended < count && worker_error) std::rethrow_exception(worker_error);
}

}  // namespace fluxop
