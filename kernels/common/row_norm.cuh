#pragma once
// The normalization kernels' rows held packed: each thread keeps its K vectors of VEC bf16 values
// (vectors t, t + blockDim.x, ..., as in row_vectors.cuh) as loaded, and widens them to fp32 only
// where it uses them. Widening bf16 is exact and costs one integer instruction per value, while
// the packed row takes half the registers of a widened one: the x, residual and weight vectors can
// all be loaded before the block reduction without costing occupancy.
#include "block_reduce.cuh"
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

// Loads the weight's vectors, then each row's (x and the residual: rows[i] into out_i), with every
// load issued before any value is used.
// - The weight comes first, behind a __syncwarp. It is needed only after the block reduction, and
//   loaded last, ptxas (nvcc 13.0, under the 40-register limit of row_register_limit) sank its
//   loads below the first arithmetic on x and the residual, which waits for them to arrive: two
//   memory round trips in a row (SASS: the weight's LDG after the residual add's first FADD).
//   __syncwarp orders memory, so ptxas keeps the weight's loads above it.
// - The loads carry no bounds test: a slot past the end loads the row's last vector again, which
//   every user below skips by its own test. Under load_row_vectors' test, ptxas merged each loaded
//   bf16 value into its register right behind the load, and at two vectors per thread spilled
//   (fused_add_rmsnorm/weight_first at n 8192 on an H100: 30% more DRAM bytes, 0.78-0.84x).
template <int VEC, int K, class... Out>
__device__ __forceinline__ void load_weight_then_rows(int vectors, const __nv_bfloat16* weight, BF16Vector<VEC> (&weight_out)[K],
                                                      const __nv_bfloat16* const (&rows)[sizeof...(Out)], Out&... out) {
  const auto slot = [vectors](int k) { return min(static_cast<int>(threadIdx.x) + k * static_cast<int>(blockDim.x), vectors - 1); };
#pragma unroll
  for (int k = 0; k < K; ++k) weight_out[k] = reinterpret_cast<const BF16Vector<VEC>*>(weight)[slot(k)];
  __syncwarp();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int i = 0;
    ((out[k] = reinterpret_cast<const BF16Vector<VEC>*>(rows[i++])[slot(k)]), ...);
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

// 1 / sqrt(mean square + eps) of the block's row, for every thread. At m 1-64 a row's time is
// mostly latency and this is on its critical path, between the row's loads and its stores, so it
// takes the shortest form: __fdividef (a reciprocal and a multiply, within 2 ulp; Liger-Kernel's
// Triton kernel divides so) rather than IEEE division, whose FCHK test and slow-path branch ptxas
// puts before rsqrtf; and the kernel's only reduction needs no barrier after it (block_sum_last).
template <int VEC, int K>
__device__ __forceinline__ float row_rstd(int vectors, const BF16Vector<VEC> (&row)[K], int n, float eps) {
  return rsqrtf(__fdividef(block_sum_last(row_sum_of_squares<VEC, K>(vectors, row)), static_cast<float>(n)) + eps);
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
        normalized.values[i] = __float2bfloat16_rn(__bfloat162float(x.values[i]) * (rstd * __bfloat162float(w.values[i])));
      target[v] = normalized;
    }
  }
}

}  // namespace kgate::kernels
