// Fused add + RMSNorm with every load issued before the reduction: x, the residual and the weight.
// fused_add_rmsnorm/vectorized reads the weight after the block reduction, a second memory round
// trip in a row on each row's critical path; Liger-Kernel's Triton kernel loads all three first
// and was 0.89x geomean faster on an H100, most at m 16-256. The rounded sum x + residual is
// exactly the bf16 residual stored, so the row stays packed bf16 in registers
// (common/row_norm.cuh) and the weight with it, at fewer registers than vectorized's fp32 row.
//
// The same three geometries as rmsnorm/weight_first, for one sweep (keep the winner):
//   weight_first     one 16-byte vector per thread, two once there are rows for many waves;
//   weight_first_2v  at least two per thread;
//   weight_first_4v  at least four per thread.
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

// MIN_VECTORS: the fewest vectors per thread; 0 for one, two once there are rows for many waves.
template <int MIN_VECTORS>
void launch(const FusedAddRmsNormArgs& a, cudaStream_t stream) {
  const int min_per_thread = MIN_VECTORS > 0 ? MIN_VECTORS : rows_for_many_waves(a.m) ? 2 : 1;
  const RowPlan plan = plan_row(a.n, min_per_thread);
  dispatch_row_plan(plan, [&]<int VEC, int K>() {
    fused_add_rmsnorm_weight_first_kernel<VEC, K><<<a.m, plan.threads, 0, stream>>>(a);
  });
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(FusedAddRmsNormFamily, launch<0>,
                       {.name = "weight_first",
                        .description = "vectorized with x, residual and weight loaded before the reduction, packed "
                                       "bf16 in registers"});
KGATE_REGISTER_VARIANT(FusedAddRmsNormFamily, launch<2>,
                       {.name = "weight_first_2v",
                        .description = "weight_first with at least two 16-byte vectors per thread"});
KGATE_REGISTER_VARIANT(FusedAddRmsNormFamily, launch<4>,
                       {.name = "weight_first_4v",
                        .description = "weight_first with at least four 16-byte vectors per thread"});

}  // namespace kgate::kernels
