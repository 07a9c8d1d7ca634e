// Fused add + RMSNorm with every load issued before the reduction: x, the residual and the weight.
// fused_add_rmsnorm/vectorized reads the weight after the block reduction, a second memory round
// trip in a row on each row's critical path; Liger-Kernel's Triton kernel loads all three first,
// and vectorized ran at 0.89x its speed (geomean, H100), most behind at m 16-256. The rounded sum
// x + residual is exactly the bf16 residual stored, so the row stays packed bf16 in registers
// (common/row_norm.cuh) and the weight with it, at fewer registers than vectorized's fp32 row.
//
// Geometry: at least four 16-byte vectors per thread for long rows (n >= 8192) and for rows
// enough for many waves, else one. From a sweep on an H100 (Liger's time / this kernel's): four
// per thread won at every n 8192 shape (0.86-1.00x against 0.73-0.89x with rmsnorm/weight_first's
// rule) and at m 4096 (1.00x against 0.82x: two vectors of x, residual and weight under the
// 40-register limit of row_register_limit spill); one per thread won at n 4096 below many waves
// (m 1: 0.92x against 0.85x).
#include "../common/block_reduce.cuh"
#include "../common/launch_limits.hpp"
#include "../common/row_norm.cuh"
#include "fused_add_rmsnorm.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

template <int VEC, int K>
__global__ void __maxnreg__(row_register_limit(VEC, K)) fused_add_rmsnorm_weight_first_kernel(FusedAddRmsNormArgs a) {
  const int vectors = a.n / VEC;
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * a.n;
  BF16Vector<VEC> x[K], residual[K], weight[K];
  load_row_vectors<VEC, K>(a.x + row, vectors, x);
  load_row_vectors<VEC, K>(a.residual + row, vectors, residual);
  load_row_vectors<VEC, K>(a.weight, vectors, weight);
#pragma unroll
  for (int k = 0; k < K; ++k) {
#pragma unroll
    for (int i = 0; i < VEC; ++i)
      residual[k].values[i] = __float2bfloat16_rn(__bfloat162float(x[k].values[i]) +
                                                  __bfloat162float(residual[k].values[i]));
  }
  store_row_vectors<VEC, K>(a.residual + row, vectors, residual);
  const float rstd = rsqrtf(block_sum(row_sum_of_squares<VEC, K>(vectors, residual)) / a.n + a.eps);
  store_normalized_row<VEC, K>(a.x + row, vectors, residual, weight, rstd);
}

void launch(const FusedAddRmsNormArgs& a, cudaStream_t stream) {
  const RowPlan plan = plan_row(a.n, a.n >= 8192 || rows_for_many_waves(a.m) ? 4 : 1);
  dispatch_row_plan(plan, [&]<int VEC, int K>() {
    fused_add_rmsnorm_weight_first_kernel<VEC, K><<<a.m, plan.threads, 0, stream>>>(a);
  });
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(FusedAddRmsNormFamily, launch,
                       {.name = "weight_first",
                        .description = "vectorized with x, residual and weight loaded before the reduction, packed "
                                       "bf16 in registers",
                        .follows = "vectorized"});

}  // namespace kgate::kernels
