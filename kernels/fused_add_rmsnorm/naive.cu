// The straightforward fused add + RMSNorm: one block per row, scalar loads; the first pass writes
// the residual, the second reads it back to normalize. The family's reference variant.
#include "../common/block_reduce.cuh"
#include "fused_add_rmsnorm.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void fused_add_rmsnorm_naive_kernel(FusedAddRmsNormArgs a) {
  __nv_bfloat16* x = a.x + static_cast<std::size_t>(blockIdx.x) * a.n;
  __nv_bfloat16* r = a.residual + static_cast<std::size_t>(blockIdx.x) * a.n;
  float sum_sq = 0.0f;
  for (int j = threadIdx.x; j < a.n; j += blockDim.x) {
    const __nv_bfloat16 sum = __float2bfloat16_rn(__bfloat162float(x[j]) + __bfloat162float(r[j]));
    r[j] = sum;
    const float s = __bfloat162float(sum);
    sum_sq += s * s;
  }
  const float rstd = rsqrtf(block_sum(sum_sq) / a.n + a.eps);
  // Each thread reads back only the elements it wrote itself: no barrier needed.
  for (int j = threadIdx.x; j < a.n; j += blockDim.x)
    x[j] = __float2bfloat16_rn(__bfloat162float(r[j]) * rstd * __bfloat162float(a.weight[j]));
}

void launch(const FusedAddRmsNormArgs& a, cudaStream_t stream) {
  fused_add_rmsnorm_naive_kernel<<<a.m, kThreads, 0, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(FusedAddRmsNormFamily, launch,
                       {.name = "naive",
                        .description = "one block per row, scalar loads, residual written then re-read",
                        .role = VariantRole::reference});

}  // namespace kgate::kernels
