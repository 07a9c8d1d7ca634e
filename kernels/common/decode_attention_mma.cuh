#pragma once
// Split-K decode attention on the tensor cores (sm_80+): splitk's pieces, split plan and merge of
// the pieces (decode_attention.cuh), with each warp's scores and weighted sums taken by mma.sync.
//
// Why: on an H200 splitk is bound by its instruction issue, not by memory. ncu at batch 64, 4096
// keys: splitk's SMs were 68% busy and its DRAM 72% (cuDNN's sm80 tensor-core kernel: SMs 22%,
// DRAM 90%); its fp32 dot products and weighted sums cost about 2·G·D multiply-adds per key and
// lane group, which an H200's bandwidth (1.5 times an H100's, with the same SMs and clocks) no
// longer hides.
//
// A warp step is 16 keys. S = Q·Kᵀ is m16n8k16 tiles with the GQA group's queries as the A rows
// (G ≤ 8; rows from G on, and rows 8-15, are zeros) and two 8-key tiles of K as B, read by
// ldmatrix. The weights P of the 16 keys are then exactly the A operand of P·V (the S tiles'
// accumulator layout is the A fragment's: no shuffles), and V's rows arrive as B by
// ldmatrix.trans. Softmax as splitk's: base 2 (the scale applied to the fp32 scores), a
// reference raised only when a step's maximum passes it by kRescaleSlack. P·V takes P in two bf16
// parts (its rounding and the rest: split_bf16x2), so the weighted sums carry the fp32 weights to
// about 16 bits: P rounded to bf16 once, as FlashAttention's kernels do, moves an output by up to
// 2^-9 of the values' scale, past decode attention's tolerance (2 bf16 ulps) where outputs cancel;
// on an H200 that failed 24 of the 26 test shapes that exercise it. The second product is cheap:
// the tensor cores are otherwise idle most of the step.
//
// Each warp streams its own steps (warp w takes keys w·16 + j·64 + [0, 16) of the piece) through
// its own three-stage ring of cp.async copies, 16 rows of K and of V per stage, each row's 16-byte
// chunks swizzled (chunk c of row r at c ^ (r mod 8)) so that the 8 rows an ldmatrix reads at one
// chunk fall in 8 different bank groups. A step is one page of the paged cache. As in splitk, the
// contiguous cache's first copies go out before the sequence's length is known, and V rows past it
// are zeroed before use (a zero weight would not cancel a NaN there).
//
// At the end the block merges its four warps' states in shared memory and writes the sequence's
// output or its piece, as splitk does.
//
// Measured in the README's main command (commit 0433f84): 1.01-1.09x splitk's speed on an H200
// (paged 1.02-1.11x) and 1.01-1.10x on an H100 (paged 1.00-1.08x). Against cuDNN: on the H100 at
// least its speed at every contiguous shape (0.993-0.998x at batch 16 and more, within the 1% tie),
// on the H200 0.889-0.925x at batch 16 and more: the SMs are no longer the limit (26.5% busy) but
// DRAM is 83% busy against cuDNN's 90% (ncu, batch 64, 4096 keys), with two blocks of four warps
// per SM (167 registers, 98 KB of shared memory) holding too few bytes in flight for the H200.
#include "decode_attention.cuh"

namespace kgate::kernels {

inline constexpr int kMmaWarps = 4;
inline constexpr int kMmaThreads = 32 * kMmaWarps;
inline constexpr int kMmaStages = 3;
inline constexpr int kMmaStepKeys = 16;                         // a warp step: two 8-key tiles of S, the k of P·V
inline constexpr int kMmaBlockStep = kMmaWarps * kMmaStepKeys;  // keys between a warp's steps

template <int D, int G>
struct MmaTile {
  static constexpr int kChunks = D / 8;                            // 16-byte chunks of a row
  static constexpr int kLaneChunks = kMmaStepKeys * kChunks / 32;  // a lane's copies per tile
  static constexpr int kTileBytes = kMmaStepKeys * D * 2;          // one step's K (or V) rows
  static constexpr int kStageBytes = 2 * kTileBytes;               // K, then V
  static constexpr int kWarpRingBytes = kMmaStages * kStageBytes;
  static constexpr int kRingBytes = kMmaWarps * kWarpRingBytes;
  // After the loop: the warps' weighted sums [warp][head][D] in fp32; the completing block's merge
  // of the pieces exchanges 24 bytes per thread in the same space.
  static constexpr int kStateBytes = kMmaWarps * G * D * 4;
  static constexpr int kReusedBytes = kStateBytes > kMmaThreads * 24 ? kStateBytes : kMmaThreads * 24;
  // The ring starts on a 128-byte boundary, so that each swizzled 128-byte line of a tile takes its
  // chunks from one 128-byte line of the cache: the launch asks for 128 bytes of slack.
  static constexpr int kSharedBytes = (kRingBytes > kReusedBytes ? kRingBytes : kReusedBytes) + 128;
  static_assert(G <= 8, "the group's queries are rows 0-7 of the A operand");
  static_assert(kPageSize % kMmaStepKeys == 0 && kSplitQuantum % kMmaBlockStep == 0, "a step within a page; pieces of whole block steps");
  static_assert(kLaneChunks * 32 == kMmaStepKeys * kChunks);
};

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of D-element bf16 rows, swizzled.
template <int D>
__device__ __forceinline__ std::uint32_t swizzled_row_chunk(int row, int chunk) {
  return static_cast<std::uint32_t>(row * D * 2 + ((chunk ^ (row & 7)) << 4));
}

template <class Kv, int D, int G>
__global__ void __launch_bounds__(kMmaThreads) attention_mma_kernel(AttentionArgs a, Kv kv, int piece, int pieces) {
  using Tile = MmaTile<D, G>;
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  unsigned char* const shared = dynamic_shared + (-shared_address(dynamic_shared) & 127);

  const int kv_head = blockIdx.y, b = blockIdx.z;
  const int length = a.lengths[b];  // waited for only where the code below needs it
  const int begin = blockIdx.x * piece;
  const int stop = min(a.max_len, begin + piece);  // the piece's end in a sequence of max_len keys

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;  // the MMA fragments' row and column pair
  const auto keys = kv.cursor(b, kv_head);
  // The warp's step j covers keys warp_begin + j·kMmaBlockStep + [0, 16).
  const int warp_begin = begin + warp * kMmaStepKeys;
  unsigned char* const warp_ring = shared + warp * Tile::kWarpRingBytes;
  const std::uint32_t warp_ring_address = shared_address(warp_ring);

  // Row of step j's first key (a page-table read when paged; none past the piece), independent of
  // the length.
  auto row_of = [&](int j) -> std::size_t {
    const int first = warp_begin + j * kMmaBlockStep;
    return first < stop ? keys.row(first) : 0;
  };
  // Issues step j's copies as one group: lane chunk i = lane + 32u is row i / kChunks, chunk
  // i % kChunks (two rows per instruction at d 128). Keys from `limit` on are zero-filled.
  auto fetch = [&](int j, std::size_t row, int limit) {
    const int first = warp_begin + j * kMmaBlockStep;
    unsigned char* const k_tile = warp_ring + (j % kMmaStages) * Tile::kStageBytes;
#pragma unroll
    for (int u = 0; u < Tile::kLaneChunks; ++u) {
      const int i = lane + 32 * u, r = i / Tile::kChunks, c = i % Tile::kChunks;
      const bool valid = first + r < limit;
      const std::size_t at = valid ? row + static_cast<std::size_t>(r) * D + c * 8 : 0;
      const std::uint32_t offset = swizzled_row_chunk<D>(r, c);
      copy_16B_async<true>(k_tile + offset, kv.k + at, valid);
      copy_16B_async<true>(k_tile + Tile::kTileBytes + offset, kv.v + at, valid);
    }
    commit_async_copies();
  };
  std::size_t rows[kMmaStages - 1];
#pragma unroll
  for (int j = 0; j < kMmaStages - 1; ++j) rows[j] = row_of(j);
  if constexpr (Kv::kRowsToMaxLen) {
#pragma unroll
    for (int j = 0; j < kMmaStages - 1; ++j) fetch(j, rows[j], stop);
  }
  // Q as the A operand: a0 = Q[g][16kc + 2t, +1], a2 = Q[g][16kc + 2t + 8, +1]; rows from G on are
  // zeros. Unscaled bf16, exactly the input.
  std::uint32_t q[D / 16][2];
  {
    const __nv_bfloat16* query = a.q + (static_cast<std::size_t>(b) * a.q_heads + kv_head * G + (g < G ? g : 0)) * D + 2 * t;
#pragma unroll
    for (int kc = 0; kc < D / 16; ++kc) {
      q[kc][0] = g < G ? *reinterpret_cast<const std::uint32_t*>(query + 16 * kc) : 0u;
      q[kc][1] = g < G ? *reinterpret_cast<const std::uint32_t*>(query + 16 * kc + 8) : 0u;
    }
  }
  if (begin >= length) {  // a short sequence needs fewer pieces; the whole block leaves
    wait_async_copies<0>();
    return;
  }
  const int end = min(length, stop);
  if constexpr (!Kv::kRowsToMaxLen) {
#pragma unroll
    for (int j = 0; j < kMmaStages - 1; ++j) fetch(j, rows[j], end);
  }
  const int steps = warp_begin < end ? (end - warp_begin + kMmaBlockStep - 1) / kMmaBlockStep : 0;
  std::size_t row_ahead = row_of(kMmaStages - 1);

  const float scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(D));
  // Row g's state (the lane holds O[g][8n + 2t, +1] in o[n][0, 1]; o[n][2, 3] are rows 8-15,
  // which stay zero): the weighted sum, the reference its weights are taken against, and the
  // lane's share of their total.
  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float reference = -INFINITY, total = 0.0f;
  // ldmatrix: lanes 8m..8m+7 give the row addresses of matrix m.
  const int matrix = lane >> 3, matrix_row = lane & 7;

  // The bound depends on the warp only, so every lane reaches every shuffle.
  for (int j = 0; j < steps; ++j) {
    __syncwarp();  // the warp's reads of the stage refilled next (step j - 1's) are done
    fetch(j + kMmaStages - 1, row_ahead, end);
    // The page-table read for the step after that overlaps this step's wait and arithmetic.
    row_ahead = row_of(j + kMmaStages);
    wait_async_copies<kMmaStages - 1>();  // step j's group has landed
    const int first = warp_begin + j * kMmaBlockStep, stage = j % kMmaStages;
    if constexpr (Kv::kRowsToMaxLen) {
      // The first steps were copied up to `stop`, before the length was known: their V rows past
      // the end hold whatever the cache holds there. Each lane zeroes the chunks it copied.
      if (j < kMmaStages - 1 && first + kMmaStepKeys > end) {
        unsigned char* const v_tile = warp_ring + stage * Tile::kStageBytes + Tile::kTileBytes;
#pragma unroll
        for (int u = 0; u < Tile::kLaneChunks; ++u) {
          const int i = lane + 32 * u, r = i / Tile::kChunks, c = i % Tile::kChunks;
          if (first + r >= end) *reinterpret_cast<uint4*>(v_tile + swizzled_row_chunk<D>(r, c)) = make_uint4(0, 0, 0, 0);
        }
      }
    }
    __syncwarp();  // every lane's copies (and zeros) are visible to the warp's ldmatrix
    const std::uint32_t k_tile = warp_ring_address + stage * Tile::kStageBytes, v_tile = k_tile + Tile::kTileBytes;

    // S = Q·Kᵀ for keys [0, 8) and [8, 16): matrices (keys 0-7 | 8-15) x (chunk 2kc | 2kc + 1) give
    // b0, b1 of each key tile.
    float s[2][4] = {};
#pragma unroll
    for (int kc = 0; kc < D / 16; ++kc) {
      std::uint32_t k[4];
      ldmatrix_x4(k, k_tile + swizzled_row_chunk<D>((matrix >> 1) * 8 + matrix_row, 2 * kc + (matrix & 1)));
      mma_bf16_16x8x16(s[0], q[kc][0], 0u, q[kc][1], 0u, k[0], k[1]);
      mma_bf16_16x8x16(s[1], q[kc][0], 0u, q[kc][1], 0u, k[2], k[3]);
    }
    // Row g's scores of keys 2t, 2t + 1, 8 + 2t, 9 + 2t, in base 2; keys from the end on count
    // for nothing (also whatever a K row past the end held).
    float x[4] = {s[0][0], s[0][1], s[1][0], s[1][1]};
#pragma unroll
    for (int i = 0; i < 4; ++i) x[i] = first + (i >> 1) * 8 + 2 * t + (i & 1) < end ? x[i] * scale_log2 : -INFINITY;
    float step_max = fmaxf(fmaxf(x[0], x[1]), fmaxf(x[2], x[3]));
    step_max = fmaxf(step_max, __shfl_xor_sync(0xffffffffu, step_max, 1));
    step_max = fmaxf(step_max, __shfl_xor_sync(0xffffffffu, step_max, 2));
    // Lazy rescaling, as splitk's: a warp raises its references together or not at all.
    if (__any_sync(0xffffffffu, step_max > reference + kRescaleSlack)) {
      const float raised = fmaxf(reference, step_max);
      // A state that has seen no valid key yet holds zeros: leave them, rather than scale by 2^(-inf - -inf).
      const float correction = raised == -INFINITY ? 1.0f : fast_exp2(reference - raised);
      total *= correction;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        o[n][0] *= correction;
        o[n][1] *= correction;
      }
      reference = raised;
    }
    const float shift = reference == -INFINITY ? 0.0f : reference;  // weights 2^-inf = 0 before a first key
    float p[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      p[i] = fast_exp2(x[i] - shift);
      total += p[i];
    }
    // P as the A operand of P·V: a0 = P[g][2t, +1], a2 = P[g][8 + 2t, +1] (rows 8-15 zero), each
    // split into its bf16 rounding and the rest; V's matrices (keys 0-7 | 8-15) x (chunk n | n + 1),
    // transposed, give b0, b1 of d tiles n, n + 1.
    std::uint32_t a0_high, a0_rest, a2_high, a2_rest;
    split_bf16x2(p[0], p[1], a0_high, a0_rest);
    split_bf16x2(p[2], p[3], a2_high, a2_rest);
#pragma unroll
    for (int n = 0; n < D / 8; n += 2) {
      std::uint32_t v[4];
      ldmatrix_x4_trans(v, v_tile + swizzled_row_chunk<D>((matrix & 1) * 8 + matrix_row, n + (matrix >> 1)));
      mma_bf16_16x8x16(o[n], a0_high, 0u, a2_high, 0u, v[0], v[1]);
      mma_bf16_16x8x16(o[n + 1], a0_high, 0u, a2_high, 0u, v[2], v[3]);
      mma_bf16_16x8x16(o[n], a0_rest, 0u, a2_rest, 0u, v[0], v[1]);
      mma_bf16_16x8x16(o[n + 1], a0_rest, 0u, a2_rest, 0u, v[2], v[3]);
    }
  }
  total += __shfl_xor_sync(0xffffffffu, total, 1);
  total += __shfl_xor_sync(0xffffffffu, total, 2);
  // The trailing zero-fill groups land, and every warp leaves the ring, before it holds the states.
  wait_async_copies<0>();
  __syncthreads();

  // Merge the block's softmax states: one per warp and head.
  auto& state_sum = *reinterpret_cast<float(*)[kMmaWarps][G][D]>(shared);
  __shared__ float state_reference[kMmaWarps][G];  // becomes each state's weight in the merge
  __shared__ float state_total[kMmaWarps][G];
  __shared__ float block_lse[G];
  if (g < G) {
#pragma unroll
    for (int n = 0; n < D / 8; ++n) *reinterpret_cast<float2*>(&state_sum[warp][g][8 * n + 2 * t]) = make_float2(o[n][0], o[n][1]);
    if (t == 0) {
      state_reference[warp][g] = reference;
      state_total[warp][g] = total;
    }
  }
  __syncthreads();
  if (threadIdx.x < G) {
    const int h = threadIdx.x;
    float top = state_reference[0][h];
#pragma unroll
    for (int w = 1; w < kMmaWarps; ++w) top = fmaxf(top, state_reference[w][h]);  // finite: the piece holds a key
    float weights[kMmaWarps], sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kMmaWarps; ++w) {
      weights[w] = fast_exp2(state_reference[w][h] - top);
      sum += state_total[w][h] * weights[w];
    }
#pragma unroll
    for (int w = 0; w < kMmaWarps; ++w) state_reference[w][h] = weights[w] / sum;
    block_lse[h] = top + log2f(sum);
  }
  __syncthreads();

  const int used = pieces_of(length, piece);  // the sequence's pieces
  const std::size_t query0 = static_cast<std::size_t>(b) * a.q_heads + kv_head * G;
  // Four consecutive values of one head per thread and column.
  for (int column = threadIdx.x; column < G * D / 4; column += kMmaThreads) {
    const int h = column / (D / 4), e = column % (D / 4) * 4;
    float4 value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int w = 0; w < kMmaWarps; ++w) accumulate(value, state_reference[w][h], *reinterpret_cast<const float4*>(&state_sum[w][h][e]));
    write_piece_column<D>(a, query0 + h, used, pieces, e, value, block_lse[h]);
  }
  finish_pieces<D, G, kMmaThreads>(a, query0, used, pieces, shared);
}

// Head dimensions 64 and 128: at 256 the accumulators alone (o, rows 8-15 included) take 128
// registers a thread, and the kernel spilled.
template <class Kv>
void launch_mma_attention(const AttentionArgs& a, const Kv& kv, cudaStream_t stream) {
  dispatch_split_attention(a, [&]<int D, int G>() {
    if constexpr (D <= 128) launch_split_plan<attention_mma_kernel<Kv, D, G>, kMmaThreads, MmaTile<D, G>::kSharedBytes>(a, kv, stream);
    else throw UnsupportedShape("head_dim " + std::to_string(D) + ": splitk_mma is compiled for 64 and 128");
  });
}

}  // namespace kgate::kernels
