// GEMV on the tensor cores, streaming W with 16-byte loads. A block owns 16 rows of W (16
// outputs per m) and its 8 warps split k; each warp step covers 32 k with two m16n8k16 MMAs,
// the 16 W rows as A and up to 8 rows of x as B (a second 8-column tile when m > 8). A sum over k
// is indifferent to the order of k, so instead of the MMA's own k order each lane takes 8
// consecutive k: lane (g, t) loads W[row g][8t .. 8t+8) and W[row g+8][...] and x[g][...] as one
// 16-byte vector each, and the first MMA consumes elements 0-3 of those vectors, the second 4-7 —
// the same permutation of k on both operands. So W is read once with full 16-byte loads and no
// shared-memory staging, and with m ≤ 16 the MMAs cost nothing next to the memory stream (fp32
// FMAs would be the bottleneck at m = 16). Each warp issues kUnroll steps of loads before its
// first MMA; W bypasses L1 so that x, which every block rereads, stays there. The 8 warps'
// partial sums meet in shared memory and are added in a fixed order: deterministic, no atomics.
// Llama's projections have n ≥ 4096, i.e. ≥ 256 blocks of 8 warps, which fills an H100/H200
// without splitting k across blocks.
#include "../common/packed.cuh"
#include "gemv.hpp"
#include "kgate/registry.hpp"

namespace kgate::kernels {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kRows = 16;    // rows of W per block: the MMA's m
constexpr int kStepK = 32;   // k per warp step: two MMAs of k 16
constexpr int kUnroll = 4;   // steps whose loads are in flight together

// TILES: 8-column tiles of x rows, 1 for m ≤ 8, 2 for m ≤ 16.
template <int TILES>
__global__ void __launch_bounds__(kThreads) gemv_mma_kernel(GemvArgs a) {
  __shared__ float partial[kWarps][8 * TILES][kRows];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = blockIdx.x * kRows;

  // Rows past n and x rows past m read as zeros; their pointers are clamped to stay inside.
  const bool has_low = n0 + g < a.n, has_high = n0 + g + 8 < a.n;
  const __nv_bfloat16* w_low = a.w + static_cast<std::size_t>(min(n0 + g, a.n - 1)) * a.k;
  const __nv_bfloat16* w_high = a.w + static_cast<std::size_t>(min(n0 + g + 8, a.n - 1)) * a.k;
  bool has_x[TILES];
  const __nv_bfloat16* x_row[TILES];
#pragma unroll
  for (int j = 0; j < TILES; ++j) {
    has_x[j] = 8 * j + g < a.m;
    x_row[j] = a.x + static_cast<std::size_t>(min(8 * j + g, a.m - 1)) * a.k;
  }

  const uint4 zero = make_uint4(0, 0, 0, 0);
  float acc[TILES][4] = {};
  // The bound depends on the warp only: every lane runs every MMA, as mma.sync requires.
  for (int base = warp * kUnroll * kStepK; base < a.k; base += kWarps * kUnroll * kStepK) {
    uint4 low[kUnroll], high[kUnroll], xs[TILES][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = base + u * kStepK + 8 * t;
      const bool inside = k < a.k;  // k is a multiple of 8, so a vector is wholly in or out
      low[u] = inside && has_low ? load_once_16B(w_low + k) : zero;
      high[u] = inside && has_high ? load_once_16B(w_high + k) : zero;
#pragma unroll
      for (int j = 0; j < TILES; ++j)
        xs[j][u] = inside && has_x[j] ? __ldg(reinterpret_cast<const uint4*>(x_row[j] + k)) : zero;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < TILES; ++j) {
        mma_bf16_16x8x16(acc[j], low[u].x, high[u].x, low[u].y, high[u].y, xs[j][u].x, xs[j][u].y);
        mma_bf16_16x8x16(acc[j], low[u].z, high[u].z, low[u].w, high[u].w, xs[j][u].z, xs[j][u].w);
      }
    }
  }

#pragma unroll
  for (int j = 0; j < TILES; ++j) {
    partial[warp][8 * j + 2 * t][g] = acc[j][0];
    partial[warp][8 * j + 2 * t + 1][g] = acc[j][1];
    partial[warp][8 * j + 2 * t][g + 8] = acc[j][2];
    partial[warp][8 * j + 2 * t + 1][g + 8] = acc[j][3];
  }
  __syncthreads();
  static_assert(kRows * 8 * TILES <= kThreads, "one thread per output of the block");
  const int m = threadIdx.x / kRows, r = threadIdx.x % kRows;
  if (m < a.m && n0 + r < a.n) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += partial[w][m][r];
    a.y[static_cast<std::size_t>(m) * a.n + n0 + r] = __float2bfloat16_rn(sum);
  }
}

void launch(const GemvArgs& a, cudaStream_t stream) {
  if (a.k % 8 != 0) throw UnsupportedShape("k must be a multiple of 8 for 16-byte rows");
  if (a.m > 16) throw UnsupportedShape("m > 16: at most two 8-column MMA tiles of x");
  const unsigned blocks = static_cast<unsigned>((a.n + kRows - 1) / kRows);
  if (a.m > 8) {
    gemv_mma_kernel<2><<<blocks, kThreads, 0, stream>>>(a);
  } else {
    gemv_mma_kernel<1><<<blocks, kThreads, 0, stream>>>(a);
  }
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(GemvFamily, launch,
                       {.name = "vectorized",
                        .description = "tensor-core MMA on 16-byte W loads (k permuted), 8 warps split k per 16 rows, "
                                       "deterministic shared-memory reduction"});

}  // namespace kgate::kernels
