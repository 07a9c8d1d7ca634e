// Fused add + RMSNorm with every load issued before the reduction: x, the residual and the weight.
// fused_add_rmsnorm/vectorized reads the weight after the block reduction, a second memory round
// trip in a row on each row's critical path; Liger-Kernel's Triton kernel loads all three first,
// and vectorized ran at 0.89x its speed (geomean, H100), most behind at m 16-256. The rounded sum
// x + residual is exactly the bf16 residual stored, so the row stays packed bf16 in registers
// (common/row_norm.cuh) and the weight with it, at fewer registers than vectorized's fp32 row.
//
// The weight's loads come first, behind a __syncwarp, and no load carries a bounds test
// (row_norm.cuh's load_weight_then_rows says why). Loaded after x and the residual, the weight was
// sunk by ptxas below the residual add, which waits for x and the residual, so its DRAM round trip
// started only after theirs ended: 0.2-0.4 us at m 1-64, where a row's time is mostly latency,
// 0.83-0.89x Liger's speed on an H200 and 0.85-0.87x on an H100. (rmsnorm/weight_first keeps x
// first: there the sunk weight load overlaps the reduction, and weight-first measured 1.5% slower
// on an H100.)
//
// Geometry: the fewest vectors per thread that fit a block of 512 (one at n 4096, two at 8192).
// From a sweep on an H100 with these loads, Liger's time / this kernel's at m 1-4096: 1.001x
// geomean (0.971-1.063x), against 0.993x for at least two per thread and 0.925x for at
// least four (the rule before, chosen while the weight's load was sunk). At m 4096 all three are
// within 0.1%.
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
  load_weight_then_rows<VEC, K>(vectors, a.weight, weight, {a.x + row, a.residual + row}, x, residual);
#pragma unroll
  for (int k = 0; k < K; ++k) {
#pragma unroll
    for (int i = 0; i < VEC; ++i)
      residual[k].values[i] = __float2bfloat16_rn(__bfloat162float(x[k].values[i]) + __bfloat162float(residual[k].values[i]));
  }
  store_row_vectors<VEC, K>(a.residual + row, vectors, residual);
  const float rstd = row_rstd<VEC, K>(vectors, residual, a.n, a.eps);
  store_normalized_row<VEC, K>(a.x + row, vectors, residual, weight, rstd);
}

void launch(const FusedAddRmsNormArgs& a, cudaStream_t stream) {
  const RowPlan plan = plan_row(a.n);
  dispatch_row_plan(plan, [&]<int VEC, int K>() { fused_add_rmsnorm_weight_first_kernel<VEC, K><<<a.m, plan.threads, 0, stream>>>(a); });
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(FusedAddRmsNormFamily, launch,
                       {.name = "weight_first",
                        .description = "vectorized with x, residual and weight loaded before the reduction, packed "
                                       "bf16 in registers",
                        .follows = "vectorized"});

}  // namespace kgate::kernels
