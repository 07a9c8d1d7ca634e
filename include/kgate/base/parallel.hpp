#pragma once
// Host work split over threads. The correctness suite's largest cost is its fp64 host references
// (attention over every query row, GEMV over every output row), and running more processes to
// spread them costs a CUDA context each, which the driver makes one at a time for the whole host
// (docs/ci.md). Threads inside one process cost none.
#include <cstddef>
#include <functional>

namespace kgate {

// The threads a process may use: within a ScopedHostThreads, its count; else KGATE_HOST_THREADS
// when set (scripts/gpu_tests.py sets it to the process's share of the cores), else the cores the
// C++ runtime reports, at least 1. Throws std::invalid_argument when KGATE_HOST_THREADS is not a
// positive integer.
std::size_t host_threads();

// host_threads() is `threads` on the thread that makes this, until it is destroyed: the host
// reference's check runs a reference a second time on one thread, to see that its values do not
// depend on how its work was split.
class ScopedHostThreads {
 public:
  explicit ScopedHostThreads(std::size_t threads);
  ~ScopedHostThreads();
  ScopedHostThreads(const ScopedHostThreads&) = delete;
  ScopedHostThreads& operator=(const ScopedHostThreads&) = delete;

 private:
  std::size_t previous_;
};

// Calls body(begin, end) on blocks of at most `grain` consecutive indices covering [0, count),
// each block once, on up to `threads` threads (the calling one among them), which take the blocks
// in order as they finish the last: rows of unequal cost (a causal mask's) still spread evenly.
// Each block's work must be independent of the others' for the result not to depend on the
// thread count. The first exception a block throws is rethrown once every thread has stopped;
// blocks not yet taken by then are not run.
void parallel_for(std::size_t count, std::size_t grain, const std::function<void(std::size_t begin, std::size_t end)>& body,
                  std::size_t threads = host_threads());

}  // namespace kgate
