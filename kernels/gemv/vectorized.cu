// GEMV on the tensor cores, streaming W with 16-byte loads. A warp works on a tile of 16 rows of W
// and COLS 8-column tiles of x (COLS = 1 for m ≤ 8, 2 for m ≤ 16), over rounds of k that it shares
// with the tile's other warps (below). A round issues Tile::kLoads 16-byte W loads per lane as
// straight-line code before its first MMA, so they are all in flight together. (Loads guarded by a condition compile
// to branches that ptxas leaves next to their uses, 2-3 in flight instead: measured at 42-53% of
// DRAM bandwidth.) Only the last, partial round of k is guarded. Each warp step covers 32 k with
// two m16n8k16 MMAs per column tile: a sum over k is indifferent to the order of k, so
// instead of the MMA's own k order lane (g, t) takes 8 consecutive k — of W[row g], W[row g+8]
// and x[g], one 16-byte vector each — and the first MMA consumes elements 0-3 of those vectors, the
// second 4-7: the same permutation of k on both operands. W is read once with full 16-byte loads
// and no shared-memory staging; W bypasses L1 so that x, which every warp rereads, stays there.
// x is loaded next to its MMAs (an L1 hit, its latency hidden by the other warps) rather than
// with W. m = 16 keeps 16 rows per warp: with 32 (two row tiles) the 4096-row projections had
// half the warps, 12.5% of them active, and ran at 67% of DRAM bandwidth.
//
// A block of 8 warps covers R tiles (gemv_plan.hpp), the 8/R warps of a tile taking its rounds
// of k in turn; R grows above m 8, where blocks reread x (gemv_plan.hpp says why). R = 1 up to
// m 8: 1792 short blocks at n 28672 run in several waves that the block scheduler keeps every SM
// busy through. Blocks of 2-8 tiles sized to one wave, as before, left
// SMs with one block where others had two (224 blocks of 8 tiles at n 28672 on 132 SMs): on an
// H100, one tile per block took m 1-8 n 28672 from 84.0-84.9 to 77.8-78.4 us, 0.97x to 1.04x
// cuBLAS's speed. The warps' partial sums meet in shared memory and are added in a fixed order:
// deterministic, no atomics, no second kernel.
#include "../common/launch_limits.hpp"
#include "../common/packed.cuh"
#include "gemv.hpp"
#include "gemv_plan.hpp"
#include "kgate/core/cuda_check.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kStepK = 32;  // k per warp step: two MMAs of k 16

template <int COLS>
struct Tile {
  static constexpr int kRows = 16;        // rows of W per tile
  static constexpr int kCols = 8 * COLS;  // rows of x it multiplies them with
  // 16-byte W loads per lane and round, all in flight together. With two column tiles, 16 of them
  // and the x vectors that ptxas hoists beside them exceed the 128 registers, and ptxas issued half
  // the W loads after the round's first MMAs, which wait on the first loads: two DRAM round trips
  // a round (SASS, nvcc 13.0). 8 keeps every load ahead of the MMAs; on an H100, m 16 went from
  // 0.91-1.03x cuBLAS's speed to 0.98-1.12x (one tile per block); on an H200, 16 were 1-4% slower.
  static constexpr int kLoads = COLS == 1 ? 16 : 8;
  static constexpr int kSteps = kLoads / 2;
  static constexpr int kRoundK = kSteps * kStepK;
  // Independent accumulators per column tile: with one, the two MMAs of a step go to different
  // ones, halving the chain of dependent MMAs a round waits on.
  static constexpr int kChains = COLS == 1 ? 2 : 1;
  using Accumulators = float[COLS][kChains][4];
};

// 8 consecutive bf16 of a row as one 16-byte vector. FULL: the whole vector lies before k (every
// round but the last). Otherwise the elements from `valid` on read as zero. Rows of an odd k are
// not 16-byte aligned: ALIGNED = false gathers them one element at a time.
template <bool ALIGNED, bool FULL, bool WEIGHTS>
__device__ __forceinline__ uint4 load_vector(const __nv_bfloat16* p, int valid) {
  if constexpr (ALIGNED) {
    // k is a multiple of 8 here, so a vector is wholly inside or wholly outside.
    if (!FULL && valid <= 0) return make_uint4(0, 0, 0, 0);
    return WEIGHTS ? load_once_16B(p) : __ldg(reinterpret_cast<const uint4*>(p));
  } else {
    const auto* element = reinterpret_cast<const unsigned short*>(p);
    std::uint32_t half[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) half[i] = FULL || i < valid ? __ldg(element + i) : 0u;
    return make_uint4(half[0] | half[1] << 16, half[2] | half[3] << 16, half[4] | half[5] << 16, half[6] | half[7] << 16);
  }
}

// Where lane (g, t) reads its 8 k of step s within a round: the steps go in pairs, at
// 64·(s / 2) + 16t + 8·(s % 2). One load of a pair touches every sector of a row's 128-byte line
// and the other finishes them, so the L2 asks DRAM for whole lines; with the 4 lanes of a row on 64
// contiguous bytes per load instead (8t + 32s), the same kernel streamed W at 77% of the copy
// ceiling against 88% (H200, m = 1, n = 28672, k = 4096).
__device__ __forceinline__ int step_offset(int s, int t) { return 64 * (s / 2) + 16 * t + 8 * (s % 2); }

// One round of a warp: every W load first, then the MMAs. k0 is the round's first k.
template <int COLS, bool ALIGNED, bool FULL>
__device__ __forceinline__ void mma_round(const __nv_bfloat16* const (&w_row)[2], const __nv_bfloat16* const (&x_row)[COLS], int k0, int k,
                                          typename Tile<COLS>::Accumulators& acc) {
  using T = Tile<COLS>;
  static_assert(T::kSteps % 2 == 0, "a round pairs its steps");
  const int t = threadIdx.x & 3;
  uint4 w[T::kSteps][2];
#pragma unroll
  for (int s = 0; s < T::kSteps; ++s) {
    const int at = k0 + step_offset(s, t);
#pragma unroll
    for (int i = 0; i < 2; ++i) w[s][i] = load_vector<ALIGNED, FULL, true>(w_row[i] + at, k - at);
  }
#pragma unroll
  for (int s = 0; s < T::kSteps; ++s) {
    const int at = k0 + step_offset(s, t);
    const uint4& low = w[s][0];
    const uint4& high = w[s][1];
#pragma unroll
    for (int j = 0; j < COLS; ++j) {
      const uint4 x = load_vector<ALIGNED, FULL, false>(x_row[j] + at, k - at);
      mma_bf16_16x8x16(acc[j][0], low.x, high.x, low.y, high.y, x.x, x.y);
      mma_bf16_16x8x16(acc[j][T::kChains - 1], low.z, high.z, low.w, high.w, x.z, x.w);
    }
  }
}

// Row pointers of a warp's tile starting at row n0: rows past n and x rows past m are clamped to
// the last one, so they read valid memory and feed only outputs that are never stored (an MMA's
// rows and columns do not mix).
template <int COLS>
__device__ __forceinline__ void tile_rows(const __nv_bfloat16* w, const __nv_bfloat16* x, int n0, int n, int m, int k,
                                          const __nv_bfloat16* (&w_row)[2], const __nv_bfloat16* (&x_row)[COLS]) {
  const int g = (threadIdx.x & 31) >> 2;
#pragma unroll
  for (int i = 0; i < 2; ++i) w_row[i] = w + static_cast<std::size_t>(min(n0 + 8 * i + g, n - 1)) * k;
#pragma unroll
  for (int j = 0; j < COLS; ++j) x_row[j] = x + static_cast<std::size_t>(min(8 * j + g, m - 1)) * k;
}

// Writes a warp's accumulators to partial[column][row] (row pitch `pitch`), summing its chains.
// Accumulator layout (m16n8k16): acc[j] = {y[8j+2t][g], y[8j+2t+1][g], y[8j+2t][g+8],
// y[8j+2t+1][g+8]} for the warp's rows (second index) and x rows (first).
template <int COLS>
__device__ __forceinline__ void store_partial(const typename Tile<COLS>::Accumulators& acc, float* partial, int pitch) {
  using T = Tile<COLS>;
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < COLS; ++j) {
    float sum[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      sum[e] = acc[j][0][e];
#pragma unroll
      for (int c = 1; c < T::kChains; ++c) sum[e] += acc[j][c][e];
    }
    partial[(8 * j + 2 * t) * pitch + g] = sum[0];
    partial[(8 * j + 2 * t + 1) * pitch + g] = sum[1];
    partial[(8 * j + 2 * t) * pitch + g + 8] = sum[2];
    partial[(8 * j + 2 * t + 1) * pitch + g + 8] = sum[3];
  }
}

// tiles_per_block: R, a power of two dividing kWarps.
template <int COLS, bool ALIGNED>
__global__ void __launch_bounds__(kThreads, 2) gemv_mma_kernel(GemvArgs a, int tiles_per_block) {
  using T = Tile<COLS>;
  // +1: lanes of one column write different rows without sharing a bank.
  __shared__ float partial[kWarps][T::kCols][T::kRows + 1];
  const int warp = threadIdx.x >> 5;
  const int splitters = kWarps / tiles_per_block;
  const int split = warp % splitters;
  const int block_rows = tiles_per_block * T::kRows;
  const int n0 = blockIdx.x * block_rows + (warp / splitters) * T::kRows;

  const __nv_bfloat16* w_row[2];
  const __nv_bfloat16* x_row[COLS];
  tile_rows<COLS>(a.w, a.x, n0, a.n, a.m, a.k, w_row, x_row);

  typename T::Accumulators acc = {};
  // The bounds depend on the warp only: every lane runs every MMA, as mma.sync requires.
  const int full_rounds = a.k / T::kRoundK;
  int r = split;
  // Not unrolled: with the rounds' stride a constant, ptxas unrolled two rounds at m > 8 and moved
  // the second's W loads in among the first's MMAs, behind their waits: m 16 ran 6-14% slower on
  // an H100 (47.1 against 41.4 us at n 4096, k 14336).
#pragma unroll 1
  for (; r < full_rounds; r += splitters) mma_round<COLS, ALIGNED, true>(w_row, x_row, r * T::kRoundK, a.k, acc);
  if (r == full_rounds && a.k % T::kRoundK != 0) mma_round<COLS, ALIGNED, false>(w_row, x_row, r * T::kRoundK, a.k, acc);
  store_partial<COLS>(acc, &partial[warp][0][0], T::kRows + 1);
  __syncthreads();
  // One thread per output, consecutive threads on consecutive n; each sums its tile's warps in
  // warp order.
  for (int o = threadIdx.x; o < a.m * block_rows; o += kThreads) {
    const int m = o / block_rows, row = o % block_rows;
    const int n = blockIdx.x * block_rows + row;
    if (n >= a.n) continue;
    const int first_warp = row / T::kRows * splitters, tile_row = row % T::kRows;
    float sum = 0.0f;
    for (int s = 0; s < splitters; ++s) sum += partial[first_warp + s][m][tile_row];
    a.y[static_cast<std::size_t>(m) * a.n + n] = __float2bfloat16_rn(sum);
  }
}

template <int COLS, bool ALIGNED>
void launch_with(const GemvArgs& a, cudaStream_t stream) {
  const long long tiles = (a.n + Tile<COLS>::kRows - 1) / Tile<COLS>::kRows;
  const int tiles_per_block = gemv_tiles_per_block(a.m, tiles, sm_count());
  const long long blocks = (tiles + tiles_per_block - 1) / tiles_per_block;
  gemv_mma_kernel<COLS, ALIGNED><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, tiles_per_block);
  KGATE_CHECK_LAUNCH();
}

void launch(const GemvArgs& a, cudaStream_t stream) {
  if (a.m > 16) throw UnsupportedShape("m > 16: at most two 8-column MMA tiles of x");
  const bool aligned = a.k % 8 == 0;
  if (a.m > 8) return aligned ? launch_with<2, true>(a, stream) : launch_with<2, false>(a, stream);
  return aligned ? launch_with<1, true>(a, stream) : launch_with<1, false>(a, stream);
}

}  // namespace

KGATE_REGISTER_VARIANT(GemvFamily, launch,
                       {.name = "vectorized",
                        .description = "tensor-core MMA on 16-byte W loads (k permuted), 16 loads per lane in flight, "
                                       "16-row tiles, 1-4 per block by m (x reuse against balance), the block's 8 "
                                       "warps splitting k, deterministic shared-memory reduction",
                        .follows = "naive"});

}  // namespace kgate::kernels
