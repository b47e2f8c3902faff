// Work items run on a few threads at once: the copies of a mirror, the
// signature checks of the images an instance installs. Each is mostly
// waiting on a registry, so a handful in flight is what makes them fast.
#pragma once

#include <cstddef>
#include <functional>

namespace fluxop {

// The work of one thread: item i, for whichever items it is handed.
using ItemWork = std::function<void(std::size_t)>;

// Runs items 0 ... count - 1 on at most `concurrency` threads (this one among
// them), each thread's work made once by `make_worker` (what it keeps from
// item to item, such as its own connection or scratch directory; a thread
// whose worker cannot be made leaves the items to the others). Once an item
// throws, no item above it starts; when all have ended, the exception of the
// failed item with the lowest index is rethrown, the error a serial run
// would have met first (else a worker's making's, when no thread could make
// one).
void run_concurrently(std::size_t count, int concurrency,
                      const std::function<ItemWork()>& make_worker);

}  // namespace fluxop
