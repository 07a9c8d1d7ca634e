// RMSNorm with the weight loaded before the reduction. rmsnorm/vectorized reads the weight only
// after the block reduction, so each row waits out two memory round trips in a row (x, then the
// weight); here the x and weight vectors are all issued at the start and the weight's latency
// hides behind x's and the reduction. Liger-Kernel's Triton kernel does the same; rmsnorm/vectorized
// ran at 0.89x its speed (geomean, H100), most behind at m 16-256 (latency-bound rows).
// Both stay packed bf16 in registers (common/row_norm.cuh), widened where used, so holding the
// weight costs no occupancy.
//
// Its geometry is rmsnorm/vectorized's: one 16-byte vector per thread, two once there are rows
// for many waves. A sweep on an H100 (Liger-Kernel's time / this kernel's, geomean over the 12
// bench shapes) kept it: 0.995x, against 0.987x with at least two vectors per thread (Liger's 256
// threads at n 4096) and 0.933x with at least four.
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
  store_normalized_row<VEC, K>(a.y + row, vectors, x, weight, row_rstd<VEC, K>(vectors, x, a.n, a.eps));
}

void launch(const RmsNormArgs& a, cudaStream_t stream) {
  const RowPlan plan = plan_row(a.n, rows_for_many_waves(a.m) ? 2 : 1);
  dispatch_row_plan(plan, [&]<int VEC, int K>() { rmsnorm_weight_first_kernel<VEC, K><<<a.m, plan.threads, 0, stream>>>(a); });
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(RmsNormFamily, launch,
                       {.name = "weight_first",
                        .description = "vectorized with the weight loaded before the reduction, row and weight packed "
                                       "bf16 in registers",
                        .follows = "vectorized"});

}  // namespace kgate::kernels
