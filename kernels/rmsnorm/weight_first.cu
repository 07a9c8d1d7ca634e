// RMSNorm with the weight loaded before the reduction. rmsnorm/vectorized reads the weight only
// after the block reduction, so each row waits out two memory round trips in a row (x, then the
// weight); here the x and weight vectors are all issued at the start and the weight's latency
// hides behind x's and the reduction. Liger-Kernel's Triton kernel does the same, and was
// 0.89x geomean faster than rmsnorm/vectorized on an H100, most at m 16-256 (latency-bound rows).
// Both stay packed bf16 in registers (common/row_norm.cuh), widened where used, so holding the
// weight costs no occupancy.
//
// Three geometries, one kernel, for one sweep to choose between (register all, keep the winner):
//   weight_first     one 16-byte vector per thread, two once there are rows for many waves
//                    (rmsnorm/vectorized's rule);
//   weight_first_2v  at least two per thread (16 values: Liger's 256 threads at n = 4096);
//   weight_first_4v  at least four per thread (32 values, 128 threads at n = 4096).
#include "../common/block_reduce.cuh"
#include "../common/launch_limits.hpp"
#include "../common/row_norm.cuh"
#include "kgate/core/registry.hpp"
#include "rmsnorm.hpp"

namespace kgate::kernels {
namespace {

template <int VEC, int K>
__global__ void __maxnreg__(row_register_limit(VEC, K)) rmsnorm_weight_first_kernel(RmsNormArgs a) {
  const int vectors = a.n / VEC;
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * a.n;
  BF16Vector<VEC> x[K], weight[K];
  load_row_vectors<VEC, K>(a.x + row, vectors, x);
  load_row_vectors<VEC, K>(a.weight, vectors, weight);
  const float rstd = rsqrtf(block_sum(row_sum_of_squares<VEC, K>(vectors, x)) / a.n + a.eps);
  store_normalized_row<VEC, K>(a.y + row, vectors, x, weight, rstd);
}

// MIN_VECTORS: the fewest vectors per thread; 0 for rmsnorm/vectorized's rule.
template <int MIN_VECTORS>
void launch(const RmsNormArgs& a, cudaStream_t stream) {
  const int min_per_thread = MIN_VECTORS > 0 ? MIN_VECTORS : rows_for_many_waves(a.m) ? 2 : 1;
  const RowPlan plan = plan_row(a.n, min_per_thread);
  dispatch_row_plan(plan, [&]<int VEC, int K>() {
    rmsnorm_weight_first_kernel<VEC, K><<<a.m, plan.threads, 0, stream>>>(a);
  });
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(RmsNormFamily, launch<0>,
                       {.name = "weight_first",
                        .description = "vectorized with the weight loaded before the reduction, row and weight packed "
                                       "bf16 in registers"});
KGATE_REGISTER_VARIANT(RmsNormFamily, launch<2>,
                       {.name = "weight_first_2v",
                        .description = "weight_first with at least two 16-byte vectors per thread"});
KGATE_REGISTER_VARIANT(RmsNormFamily, launch<4>,
                       {.name = "weight_first_4v",
                        .description = "weight_first with at least four 16-byte vectors per thread"});

}  // namespace kgate::kernels
