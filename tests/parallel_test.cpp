#include "kgate/base/parallel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

// Sets an environment variable for one test and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace

TEST(ParallelFor, EveryIndexRunsOnceInBlocksOfAtMostTheGrain) {
  for (std::size_t threads : {1u, 2u, 3u, 8u})
    for (std::size_t count : {0u, 1u, 7u, 64u, 1001u})
      for (std::size_t grain : {1u, 5u, 64u, 5000u}) {
        std::vector<std::atomic<int>> runs(count);
        std::atomic<std::size_t> widest{0};
        kgate::parallel_for(
            count, grain,
            [&](std::size_t begin, std::size_t end) {
              ASSERT_LT(begin, end);
              ASSERT_LE(end, count);
              EXPECT_EQ(begin % grain, 0u) << "blocks start on the grain";
              for (std::size_t i = begin; i < end; ++i) ++runs[i];
              for (std::size_t w = widest; end - begin > w && !widest.compare_exchange_weak(w, end - begin);) {
              }
            },
            threads);
        for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(runs[i], 1) << "index " << i << " of " << count << ", grain " << grain;
        EXPECT_LE(widest.load(), grain);
      }
}

TEST(ParallelFor, SpreadsBlocksOverTheThreadsAsked) {
  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::atomic<int> waiting{0};
  // Each of the first four blocks waits until four are running at once: only four threads let it end.
  kgate::parallel_for(
      4, 1,
      [&](std::size_t, std::size_t) {
        ++waiting;
        while (waiting < 4) std::this_thread::yield();
        const std::lock_guard<std::mutex> lock(mutex);
        seen.insert(std::this_thread::get_id());
      },
      4);
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_TRUE(seen.count(std::this_thread::get_id())) << "the calling thread is one of them";
}

TEST(ParallelFor, OneThreadIsTheCallingOneInOrder) {
  std::vector<std::size_t> begins;
  const std::thread::id caller = std::this_thread::get_id();
  kgate::parallel_for(
      10, 3,
      [&](std::size_t begin, std::size_t) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
        begins.push_back(begin);
      },
      1);
  EXPECT_EQ(begins, (std::vector<std::size_t>{0, 3, 6, 9}));
}

TEST(ParallelFor, ABlocksExceptionReachesTheCallerAndStopsTheRest) {
  for (std::size_t threads : {1u, 4u}) {
    std::atomic<std::size_t> ran{0};
    EXPECT_THROW(kgate::parallel_for(
                     1000, 1,
                     [&](std::size_t begin, std::size_t) {
                       ++ran;
                       if (begin == 3) throw std::runtime_error("block 3");
                     },
                     threads),
                 std::runtime_error);
    // One thread takes the blocks in order and stops at the failure; with more, the others may
    // finish the blocks they hold (how many depends on timing), but the exception still arrives.
    if (threads == 1) {
      EXPECT_EQ(ran.load(), 4u) << "blocks after the failure are not taken";
    }
  }
  try {
    kgate::parallel_for(
        10, 1,
        [](std::size_t begin, std::size_t) {
          if (begin == 0) throw std::out_of_range("first");
        },
        1);
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "first") << "the block's own exception, not a wrapper";
  }
}

TEST(HostThreads, ReadsKgateHostThreadsAndRefusesWhatIsNotAPositiveInteger) {
  {
    ScopedEnv env("KGATE_HOST_THREADS", "3");
    EXPECT_EQ(kgate::host_threads(), 3u);
  }
  for (const char* bad : {"0", "-2", "four", "2x"}) {
    ScopedEnv env("KGATE_HOST_THREADS", bad);
    try {
      kgate::host_threads();
      FAIL() << "accepted KGATE_HOST_THREADS=" << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  ScopedEnv empty("KGATE_HOST_THREADS", "");
  EXPECT_GE(kgate::host_threads(), 1u) << "unset or empty: the cores";
}

TEST(HostThreads, AScopeOverridesTheEnvironmentOnItsThreadUntilItEnds) {
  ScopedEnv env("KGATE_HOST_THREADS", "6");
  {
    const kgate::ScopedHostThreads one(1);
    EXPECT_EQ(kgate::host_threads(), 1u);
    {
      const kgate::ScopedHostThreads three(3);
      EXPECT_EQ(kgate::host_threads(), 3u);
    }
    EXPECT_EQ(kgate::host_threads(), 1u) << "the inner scope's end restores the outer one";
    std::size_t elsewhere = 0;
    std::thread([&] { elsewhere = kgate::host_threads(); }).join();
    EXPECT_EQ(elsewhere, 6u) << "another thread is not in the scope";
  }
  EXPECT_EQ(kgate::host_threads(), 6u);
}
