#pragma once
// The merge of split-K decode attention's pieces (decode_attention.cuh), run by the block that
// completes a (sequence, KV head): for each query head of the KV head's group,
//   out = Σ_s 2^(lse_s - top) · partial_s / Σ_s 2^(lse_s - top)
// over the sequence's pieces s, always in piece order, so the result does not depend on which
// block runs it. Other blocks wrote the pieces: they are read through the L2 (ld.global.cg), never
// from this SM's L1.
#include <cuda_bf16.h>

#include <cstddef>

#include "decode_attention_args.hpp"
#include "packed.cuh"
#include "row_vectors.cuh"

namespace kgate::kernels {

__device__ __forceinline__ void accumulate(float4& sum, float weight, const float4& value) {
  sum.x += weight * value.x;
  sum.y += weight * value.y;
  sum.z += weight * value.z;
  sum.w += weight * value.w;
}

__device__ __forceinline__ float4 scaled(const float4& value, float scale) {
  return make_float4(value.x * scale, value.y * scale, value.z * scale, value.w * scale);
}

// Four values rounded to bf16 and stored as one 8-byte vector (`at` 8-byte aligned).
__device__ __forceinline__ void store_bf16x4(__nv_bfloat16* at, const float4& value) {
  const float values[4] = {value.x, value.y, value.z, value.w};
  store_floats<4>(at, 0, values);
}

// An online softmax over pieces of one column (four values of one head): the largest log-sum-exp
// so far, and the weights' sum and weighted partials relative to it. Every thread of a column
// sees the same pieces in the same order, so no pass over the log-sum-exps has to find the
// largest first, and no round trip through shared memory has to share it.
struct PieceSum {
  float top = -INFINITY;
  float total = 0.0f;
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

  // Adds `weight_sum` and `value` given relative to 2^lse (a piece: 1 and its partial output).
  __device__ __forceinline__ void add(float lse, float weight_sum, const float4& value) {
    const float new_top = fmaxf(top, lse);              // finite from the first piece on
    const float correction = fast_exp2(top - new_top);  // 2^-inf = 0 at the first piece
    const float weight = fast_exp2(lse - new_top);
    total = total * correction + weight * weight_sum;
    sum = scaled(sum, correction);
    accumulate(sum, weight, value);
    top = new_top;
  }
};

// query0: the group's first query (b · q_heads + kv_head · G); pieces: the scratch's pieces per
// query; used: the sequence's, at least 2. `shared`: Threads · 24 bytes of shared memory, 16-byte
// aligned. All threads of the block call it.
template <int D, int G, int Threads>
__device__ void merge_pieces(const AttentionArgs& a, std::size_t query0, int pieces, int used, void* shared) {
  constexpr int kRow = D / 4;         // float4 columns per head
  constexpr int kColumns = G * kRow;  // float4 columns of the group
  // When the group has fewer columns than the block has threads, the threads of a column split
  // its pieces, so that each waits on fewer loads.
  constexpr int kGroups = kColumns >= Threads ? 1 : Threads / kColumns;

  // Column c's pieces first, first + kGroups, ...: the loads are independent of the arithmetic,
  // so the unrolled loop keeps many of them in flight.
  auto column_sum = [&](int c, int first) {
    const int h = c / kRow;
    const float* lse = a.partial_lse + (query0 + h) * pieces;
    const float4* partial = reinterpret_cast<const float4*>(a.partial_out + (query0 + h) * pieces * D) + c % kRow;
    PieceSum merged;
#pragma unroll 16
    for (int s = first; s < used; s += kGroups) merged.add(__ldcg(lse + s), 1.0f, __ldcg(partial + static_cast<std::size_t>(s) * kRow));
    return merged;
  };
  auto write = [&](int c, const PieceSum& merged) {
    store_bf16x4(a.out + (query0 + c / kRow) * D + c % kRow * 4, scaled(merged.sum, 1.0f / merged.total));
  };
  if constexpr (kGroups == 1) {
    for (int c = threadIdx.x; c < kColumns; c += Threads) write(c, column_sum(c, 0));
  } else {
    auto* sums = static_cast<float4*>(shared);
    auto* tops = reinterpret_cast<float2*>(sums + Threads);  // (top, total)
    const int c = threadIdx.x % kColumns, group = threadIdx.x / kColumns;
    const PieceSum mine = column_sum(c, group);
    sums[threadIdx.x] = mine.sum;
    tops[threadIdx.x] = make_float2(mine.top, mine.total);
    __syncthreads();
    if (group == 0) {
      // In group order; group 0 holds piece 0, so the running top is finite before any group
      // without pieces (top -inf, weight 0) comes.
      PieceSum merged = mine;
      for (int g = 1; g < kGroups; ++g) {
        const float2 other = tops[g * kColumns + c];
        merged.add(other.x, other.y, sums[g * kColumns + c]);
      }
      write(c, merged);
    }
  }
}

// A block's share of the output for one column (four values of one head, `e` the first) of query
// `query`: the output itself when the sequence has one piece (`used`), else the block's normalized
// partial and, once per head, its log2-sum-exp `lse`.
template <int D>
__device__ __forceinline__ void write_piece_column(const AttentionArgs& a, std::size_t query, int used, int pieces, int e,
                                                   const float4& value, float lse) {
  if (used == 1) {
    store_bf16x4(a.out + query * D + e, value);
    return;
  }
  const std::size_t at = query * pieces + blockIdx.x;
  *reinterpret_cast<float4*>(a.partial_out + at * D + e) = value;
  if (e == 0) a.partial_lse[at] = lse;
}

// After every thread's write_piece_column, where the sequence has more than one piece: the block
// counts itself in its (sequence, KV head)'s arrival counter (grid (piece, KV head, sequence)); the
// block that completes the count resets it for the next launch and merges the pieces. All threads
// of the block call it; `shared` as merge_pieces'.
template <int D, int G, int Threads>
__device__ __forceinline__ void finish_pieces(const AttentionArgs& a, std::size_t query0, int used, int pieces, void* shared) {
  if (used == 1) return;
  __shared__ bool completes;
  __syncthreads();  // every thread's partial is written, and the block's states are read
  if (threadIdx.x == 0) {
    int* arrivals = a.arrivals + static_cast<std::size_t>(blockIdx.z) * a.kv_heads + blockIdx.y;
    __threadfence();  // release: the block's partial before its count
    completes = atomicAdd(arrivals, 1) == used - 1;
    if (completes) {
      *arrivals = 0;    // every piece has counted: zero again for the next launch
      __threadfence();  // acquire: the other pieces' partials after their counts
    }
  }
  __syncthreads();
  if (completes) merge_pieces<D, G, Threads>(a, query0, pieces, used, shared);
}

}  // namespace kgate::kernels
