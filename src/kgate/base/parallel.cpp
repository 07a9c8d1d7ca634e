#include "kgate/base/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace kgate {

namespace {
thread_local std::size_t scoped_threads = 0;  // 0: none in scope
}  // namespace

ScopedHostThreads::ScopedHostThreads(std::size_t threads) : previous_(scoped_threads) {
  scoped_threads = std::max<std::size_t>(threads, 1);
}
ScopedHostThreads::~ScopedHostThreads() { scoped_threads = previous_; }

std::size_t host_threads() {
  if (scoped_threads > 0) return scoped_threads;
  if (const char* text = std::getenv("KGATE_HOST_THREADS"); text && *text) {
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    if (*end != '\0' || value < 1) throw std::invalid_argument(std::string("KGATE_HOST_THREADS is not a positive integer: ") + text);
    return static_cast<std::size_t>(value);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(std::size_t count, std::size_t grain, const std::function<void(std::size_t begin, std::size_t end)>& body,
                  std::size_t threads) {
  if (count == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t blocks = (count + grain - 1) / grain;
  threads = std::clamp<std::size_t>(threads, 1, blocks);

  std::atomic<std::size_t> next_block{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  const auto work = [&] {
    for (std::size_t block; !failed.load(std::memory_order_relaxed) && (block = next_block.fetch_add(1)) < blocks;) {
      try {
        body(block * grain, std::min(count, (block + 1) * grain));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  try {
    for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  } catch (const std::system_error&) {  // no more threads to be had (a process or user limit): fewer do the work
  }
  work();
  for (std::thread& helper : helpers) helper.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace kgate
