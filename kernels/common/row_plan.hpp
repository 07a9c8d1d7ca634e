#pragma once
// Host-side planning for the row-in-registers kernels (row_vectors.cuh); separate so the CPU
// tests can check it without a GPU.
#include <algorithm>
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

// The most threads a row block may have when each holds per_thread vectors of vec values.
constexpr int row_thread_limit(int vec, int per_thread) { return per_thread * vec >= 32 ? 512 : 1024; }

// The registers a row kernel may use: 65536 per SM over its largest block, and at most 40 where
// each thread holds 16 values or fewer in vectors of four or eight (the bench shapes' kernels),
// so that blocks of 512 threads fit three to an SM, as Liger-Kernel's do (38-40 registers). ptxas
// meets it without spilling for rmsnorm/weight_first and for fused_add_rmsnorm/weight_first at two
// vectors, whose loads carry no bounds test (row_norm.cuh's load_weight_then_rows; with one, it
// spilled 8 bytes and reloaded 28). (At 16 single values per thread the packed bf16 take a
// register each, and 40 would spill far more: no limit below the block's.)
constexpr int row_register_limit(int vec, int per_thread) {
  return per_thread * vec <= 16 && vec >= 4 ? 40 : 65536 / row_thread_limit(vec, per_thread);
}

// The widest vector (8, 4, 2 or 1 elements) that divides n: rows of n elements stay aligned to it.
constexpr int widest_vector(std::int64_t n) { return n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1; }

// Calls launch_for.template operator()<VEC>() with VEC = widest_vector(n), or max_width (8, 4, 2
// or 1) where that is narrower.
template <class LaunchFor>
void dispatch_vector_width(std::int64_t n, LaunchFor&& launch_for, int max_width = 8) {
  switch (std::min(widest_vector(n), max_width)) {
    case 8: return launch_for.template operator()<8>();
    case 4: return launch_for.template operator()<4>();
    case 2: return launch_for.template operator()<2>();
    default: return launch_for.template operator()<1>();
  }
}

struct RowPlan {
  int vec;         // elements per vector: 8, 4, 2 or 1
  int per_thread;  // vectors per thread: 1, 2, 4, 8 or 16
  int threads;     // a multiple of 32
};

// min_per_thread (1, 2 or 4) starts the search at that many vectors per thread: fewer threads,
// each with more bytes in flight before the reduction, where one vector each would fit.
inline RowPlan plan_row(std::int64_t n, int min_per_thread = 1) {
  RowPlan plan{};
  plan.vec = widest_vector(n);
  const std::int64_t vectors = n / plan.vec;
  for (int limit : {512, 1024}) {
    for (int k = min_per_thread; k <= 16 && k * plan.vec <= kMaxRowFloats; k *= 2) {
      const int thread_limit = std::min(row_thread_limit(plan.vec, k), limit);
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
