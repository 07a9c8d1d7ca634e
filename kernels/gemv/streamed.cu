// GEMV with W streamed through a shared-memory ring by the copy engine (sm_90a), for the H200,
// where gemv/vectorized reached 78-87% of the copy ceiling at n 28672 and cuBLAS's TMA-fed,
// persistent kernel (nvjet_sm90_tst_128x16, an 11-stage ring) 93-94%: gemv/vectorized keeps its
// bytes in flight in registers, one round of k at a time, and between its rounds the loads stop.
//
// One block per SM, each with a contiguous run of 16-row tiles of W (as even as whole tiles
// allow), taken 4 tiles (64 rows) at a time: a group. A group is read in chunks of 256 k, one ring
// stage each, which a producer warp has the copy engine (TMA) fill with boxes of 16 rows x 64 k
// in the 128-byte swizzle (so the 8 rows an ldmatrix reads fall in 8 different bank groups): 4
// per tile of W, and 4 of x's rows (8 or 16, all of them). The stage's "full" mbarrier completes
// when its boxes have landed. Six stages of 36 KB (five of 40 KB at m > 8) keep up to 192 KB of W
// in flight per SM.
//
// How the copies are made decided the speed (H200, cuBLAS's time / this kernel's at the 20 bench
// shapes, one run each): a 1-D bulk copy per row of a stage (64 of 512 bytes) gave 0.36-0.51x,
// 33-37% of the copy ceiling at every m; boxes of W (2 KB each, or 8 KB spanning 4 slabs: the same
// speed) 0.59-0.88x at m 1 but 0.36-0.53x at m 16, where x (128 KB at k 4096) no longer stayed in
// L1 and every stage waited on L2 for it. So x comes through the ring as W does: 0.81-1.03x
// (16-row boxes of x and five stages at every m), against 0.83-1.15x for gemv/vectorized in the
// same run. It is ahead of gemv/vectorized at m 8-16 for n 6144 and 28672 (1.03-1.06x: 0.88-0.97x
// of cuBLAS where vectorized had 0.83-0.94x) and behind it at the other 16 shapes (0.86-0.98x).
// On an H100 (six stages for m ≤ 8) it is 0.97-1.07x cuBLAS and 0.92-0.99x gemv/vectorized. What
// still holds it at 81-83% of copy at n 28672 on the H200, against cuBLAS's 92%, is open: ncu
// (H100, m 1, n 28672) has DRAM 82% busy and the warps waiting, not issuing.
//
// The copies ask for no L2 promotion: W is read once, and the 256-byte L2 fills that attention's
// tensor maps ask for (its K and V are read again) cost time here. With them the landed ring was
// 0.80-1.06x cuBLAS on an H200 (geomean 0.946); without, in the same run, 0.81-1.10x (0.972):
// 1.04-1.07x faster at n 6144 and 28672, the same (±0.5%) at n 4096.
//
// Eight consumer warps: warp w takes tile w % 4 of the group and half w / 4 of each chunk's k (8
// steps of 16), reads W's and x's fragments with ldmatrix, and multiplies with mma.sync m16n8k16
// as gemv/vectorized does (x as the 8-column B operand, one or two column tiles for m ≤ 8 or
// ≤ 16). Each warp releases the stage on its "empty" mbarrier; the producer refills it. At the end
// of a group the two halves of k meet in shared memory, added in a fixed order (deterministic),
// and y is written.
//
// Rows past n or m and k past the end are zeros (TMA fills a box's out-of-bounds part); tiles past
// the block's run and slabs wholly past k are not copied, and no consumer reads them for an
// output that is stored. k must be a multiple of 8 (TMA's 16-byte row strides).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../common/launch_limits.hpp"
#include "../common/packed.cuh"
#include "../common/sm90.cuh"
#include "gemv.hpp"
#include "kgate/core/cuda_check.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

constexpr int kConsumerWarps = 8;
constexpr int kThreads = (kConsumerWarps + 1) * 32;  // the last warp is the producer
constexpr int kTileRows = 16;                        // rows of one m16n8k16 A tile, and at most m
constexpr int kGroupTiles = 4;                       // tiles of W a stage holds
constexpr int kGroupRows = kGroupTiles * kTileRows;
constexpr int kSlabBytes = kTileRows * kSlabRowBytes;  // one box of W: 16 rows of a slab, 2 KB
constexpr int kChunkSlabs = 4;                         // slabs of a stage: 256 k
constexpr int kChunkK = kChunkSlabs * kSlabWidth;
constexpr int kTileBytes = kChunkSlabs * kSlabBytes;  // one tile's 4 boxes: 8 KB
constexpr int kHalfK = kChunkK / 2;                   // a consumer warp's k per stage
static_assert(kConsumerWarps == 2 * kGroupTiles, "two warps per tile, one per half of the chunk");
static_assert(kHalfK % kSlabWidth == 0, "a half chunk is whole slabs");

// [half of k][row of the group][x row]: the consumers' partial sums at the end of a group (+1 keeps
// a column's rows in different banks).
constexpr int kPartialPitch = 16 + 1;
constexpr int kPartialBytes = 2 * kGroupRows * kPartialPitch * 4;
constexpr int kSmemLimit = 227 * 1024;  // an sm_90 block's dynamic shared memory

// A stage: W's 4 tiles, then x's rows (8 per column tile) as 4 slabs. As many stages as fit: 6 of
// 36 KB for m ≤ 8, 5 of 40 KB above.
template <int COLS>
struct Ring {
  static constexpr int kXRows = 8 * COLS;
  static constexpr int kXSlabBytes = kXRows * 128;
  static constexpr int kXOffset = kGroupTiles * kTileBytes;
  static constexpr int kStageBytes = kXOffset + kChunkSlabs * kXSlabBytes;
  static constexpr int kStages = (kSmemLimit - kPartialBytes) / (kStageBytes + 16);  // + a full and an empty barrier
  static constexpr int kBarrierOffset = kStages * kStageBytes + kPartialBytes;
  static constexpr int kSmemBytes = kBarrierOffset + 2 * kStages * 8;
  static_assert(kXSlabBytes % 1024 == 0, "x's slabs keep the 1 KB alignment of the 128-byte swizzle");
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kSteps = kHalfK / 16;          // a consumer warp's MMA steps per stage
constexpr int kSlabSteps = kSlabWidth / 16;  // steps per slab

// Tiles [first, end) of block b out of `blocks`, as even as whole tiles allow.
__device__ __forceinline__ int first_tile(long long tiles, int blocks, int b) { return static_cast<int>(tiles * b / blocks); }

// The ring position of a block's i-th stage fill: its slot and the parity of that slot's use.
template <int STAGES>
struct RingSlot {
  int stage;
  std::uint32_t parity;
  __device__ explicit RingSlot(int i) : stage(i % STAGES), parity(static_cast<std::uint32_t>(i / STAGES) & 1u) {}
};

template <int COLS>
__global__ void __launch_bounds__(kThreads, 1)
    gemv_streamed_kernel(const __grid_constant__ CUtensorMap w_map, const __grid_constant__ CUtensorMap x_map, GemvArgs a) {
  using R = Ring<COLS>;
  using Slot = RingSlot<R::kStages>;
  extern __shared__ __align__(1024) unsigned char smem[];  // the 128-byte swizzle repeats every 1 KB
  const std::uint32_t base = shared_address(smem);
  const auto full = [&](int s) { return base + R::kBarrierOffset + 8 * s; };
  const auto empty = [&](int s) { return base + R::kBarrierOffset + 8 * (R::kStages + s); };
  float* partial = reinterpret_cast<float*>(smem + R::kStages * R::kStageBytes);

  const long long tiles = (a.n + kTileRows - 1) / kTileRows;
  const int tile_begin = first_tile(tiles, gridDim.x, blockIdx.x), tile_end = first_tile(tiles, gridDim.x, blockIdx.x + 1);
  const int chunks = (a.k + kChunkK - 1) / kChunkK;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

  if (threadIdx.x == 0) {
    for (int s = 0; s < R::kStages; ++s) {
      mbarrier_init(full(s), 1);                // the producer's arrive; the bytes complete it
      mbarrier_init(empty(s), kConsumerWarps);  // one arrive per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp == kConsumerWarps) {  // the producer: lane 4t + s copies slab s of tile t (t = 4: x)
    const int tile = lane / kChunkSlabs, slab = lane % kChunkSlabs;
    int fill = 0;
    for (int group = tile_begin; group < tile_end; group += kGroupTiles) {
      const int group_tiles = min(tile_end - group, kGroupTiles);
      for (int chunk = 0; chunk < chunks; ++chunk, ++fill) {
        const Slot slot(fill);
        const int k0 = chunk * kChunkK, slabs = min(kChunkSlabs, (a.k - k0 + kSlabWidth - 1) / kSlabWidth);
        mbarrier_wait(empty(slot.stage), slot.parity ^ 1u);
        if (lane == 0) mbarrier_arrive_expect_bytes(full(slot.stage), slabs * (group_tiles * kSlabBytes + R::kXSlabBytes));
        __syncwarp();
        const std::uint32_t stage = base + slot.stage * R::kStageBytes;
        if (slab < slabs) {
          if (tile < group_tiles)
            tma_load_box(stage + tile * kTileBytes + slab * kSlabBytes, w_map, k0 + slab * kSlabWidth, (group + tile) * kTileRows, 0,
                         full(slot.stage));
          else if (tile == kGroupTiles)
            tma_load_box(stage + R::kXOffset + slab * R::kXSlabBytes, x_map, k0 + slab * kSlabWidth, 0, 0, full(slot.stage));
        }
      }
    }
    return;
  }

  // A consumer warp: tile `tile` of each group, k half `half` of each chunk.
  const int tile = warp % kGroupTiles, half = warp / kGroupTiles;
  const int g = lane >> 2, t = lane & 3, quad = lane >> 3;
  // ldmatrix x4: lanes 8q..8q+7 address matrix q's rows. W (A): matrices 0-3 are rows 0-7 and
  // 8-15 at k 0-7, then the same rows at k 8-15. x (B, x's rows as its 8 columns): with two column
  // tiles, rows 0-7 at k 0-7 and 8-15, then rows 8-15 the same (one step); with one, rows 0-7 at
  // k 0-7, 8-15, 16-23, 24-31 (two steps).
  const int w_row = (lane & 7) + 8 * (quad & 1), w_chunk = quad >> 1;
  const int x_row = (lane & 7) + (COLS == 2 ? 8 * (quad >> 1) : 0), x_chunk = COLS == 2 ? (quad & 1) : quad;
  const std::uint32_t w_offset = tile * kTileBytes + half * (kHalfK / kSlabWidth) * kSlabBytes;
  const std::uint32_t x_offset = R::kXOffset + half * (kHalfK / kSlabWidth) * R::kXSlabBytes;
  int fill = 0;
  for (int group = tile_begin; group < tile_end; group += kGroupTiles) {
    float acc[COLS][4] = {};
    for (int chunk = 0; chunk < chunks; ++chunk, ++fill) {
      const Slot slot(fill);
      const int k0 = chunk * kChunkK + half * kHalfK;  // this warp's first k in the chunk
      const std::uint32_t stage = base + slot.stage * R::kStageBytes;
      mbarrier_wait(full(slot.stage), slot.parity);
      std::uint32_t b[kSteps][COLS][2];
#pragma unroll
      for (int s = 0; s < kSteps; s += (COLS == 2 ? 1 : 2)) {
        if (k0 + 16 * s >= a.k) break;  // slabs past k were not copied (warp-uniform)
        std::uint32_t r[4];
        ldmatrix_x4(r, stage + x_offset + (s / kSlabSteps) * R::kXSlabBytes + swizzled_chunk(x_row, 2 * (s % kSlabSteps) + x_chunk));
        if constexpr (COLS == 2) {
          b[s][0][0] = r[0], b[s][0][1] = r[1], b[s][1][0] = r[2], b[s][1][1] = r[3];
        } else {
          b[s][0][0] = r[0], b[s][0][1] = r[1], b[s + 1][0][0] = r[2], b[s + 1][0][1] = r[3];
        }
      }
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        if (k0 + 16 * s >= a.k) break;
        std::uint32_t w[4];
        ldmatrix_x4(w, stage + w_offset + (s / kSlabSteps) * kSlabBytes + swizzled_chunk(w_row, 2 * (s % kSlabSteps) + w_chunk));
#pragma unroll
        for (int j = 0; j < COLS; ++j) mma_bf16_16x8x16(acc[j], w[0], w[1], w[2], w[3], b[s][j][0], b[s][j][1]);
      }
      __syncwarp();
      if (lane == 0) mbarrier_arrive(empty(slot.stage));
    }
    // The group's result: each warp's partial sums, then each output the sum of its two halves.
    // D fragment: d0, d1 = rows g, x rows 2t, 2t+1 of column tile j; d2, d3 = rows g + 8.
    float* mine = partial + (half * kGroupRows + tile * kTileRows) * kPartialPitch;
#pragma unroll
    for (int j = 0; j < COLS; ++j) {
      mine[g * kPartialPitch + 8 * j + 2 * t] = acc[j][0];
      mine[g * kPartialPitch + 8 * j + 2 * t + 1] = acc[j][1];
      mine[(g + 8) * kPartialPitch + 8 * j + 2 * t] = acc[j][2];
      mine[(g + 8) * kPartialPitch + 8 * j + 2 * t + 1] = acc[j][3];
    }
    asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumerWarps * 32) : "memory");  // the consumers only
    const int row0 = group * kTileRows, rows = min(min(tile_end - group, kGroupTiles) * kTileRows, a.n - row0);
    for (int o = threadIdx.x; o < a.m * rows; o += kConsumerWarps * 32) {
      const int m = o / rows, row = o % rows;
      const float sum = partial[row * kPartialPitch + m] + partial[(kGroupRows + row) * kPartialPitch + m];
      a.y[static_cast<std::size_t>(m) * a.n + row0 + row] = __float2bfloat16_rn(sum);
    }
    asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumerWarps * 32) : "memory");  // read before the next group writes
  }
}

#else

template <int COLS>
__global__ void gemv_streamed_kernel(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, GemvArgs) {
}  // no sm_90a code: require_hopper refuses first

#endif

template <int COLS>
void launch_with(const GemvArgs& a, cudaStream_t stream) {
  constexpr CUtensorMapL2promotion kNoPromotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  allow_dynamic_shared<gemv_streamed_kernel<COLS>, Ring<COLS>::kSmemBytes>();  // once per process, before any capture
  const long long tiles = (a.n + kTileRows - 1) / kTileRows;
  const int blocks = static_cast<int>(std::min<long long>(tiles, sm_count()));
  gemv_streamed_kernel<COLS><<<blocks, kThreads, Ring<COLS>::kSmemBytes, stream>>>(
      slab_boxes_map(a.w, 1, a.n, a.k, kTileRows, "gemv/streamed", kNoPromotion),
      slab_boxes_map(a.x, 1, a.m, a.k, Ring<COLS>::kXRows, "gemv/streamed", kNoPromotion), a);
  KGATE_CHECK_LAUNCH();
}

void launch(const GemvArgs& a, cudaStream_t stream) {
  require_hopper("gemv/streamed");
  if (a.m > 16) throw UnsupportedShape("m > 16: at most two 8-column MMA tiles of x");
  if (a.k % 8 != 0) throw UnsupportedShape("k not a multiple of 8: TMA needs 16-byte row strides");
  if (a.m > 8) return launch_with<2>(a, stream);
  return launch_with<1>(a, stream);
}

}  // namespace

KGATE_REGISTER_VARIANT(
    GemvFamily, launch,
    {.name = "streamed",
     .description = "sm_90a: one block per SM, W and x copied by TMA (boxes of 16 rows x 64 k, 128-byte "
                    "swizzle, no L2 promotion) into a 5- or 6-stage shared-memory ring on mbarriers, a producer warp and 8 "
                    "consumer warps (ldmatrix + mma.sync), deterministic reduction of two k halves",
     .min_compute_capability = 90,
     .follows = "vectorized"});

}  // namespace kgate::kernels
