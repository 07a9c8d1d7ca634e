// The straightforward GEMV: one thread per output element, a scalar dot product over its row of W
// (consecutive threads take consecutive rows, so loads are not coalesced). The family's reference.
#include "gemv.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void gemv_naive_kernel(GemvArgs a) {
  const std::size_t index = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= static_cast<std::size_t>(a.m) * a.n) return;
  const std::size_t row = index / a.n, col = index % a.n;
  const __nv_bfloat16* x = a.x + row * a.k;
  const __nv_bfloat16* w = a.w + col * a.k;
  float sum = 0.0f;
  for (int l = 0; l < a.k; ++l) sum += __bfloat162float(x[l]) * __bfloat162float(w[l]);
  a.y[index] = __float2bfloat16_rn(sum);
}

void launch(const GemvArgs& a, cudaStream_t stream) {
  const std::size_t blocks = (static_cast<std::size_t>(a.m) * a.n + kThreads - 1) / kThreads;
  gemv_naive_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(GemvFamily, launch,
                       {.name = "naive", .description = "one thread per output, scalar dot product", .role = VariantRole::reference});

}  // namespace kgate::kernels
