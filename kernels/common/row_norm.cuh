#pragma once
// The normalization kernels' rows held packed: each thread keeps its K vectors of VEC bf16 values
// (vectors t, t + blockDim.x, ..., as in row_vectors.cuh) as loaded, and widens them to fp32 only
// where it uses them. Widening bf16 is exact and costs one integer instruction per value, while
// the packed row takes half the registers of a widened one: the x, residual and weight vectors can
// all be loaded before the block reduction without costing occupancy.
#include "row_vectors.cuh"

namespace kgate::kernels {

// Loads the thread's vectors among a row's first `vectors`; slots past the end are left unset and
// every user below skips them by the same test.
template <int VEC, int K>
__device__ __forceinline__ void load_row_vectors(const __nv_bfloat16* row, int vectors, BF16Vector<VEC> (&out)[K]) {
  const auto* source = reinterpret_cast<const BF16Vector<VEC>*>(row);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vectors) out[k] = source[v];
  }
}

template <int VEC, int K>
__device__ __forceinline__ void store_row_vectors(__nv_bfloat16* row, int vectors, const BF16Vector<VEC> (&in)[K]) {
  auto* target = reinterpret_cast<BF16Vector<VEC>*>(row);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vectors) target[v] = in[k];
  }
}

// This thread's share of the row's sum of squares, in fp32.
template <int VEC, int K>
__device__ __forceinline__ float row_sum_of_squares(int vectors, const BF16Vector<VEC> (&row)[K]) {
  float sum_sq = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vectors) {
#pragma unroll
      for (int i = 0; i < VEC; ++i) {
        const float value = __bfloat162float(row[k].values[i]);
        sum_sq += value * value;
      }
    }
  }
  return sum_sq;
}

// Stores row · rstd · weight, rounded once to bf16. Called after the reduction, it widens the
// packed row and weight there (kept_packed).
template <int VEC, int K>
__device__ __forceinline__ void store_normalized_row(__nv_bfloat16* out, int vectors, const BF16Vector<VEC> (&row)[K],
                                                     const BF16Vector<VEC> (&weight)[K], float rstd) {
  auto* target = reinterpret_cast<BF16Vector<VEC>*>(out);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vectors) {
      const BF16Vector<VEC> x = kept_packed(row[k]), w = kept_packed(weight[k]);
      BF16Vector<VEC> normalized;
#pragma unroll
      for (int i = 0; i < VEC; ++i)
        normalized.values[i] =
            __float2bfloat16_rn(__bfloat162float(x.values[i]) * (rstd * __bfloat162float(w.values[i])));
      target[v] = normalized;
    }
  }
}

}  // namespace kgate::kernels
