// The straightforward RMSNorm: one block per row, scalar loads, the row read twice (once for the
// sum of squares, once to scale). The family's reference variant.
#include "../common/block_reduce.cuh"
#include "kgate/core/registry.hpp"
#include "rmsnorm.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void rmsnorm_naive_kernel(RmsNormArgs a) {
  const __nv_bfloat16* x = a.x + static_cast<std::size_t>(blockIdx.x) * a.n;
  __nv_bfloat16* y = a.y + static_cast<std::size_t>(blockIdx.x) * a.n;
  float sum_sq = 0.0f;
  for (int j = threadIdx.x; j < a.n; j += blockDim.x) {
    const float v = __bfloat162float(x[j]);
    sum_sq += v * v;
  }
  const float rstd = rsqrtf(block_sum(sum_sq) / a.n + a.eps);
  for (int j = threadIdx.x; j < a.n; j += blockDim.x)
    y[j] = __float2bfloat16_rn(__bfloat162float(x[j]) * rstd * __bfloat162float(a.weight[j]));
}

void launch(const RmsNormArgs& a, cudaStream_t stream) {
  rmsnorm_naive_kernel<<<a.m, kThreads, 0, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(RmsNormFamily, launch,
                       {.name = "naive", .description = "one block per row, scalar loads, row read twice", .role = VariantRole::reference});

}  // namespace kgate::kernels
