#pragma once
// The register-side half of FlashAttention on tensor cores, shared by fa2_mma (mma.sync) and
// fa3_wgmma (wgmma): masking, the online softmax, the conversion of probabilities into the next
// matrix product's A operand, and the final normalization and store.
//
// Both instructions leave a warp's 16-row slice of an accumulator in the same place: lane 4g + t
// holds rows g and g + 8, and of every 8-column piece i the columns 8i + 2t and 8i + 2t + 1, as
// c[i][0], c[i][1] (row g) and c[i][2], c[i][3] (row g + 8). (mma.sync m16n8k16 gives one piece
// per instruction; wgmma m64nNk16 gives each warp of the warpgroup N/8 pieces of its 16 rows.)
// So one set of helpers serves both, templated on the number of pieces NT.
//
// Scores are kept in the log2 domain: s · scale · log2(e), so every exponential is one ex2 and the
// scale folds into the FMA that subtracts the running maximum.
#include <cuda_bf16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "../common/packed.cuh"

namespace kgate::kernels {

// Running statistics of the two rows (g, g + 8) a lane holds: the maximum scaled score seen so
// far (log2 domain) and this lane's share of the sum of exponentials (the four lanes of a row are
// added only at the end).
struct SoftmaxRows {
  float max[2] = {-INFINITY, -INFINITY};
  float sum[2] = {0.0f, 0.0f};
};

// Scores of keys the query may not see become -inf: keys at or past seq_len (the zero-filled tail
// of the last tile) and, when causal, keys after the query's own position.
template <int NT>
__device__ __forceinline__ void mask_scores(float (&s)[NT][4], int first_key, int first_row, int seq_len, bool causal) {
  const int lane = threadIdx.x & 31;
  const int key0 = first_key + 2 * (lane & 3);
  const int row0 = first_row + (lane >> 2);
#pragma unroll
  for (int i = 0; i < NT; ++i) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = key0 + 8 * i + (e & 1);
      const int row = row0 + 8 * (e >> 1);
      if (key >= seq_len || (causal && key > row)) s[i][e] = -INFINITY;
    }
  }
}

// One key tile of the online softmax: turns the raw scores into unnormalized probabilities
// 2^(s·scale_log2 − max) in place, folds them into the running sums, and returns per row the
// factor by which everything accumulated over earlier tiles (output and sum) must be multiplied.
template <int NT>
__device__ __forceinline__ void softmax_tile(float (&s)[NT][4], SoftmaxRows& rows, float scale_log2, float (&rescale)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float tile_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < NT; ++i) tile_max = fmaxf(tile_max, fmaxf(s[i][2 * r], s[i][2 * r + 1]));
    // The four lanes 4g .. 4g + 3 share the row.
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
    const float new_max = fmaxf(rows.max[r], tile_max * scale_log2);
    // A row whose keys are all masked so far has max -inf; subtracting 0 instead keeps
    // 2^(-inf - max) = 0 rather than NaN.
    const float offset = new_max == -INFINITY ? 0.0f : new_max;
    rescale[r] = fast_exp2(rows.max[r] - offset);
    rows.max[r] = new_max;
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < NT; ++i) {
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        s[i][e] = fast_exp2(fmaf(s[i][e], scale_log2, -offset));
        sum += s[i][e];
      }
    }
    rows.sum[r] = rows.sum[r] * rescale[r] + sum;
  }
}

template <int NT>
__device__ __forceinline__ void rescale_rows(float (&acc)[NT][4], const float (&rescale)[2]) {
#pragma unroll
  for (int i = 0; i < NT; ++i) {
    acc[i][0] *= rescale[0];
    acc[i][1] *= rescale[0];
    acc[i][2] *= rescale[1];
    acc[i][3] *= rescale[1];
  }
}

// Probabilities of 16 keys (two 8-column pieces) are exactly one m16n8k16 A fragment (a0 = row g,
// keys 2t..2t+1; a1 = row g+8; a2, a3 = the same 8 keys later), which is also the register-A
// layout of wgmma per warp: no shuffles between the two matrix products.
template <int NT>
__device__ __forceinline__ void probabilities_to_a_fragments(const float (&p)[NT][4], std::uint32_t (&a)[NT / 2][4]) {
  static_assert(NT % 2 == 0, "whole k16 steps of keys");
#pragma unroll
  for (int k = 0; k < NT / 2; ++k) {
    a[k][0] = pack_bf16x2(p[2 * k][0], p[2 * k][1]);
    a[k][1] = pack_bf16x2(p[2 * k][2], p[2 * k][3]);
    a[k][2] = pack_bf16x2(p[2 * k + 1][0], p[2 * k + 1][1]);
    a[k][3] = pack_bf16x2(p[2 * k + 1][2], p[2 * k + 1][3]);
  }
}

// The softmax's totals of this thread's two rows (first_row + lane/4 and 8 on), summed over the
// four lanes that share each row: their inverses, which normalize the rows, and each row's
// log-sum-exp written to `lse` (this (batch, head)'s [seq_len]; rows at or past seq_len, the
// padding of the last query tile, are skipped). lse = ln Σ exp(s·scale) = ln2 · max + ln Σ
// 2^(s·scale·log2e − max).
__device__ __forceinline__ void finish_rows(SoftmaxRows rows, float* lse, int first_row, int seq_len, float (&inverse)[2]) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float total = rows.sum[r];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    inverse[r] = 1.0f / total;  // every stored row sees key 0, so total >= 1
    const int row = first_row + (lane >> 2) + 8 * r;
    if (row < seq_len && (lane & 3) == 0) lse[row] = rows.max[r] * 0.69314718055994531f + logf(total);
  }
}

// Normalizes the 16 rows starting at first_row and stores them (rows at or past seq_len are
// dropped). `o` and `lse` point at this (batch, head)'s [seq_len, head_dim] output and [seq_len]
// log-sum-exp; head_dim = 8·NT.
template <int NT>
__device__ __forceinline__ void store_rows(const float (&acc)[NT][4], SoftmaxRows rows, __nv_bfloat16* o, float* lse, int first_row,
                                           int seq_len) {
  constexpr int kHeadDim = 8 * NT;
  const int lane = threadIdx.x & 31;
  float inverse[2];
  finish_rows(rows, lse, first_row, seq_len, inverse);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = first_row + (lane >> 2) + 8 * r;
    if (row >= seq_len) continue;
    __nv_bfloat16* out = o + static_cast<std::size_t>(row) * kHeadDim + 2 * (lane & 3);
#pragma unroll
    for (int i = 0; i < NT; ++i)
      *reinterpret_cast<__nv_bfloat162*>(out + 8 * i) = __floats2bfloat162_rn(acc[i][2 * r] * inverse[r], acc[i][2 * r + 1] * inverse[r]);
  }
}

}  // namespace kgate::kernels
