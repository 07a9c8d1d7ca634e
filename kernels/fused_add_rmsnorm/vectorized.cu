// Fused add + RMSNorm with the row in registers: 128-bit loads of x and the residual, the rounded
// sum kept in registers (stored once as the new residual), a warp-shuffle block reduction, then
// the normalized row written over x. Each element crosses device memory the minimum number of times.
#include "../common/block_reduce.cuh"
#include "../common/row_vectors.cuh"
#include "fused_add_rmsnorm.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

template <int VEC, int K>
__global__ void fused_add_rmsnorm_vectorized_kernel(FusedAddRmsNormArgs a) {
  const int vectors = a.n / VEC;
  __nv_bfloat16* x = a.x + static_cast<std::size_t>(blockIdx.x) * a.n;
  __nv_bfloat16* r = a.residual + static_cast<std::size_t>(blockIdx.x) * a.n;

  float row[K][VEC];
  float sum_sq = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vectors) {
      float xs[VEC];
      load_floats<VEC>(x, v, xs);
      load_floats<VEC>(r, v, row[k]);
#pragma unroll
      for (int i = 0; i < VEC; ++i) {
        // Round the sum as stored, so the norm sees exactly the residual the next layer reads.
        row[k][i] = __bfloat162float(__float2bfloat16_rn(xs[i] + row[k][i]));
        sum_sq += row[k][i] * row[k][i];
      }
      store_floats<VEC>(r, v, row[k]);
    }
  }
  const float rstd = rsqrtf(block_sum(sum_sq) / a.n + a.eps);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vectors) {
      float w[VEC];
      load_floats<VEC>(a.weight, v, w);
#pragma unroll
      for (int i = 0; i < VEC; ++i) row[k][i] *= rstd * w[i];
      store_floats<VEC>(x, v, row[k]);
    }
  }
}

void launch(const FusedAddRmsNormArgs& a, cudaStream_t stream) {
  const RowPlan plan = plan_row(a.n);
  dispatch_row_plan(plan, [&]<int VEC, int K>() { fused_add_rmsnorm_vectorized_kernel<VEC, K><<<a.m, plan.threads, 0, stream>>>(a); });
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(FusedAddRmsNormFamily, launch,
                       {.name = "vectorized",
                        .description = "row in registers, 128-bit loads, one pass over x and the residual",
                        .follows = "naive"});

}  // namespace kgate::kernels
