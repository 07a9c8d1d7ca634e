// FlashAttention-1 style, the starting point of ../shared/reference-reports/attention-kernel-session-report.md:
// one block of 256 threads per (query tile of 64 rows, head, sequence), looping over the K/V tiles
// of 64 keys one after another with an online softmax. All threads load each tile into shared
// memory (fp32), but only the first 64 compute, one query row each: scores against the tile's
// keys, the running maximum and sum, and the row's fp32 output accumulator in registers; the other
// 192 wait at the barrier (25% of the threads busy). With the causal mask the tiles above the
// diagonal are skipped. Scalar FP32 math, accurate expf.
#include <stdexcept>
#include <string>

#include "../common/launch_limits.hpp"
#include "kgate/core/registry.hpp"
#include "launch_dispatch.hpp"
#include "prefill_attention.hpp"
#include "split_plan.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kRows = prefill::kTileRows;
constexpr int kKeys = prefill::kTileKeys;

template <int D>
struct SeqTile {
  // Rows of q and of the scores padded by one float: thread r reads row r, so the rows must start
  // on different banks. K and V are read by every thread at the same address (a broadcast).
  static constexpr int kQueryStride = D + 1;
  static constexpr int kScoreStride = kKeys + 1;
  static constexpr int kSharedBytes = static_cast<int>(sizeof(float)) * (kRows * kQueryStride + 2 * kKeys * D + kRows * kScoreStride);
};

template <int D>
__global__ void __launch_bounds__(kThreads) fa1_seqkv_kernel(PrefillAttentionArgs a) {
  using Tile = SeqTile<D>;
  extern __shared__ float shared[];
  float* query = shared;                             // [kRows][D + 1], scaled
  float* keys = query + kRows * Tile::kQueryStride;  // [kKeys][D]
  float* values = keys + kKeys * D;                  // [kKeys][D]
  float* scores = values + kKeys * D;                // [kRows][kKeys + 1]

  const int tile = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int kv_head = h / (a.heads / a.kv_heads);
  const std::size_t head_rows = (static_cast<std::size_t>(b) * a.heads + h) * a.seq_len;  // first row of this head
  const std::size_t kv_first = (static_cast<std::size_t>(b) * a.kv_heads + kv_head) * a.seq_len * D;
  const int first_row = tile * kRows;

  for (int i = threadIdx.x; i < kRows * D; i += kThreads) {
    const int r = i / D, e = i % D, row = first_row + r;
    query[r * Tile::kQueryStride + e] = row < a.seq_len ? __bfloat162float(a.q[(head_rows + row) * D + e]) * a.scale : 0.0f;
  }

  const int r = threadIdx.x, row = first_row + r;
  const bool computes = r < kRows && row < a.seq_len;
  float accumulator[D];
#pragma unroll
  for (int e = 0; e < D; ++e) accumulator[e] = 0.0f;
  float running_max = -INFINITY, total = 0.0f;

  const int tiles = prefill::key_tiles(a.seq_len, a.causal, tile);
  for (int kv_tile = 0; kv_tile < tiles; ++kv_tile) {
    __syncthreads();  // the previous tile is no longer read (and, the first time, q is stored)
    const int first_key = kv_tile * kKeys;
    for (int i = threadIdx.x; i < kKeys * D; i += kThreads) {
      const int key = first_key + i / D;
      const std::size_t at = kv_first + static_cast<std::size_t>(key) * D + i % D;
      keys[i] = key < a.seq_len ? __bfloat162float(a.k[at]) : 0.0f;
      values[i] = key < a.seq_len ? __bfloat162float(a.v[at]) : 0.0f;
    }
    __syncthreads();
    if (!computes) continue;

    // The tile's first key is visible to every row of this query tile (kv_tile <= tile), so the
    // tile maximum is finite.
    float tile_max = -INFINITY;
    for (int j = 0; j < kKeys; ++j) {
      const int key = first_key + j;
      float score = -INFINITY;
      if (key < a.seq_len && (!a.causal || key <= row)) {
        score = 0.0f;
#pragma unroll
        for (int e = 0; e < D; ++e) score += query[r * Tile::kQueryStride + e] * keys[j * D + e];
      }
      scores[r * Tile::kScoreStride + j] = score;
      tile_max = fmaxf(tile_max, score);
    }
    const float new_max = fmaxf(running_max, tile_max);
    const float correction = expf(running_max - new_max);  // 0 at the first tile
    total *= correction;
#pragma unroll
    for (int e = 0; e < D; ++e) accumulator[e] *= correction;
    for (int j = 0; j < kKeys; ++j) {
      const float p = expf(scores[r * Tile::kScoreStride + j] - new_max);
      total += p;
#pragma unroll
      for (int e = 0; e < D; ++e) accumulator[e] += p * values[j * D + e];
    }
    running_max = new_max;
  }

  if (!computes) return;
  const float inverse = 1.0f / total;
#pragma unroll
  for (int e = 0; e < D; ++e) a.o[(head_rows + row) * D + e] = __float2bfloat16_rn(accumulator[e] * inverse);
  a.lse[head_rows + row] = running_max + logf(total);
}

template <int D>
void launch_for(const PrefillAttentionArgs& a, cudaStream_t stream) {
  constexpr auto kernel = fa1_seqkv_kernel<D>;
  allow_dynamic_shared<kernel, SeqTile<D>::kSharedBytes>();
  const dim3 grid(prefill::query_tiles(a.seq_len), a.heads, a.batch);
  kernel<<<grid, kThreads, SeqTile<D>::kSharedBytes, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

void launch(const PrefillAttentionArgs& a, cudaStream_t stream) {
  if (a.heads > 65535 || a.batch > 65535) throw UnsupportedShape("more than 65535 heads or sequences (grid y, z)");
  prefill::dispatch_head_dim(a, "fa1_seqkv", [&]<int D>() { launch_for<D>(a, stream); });
}

}  // namespace

KGATE_REGISTER_VARIANT(PrefillAttentionFamily, launch,
                       {.name = "fa1_seqkv",
                        .description = "FlashAttention-1 style: one block per query tile, K/V tiles in sequence with an "
                                       "online softmax, one thread per query row (64 of 256 busy), scalar FP32",
                        // ~2.5 TFLOP/s: its long shapes say nothing its short ones do not, at seconds each
                        // (a benchmark launches it about 30 times: both modes, the counter pass).
                        .max_bench_flops = 1e11,
                        .follows = "naive"});

}  // namespace kgate::kernels
