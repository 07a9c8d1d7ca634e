#pragma once
// Host-side planning for the row-in-registers kernels (row_vectors.cuh); separate so the CPU
// tests can check it without a GPU.
#include <cstdint>
#include <string>

#include "kgate/core/family.hpp"

namespace kgate::kernels {

// The launch geometry of a row held in registers: the widest vector that divides n (rows stay
// 16-byte aligned only then), and the fewest vectors per thread that fit the block. A thread holds
// at most kMaxRowFloats values; blocks whose threads hold 32 or more stay at 512 threads, since
// 1024 such threads need more than the 64K registers of an SM (seen: fused add + RMSNorm at
// 16 x 8 values per thread failed to launch with cudaErrorLaunchOutOfResources).
inline constexpr int kMaxRowFloats = 64;

struct RowPlan {
  int vec;         // elements per vector: 8, 4, 2 or 1
  int per_thread;  // vectors per thread: 1, 2, 4, 8 or 16
  int threads;     // a multiple of 32
};

inline RowPlan plan_row(std::int64_t n) {
  RowPlan plan{};
  plan.vec = n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
  const std::int64_t vectors = n / plan.vec;
  for (int limit : {512, 1024}) {
    for (int k = 1; k <= 16 && k * plan.vec <= kMaxRowFloats; k *= 2) {
      const int thread_limit = k * plan.vec >= 32 ? 512 : limit;
      const std::int64_t threads = (vectors + k - 1) / k;
      if (threads <= thread_limit) {
        plan.per_thread = k;
        plan.threads = static_cast<int>((threads + 31) / 32 * 32);
        return plan;
      }
    }
  }
  throw UnsupportedShape("a row of " + std::to_string(n) + " elements does not fit in the registers of one block (" +
                         std::to_string(vectors) + " vectors of " + std::to_string(plan.vec) + ")");
}

}  // namespace kgate::kernels
