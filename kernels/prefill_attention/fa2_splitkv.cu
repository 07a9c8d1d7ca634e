// The session report's Priorities 1 and 2 on top of fa1_seqkv (scalar FP32 math still; tensor
// cores are fa2_mma's step):
// - Split-KV: when batch × heads × query tiles blocks do not fill a wave of the device, each query
//   tile's keys are cut into pieces (split_plan.hpp) that different blocks process in parallel,
//   each writing its normalized partial output and log-sum-exp to scratch; a second kernel merges
//   the pieces of every row. A query tile whose keys fit one piece writes its output directly.
// - Every thread computes: the 256 threads of a block tile the 64×64 score block and the 64×d
//   output block in 4×4 and 4×(d/16) register tiles (16 threads share a query row and reduce its
//   maximum and sum by shuffles), reading q, k, v and the probabilities from shared memory as
//   16-byte vectors. The scores are kept in base 2 (q pre-scaled by log2(e)/sqrt(d)).
// With the causal mask, key tiles above the diagonal are skipped, and the blocks of the longest
// query tiles are scheduled first.
#include <stdexcept>
#include <string>

#include "../common/launch_limits.hpp"
#include "../common/packed.cuh"
#include "kgate/core/registry.hpp"
#include "launch_dispatch.hpp"
#include "prefill_attention.hpp"
#include "split_plan.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kRows = prefill::kTileRows;
constexpr int kKeys = prefill::kTileKeys;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <int D>
struct SplitTile {
  // Thread (ty, tx) = (tid / 16, tid % 16) owns rows 4·ty..4·ty+3, score columns (keys)
  // 4·tx..4·tx+3 and output columns 64·c + 4·tx..+3 for c < D/64.
  static constexpr int kColumnBlocks = D / 64;
  // q and k are stored transposed ([d][row], [d][key]) so that a thread's four rows or keys at one
  // d are one 16-byte load; 4 floats of padding keep rows 16-byte aligned on shifted banks.
  static constexpr int kStride = kRows + 4;
  static constexpr int kQueryFloats = D * kStride;
  static constexpr int kKvFloats = D * kStride;               // k transposed, then v as [key][d] (kKeys·D fits)
  static constexpr int kProbabilityFloats = kRows * kStride;  // [row][key]
  static constexpr int kSharedBytes = static_cast<int>(sizeof(float)) * (kQueryFloats + kKvFloats + kProbabilityFloats);
  static_assert(kKeys * D <= kKvFloats && kRows == 64 && kKeys == 64 && D % 64 == 0);
};

// Rows [first, first + 64) of a [rows][D] bf16 matrix into shared memory as fp32, transposed
// ([D][kStride]) and multiplied by `scale`; rows past `limit` read as zeros. Lanes take
// consecutive rows, so the transposed stores are conflict-free.
template <int D>
__device__ __forceinline__ void load_transposed(float* destination, const __nv_bfloat16* source, int first, int limit, float scale) {
  for (int i = threadIdx.x; i < kRows * (D / 8); i += kThreads) {
    const int r = i % kRows, e0 = (i / kRows) * 8;
    float values[8];
    const uint4 raw = first + r < limit ? *reinterpret_cast<const uint4*>(source + static_cast<std::size_t>(first + r) * D + e0)
                                        : make_uint4(0, 0, 0, 0);
    bf16x8_to_floats(raw, values);
#pragma unroll
    for (int k = 0; k < 8; ++k) destination[(e0 + k) * SplitTile<D>::kStride + r] = values[k] * scale;
  }
}

// Rows [first, first + 64) of a [rows][D] bf16 matrix as fp32 [64][D]; lanes take consecutive
// 16-byte pieces of a row.
template <int D>
__device__ __forceinline__ void load_rows(float* destination, const __nv_bfloat16* source, int first, int limit) {
  for (int i = threadIdx.x; i < kKeys * (D / 8); i += kThreads) {
    const int r = i / (D / 8), e0 = (i % (D / 8)) * 8;
    float values[8];
    const uint4 raw = first + r < limit ? *reinterpret_cast<const uint4*>(source + static_cast<std::size_t>(first + r) * D + e0)
                                        : make_uint4(0, 0, 0, 0);
    bf16x8_to_floats(raw, values);
    float4* out = reinterpret_cast<float4*>(destination + r * D + e0);
    out[0] = make_float4(values[0], values[1], values[2], values[3]);
    out[1] = make_float4(values[4], values[5], values[6], values[7]);
  }
}

__device__ __forceinline__ float max_over_row(float value) {  // the 16 threads sharing a row are lanes xor 1..8
#pragma unroll
  for (int offset = 8; offset > 0; offset >>= 1) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}
__device__ __forceinline__ float sum_over_row(float value) {
#pragma unroll
  for (int offset = 8; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

template <int D>
__global__ void __launch_bounds__(kThreads) fa2_splitkv_kernel(PrefillAttentionArgs a, int splits) {
  using Tile = SplitTile<D>;
  extern __shared__ __align__(16) float shared[];
  float* query_t = shared;                      // [D][kStride]
  float* kv = query_t + Tile::kQueryFloats;     // k as [D][kStride], then v as [kKeys][D]
  float* probabilities = kv + Tile::kKvFloats;  // [kRows][kStride]

  const int tiles = prefill::query_tiles(a.seq_len);
  const int tile = tiles - 1 - static_cast<int>(blockIdx.x) / splits;  // longest (causal) tiles first
  const int piece = static_cast<int>(blockIdx.x) % splits;
  const int used = prefill::used_pieces(a.seq_len, a.causal, tile, splits);
  if (piece >= used) return;
  const int per_piece = prefill::tiles_per_piece(a.seq_len, a.causal, tile, splits);
  const int kv_begin = piece * per_piece;
  const int kv_end = min(kv_begin + per_piece, prefill::key_tiles(a.seq_len, a.causal, tile));

  const int h = blockIdx.y, b = blockIdx.z;
  const int kv_head = h / (a.heads / a.kv_heads);
  const std::size_t head_rows = (static_cast<std::size_t>(b) * a.heads + h) * a.seq_len;
  const std::size_t kv_first = (static_cast<std::size_t>(b) * a.kv_heads + kv_head) * a.seq_len * D;
  const int first_row = tile * kRows;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int r0 = 4 * ty, k0 = 4 * tx;

  load_transposed<D>(query_t, a.q + head_rows * D, first_row, a.seq_len, a.scale * kLog2e);

  float out[4][Tile::kColumnBlocks * 4] = {};
  float running_max[4], total[4] = {};  // total: this thread's share of the row sum (its keys only)
#pragma unroll
  for (int i = 0; i < 4; ++i) running_max[i] = -INFINITY;

  for (int kv_tile = kv_begin; kv_tile < kv_end; ++kv_tile) {
    const int first_key = kv_tile * kKeys;
    load_transposed<D>(kv, a.k + kv_first, first_key, a.seq_len, 1.0f);
    __syncthreads();

    float score[4][4] = {};
#pragma unroll 8
    for (int e = 0; e < D; ++e) {
      const float4 q4 = *reinterpret_cast<const float4*>(query_t + e * Tile::kStride + r0);
      const float4 k4 = *reinterpret_cast<const float4*>(kv + e * Tile::kStride + k0);
      const float q[4] = {q4.x, q4.y, q4.z, q4.w}, k[4] = {k4.x, k4.y, k4.z, k4.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) score[i][j] += q[i] * k[j];
    }
    // Only the diagonal tile (causal) and a tile running past the sequence have masked keys.
    if ((a.causal && kv_tile == tile) || first_key + kKeys > a.seq_len) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int key = first_key + k0 + j;
          if (key >= a.seq_len || (a.causal && key > first_row + r0 + i)) score[i][j] = -INFINITY;
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float tile_max = fmaxf(fmaxf(score[i][0], score[i][1]), fmaxf(score[i][2], score[i][3]));
      const float new_max = fmaxf(running_max[i], max_over_row(tile_max));
      // Every row sees the first key of every tile it reaches (kv_tile <= tile); the guard keeps a
      // row that saw none at 0 instead of computing -inf - -inf.
      const float shift = new_max == -INFINITY ? 0.0f : new_max;
      const float correction = fast_exp2(running_max[i] - shift);
      running_max[i] = new_max;
      total[i] *= correction;
#pragma unroll
      for (int c = 0; c < Tile::kColumnBlocks * 4; ++c) out[i][c] *= correction;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        score[i][j] = fast_exp2(score[i][j] - shift);
        total[i] += score[i][j];
      }
      *reinterpret_cast<float4*>(probabilities + (r0 + i) * Tile::kStride + k0) =
          make_float4(score[i][0], score[i][1], score[i][2], score[i][3]);
    }
    __syncthreads();  // k is read and the probabilities are written

    load_rows<D>(kv, a.v + kv_first, first_key, a.seq_len);
    __syncthreads();
#pragma unroll 2
    for (int key = 0; key < kKeys; key += 4) {
      float p[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float4 p4 = *reinterpret_cast<const float4*>(probabilities + (r0 + i) * Tile::kStride + key);
        p[i][0] = p4.x, p[i][1] = p4.y, p[i][2] = p4.z, p[i][3] = p4.w;
      }
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int cb = 0; cb < Tile::kColumnBlocks; ++cb) {
          const float4 v4 = *reinterpret_cast<const float4*>(kv + (key + kk) * D + 64 * cb + k0);
          const float v[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int c = 0; c < 4; ++c) out[i][4 * cb + c] += p[i][kk] * v[c];
        }
    }
    __syncthreads();  // v and the probabilities are read before the next tile overwrites them
  }

  const bool direct = used == 1;  // the merge skips this tile
  const std::size_t rows = static_cast<std::size_t>(a.batch) * a.heads * a.seq_len;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float row_total = sum_over_row(total[i]);
    const int row = first_row + r0 + i;
    if (row >= a.seq_len) continue;
    const float inverse = 1.0f / row_total;
    const float lse2 = running_max[i] + log2f(row_total);
    const std::size_t query_row = head_rows + row;
#pragma unroll
    for (int cb = 0; cb < Tile::kColumnBlocks; ++cb) {
      const int column = 64 * cb + k0;
      if (direct) {
        __nv_bfloat162 pair[2] = {__floats2bfloat162_rn(out[i][4 * cb] * inverse, out[i][4 * cb + 1] * inverse),
                                  __floats2bfloat162_rn(out[i][4 * cb + 2] * inverse, out[i][4 * cb + 3] * inverse)};
        *reinterpret_cast<uint2*>(a.o + query_row * D + column) = *reinterpret_cast<const uint2*>(pair);
      } else {
        *reinterpret_cast<float4*>(a.partial_o + (piece * rows + query_row) * D + column) =
            make_float4(out[i][4 * cb] * inverse, out[i][4 * cb + 1] * inverse, out[i][4 * cb + 2] * inverse, out[i][4 * cb + 3] * inverse);
      }
    }
    if (tx == 0) {
      if (direct) {
        a.lse[query_row] = lse2 * kLn2;
      } else {
        a.partial_lse[piece * rows + query_row] = lse2;
      }
    }
  }
}

// One warp per query row: out = Σ_p 2^(lse_p - max) · partial_p / Σ_p 2^(lse_p - max) over the
// pieces the row's query tile used, and its lse from the same sums. Only those pieces are read, so
// scratch left by other launches never is.
constexpr int kMergeRowsPerBlock = kThreads / 32;

__global__ void __launch_bounds__(kThreads) fa2_splitkv_merge_kernel(PrefillAttentionArgs a, int splits) {
  const std::size_t rows = static_cast<std::size_t>(a.batch) * a.heads * a.seq_len;
  const std::size_t query_row = static_cast<std::size_t>(blockIdx.x) * kMergeRowsPerBlock + threadIdx.x / 32;
  if (query_row >= rows) return;
  const int tile = static_cast<int>(query_row % a.seq_len) / kRows;
  const int used = prefill::used_pieces(a.seq_len, a.causal, tile, splits);
  if (used == 1) return;  // written directly
  float top = -INFINITY;
  for (int p = 0; p < used; ++p) top = fmaxf(top, a.partial_lse[p * rows + query_row]);
  float sum = 0.0f;
  for (int p = 0; p < used; ++p) sum += fast_exp2(a.partial_lse[p * rows + query_row] - top);
  const float inverse = 1.0f / sum;
  const int lane = threadIdx.x % 32;
  for (int e = lane; e < a.head_dim; e += 32) {
    float value = 0.0f;
    for (int p = 0; p < used; ++p)
      value += fast_exp2(a.partial_lse[p * rows + query_row] - top) * a.partial_o[(p * rows + query_row) * a.head_dim + e];
    a.o[query_row * a.head_dim + e] = __float2bfloat16_rn(value * inverse);
  }
  if (lane == 0) a.lse[query_row] = (top + log2f(sum)) * kLn2;
}

template <int D>
void launch_for(const PrefillAttentionArgs& a, cudaStream_t stream) {
  constexpr auto kernel = fa2_splitkv_kernel<D>;
  constexpr int shared = SplitTile<D>::kSharedBytes;
  const int tiles = prefill::query_tiles(a.seq_len);
  const std::int64_t base_blocks = static_cast<std::int64_t>(a.batch) * a.heads * tiles;
  const int splits = prefill::plan_splits(base_blocks, a.seq_len, resident_blocks<kernel, kThreads, shared>());
  if (splits > a.max_splits) throw std::logic_error("split plan exceeds the scratch the family declared");
  kernel<<<dim3(tiles * splits, a.heads, a.batch), kThreads, shared, stream>>>(a, splits);
  KGATE_CHECK_LAUNCH();
  if (splits == 1) return;
  const std::size_t rows = static_cast<std::size_t>(a.batch) * a.heads * a.seq_len;
  fa2_splitkv_merge_kernel<<<static_cast<unsigned>((rows + kMergeRowsPerBlock - 1) / kMergeRowsPerBlock), kThreads, 0, stream>>>(a, splits);
  KGATE_CHECK_LAUNCH();
}

void launch(const PrefillAttentionArgs& a, cudaStream_t stream) {
  if (a.heads > 65535 || a.batch > 65535) throw UnsupportedShape("more than 65535 heads or sequences (grid y, z)");
  prefill::dispatch_head_dim(a, "fa2_splitkv", [&]<int D>() { launch_for<D>(a, stream); });
}

}  // namespace

KGATE_REGISTER_VARIANT(PrefillAttentionFamily, launch,
                       {.name = "fa2_splitkv",
                        .description = "split-KV: key tiles in parallel blocks sized to fill a wave, partial outputs and "
                                       "lse merged in a second kernel; all 256 threads compute in 4x4 register tiles, "
                                       "scalar FP32",
                        .follows = "fa1_seqkv"});

}  // namespace kgate::kernels
