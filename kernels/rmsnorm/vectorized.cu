// RMSNorm with the row kept in registers: 128-bit loads (the widest vector dividing n), one read
// of x, a warp-shuffle block reduction, then scale and store from registers.
#include "../common/block_reduce.cuh"
#include "../common/launch_limits.hpp"
#include "../common/row_vectors.cuh"
#include "kgate/core/registry.hpp"
#include "rmsnorm.hpp"

namespace kgate::kernels {
namespace {

template <int VEC, int K>
__global__ void rmsnorm_vectorized_kernel(RmsNormArgs a) {
  const int vectors = a.n / VEC;
  const __nv_bfloat16* x = a.x + static_cast<std::size_t>(blockIdx.x) * a.n;
  __nv_bfloat16* y = a.y + static_cast<std::size_t>(blockIdx.x) * a.n;

  float row[K][VEC];
  float sum_sq = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vectors) {
      load_floats<VEC>(x, v, row[k]);
#pragma unroll
      for (int i = 0; i < VEC; ++i) sum_sq += row[k][i] * row[k][i];
    }
  }
#if defined(KGATE_PLANTED_REGRESSION)
  // Test-only (CMake option KGATE_PLANTED_REGRESSION, never in a normal build): every fourth block
  // also reads a row from the other half of the tensor — 25% more reads of x, about 12% more DRAM
  // traffic at large m — so the performance gate has a real slowdown to catch, clearly above its
  // 5% default threshold (a 5%-traffic version measured only 3.4-4.1% slower on an H200). The loads feed the
  // result through a multiplication by zero, which IEEE arithmetic forbids the compiler to drop.
  if (blockIdx.x % 4 == 0 && a.m > 1) {
    const __nv_bfloat16* other = a.x + static_cast<std::size_t>((blockIdx.x + a.m / 2) % a.m) * a.n;
    float extra = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int v = threadIdx.x + k * blockDim.x;
      if (v < vectors) {
        float values[VEC];
        load_floats<VEC>(other, v, values);
        extra += values[0];
      }
    }
    sum_sq += extra * 0.0f;
  }
#endif
#if defined(KGATE_PLANTED_DELAY_CYCLES)
  // Test-only (CMake cache variable KGATE_PLANTED_DELAY_CYCLES, never in a normal build): thread 0
  // of block 0 spins before the reduction, which the rest of its block waits for, so a launch ends
  // about that much later: 800 cycles are ~0.4 us at 2 GHz, 7% of a 5 us kernel.
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const long long start = clock64();
    while (clock64() - start < KGATE_PLANTED_DELAY_CYCLES) {
    }
  }
#endif
  const float rstd = rsqrtf(block_sum(sum_sq) / a.n + a.eps);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vectors) {
      float w[VEC];
      load_floats<VEC>(a.weight, v, w);
#pragma unroll
      for (int i = 0; i < VEC; ++i) row[k][i] *= rstd * w[i];
      store_floats<VEC>(y, v, row[k]);
    }
  }
}

// A row of one 16-byte vector per thread (n = 4096 at 512 threads) leaves each thread 16 bytes in
// flight. Once there are rows for many waves, half the threads with two vectors each keep twice
// the bytes in flight per SM at the same occupancy: 87.5% -> 97.3% of the copy ceiling at
// m = 32768, n = 4096 (H200). A few rows are latency-bound and finish sooner on more threads.
RowPlan plan_for(const RmsNormArgs& a) {
  RowPlan plan = plan_row(a.n);
  if (plan.per_thread == 1 && plan.threads >= 64 && rows_for_many_waves(a.m)) {
    plan.per_thread = 2;
    plan.threads = ((a.n / plan.vec + 1) / 2 + 31) / 32 * 32;
  }
  return plan;
}

void launch(const RmsNormArgs& a, cudaStream_t stream) {
  const RowPlan plan = plan_for(a);
  dispatch_row_plan(plan, [&]<int VEC, int K>() { rmsnorm_vectorized_kernel<VEC, K><<<a.m, plan.threads, 0, stream>>>(a); });
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(RmsNormFamily, launch,
                       {.name = "vectorized",
                        .description = "row in registers, 128-bit loads, warp-shuffle reduction",
                        .follows = "naive"});

}  // namespace kgate::kernels
