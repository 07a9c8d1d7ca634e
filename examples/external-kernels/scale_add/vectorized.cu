// 16-byte loads and stores (four floats per thread and step) over a grid-stride loop sized to the
// GPU, with a scalar tail; the buffers come from cudaMalloc, so they are 16-byte aligned.
#include <algorithm>

#include "kgate/core/registry.hpp"
#include "scale_add.hpp"

namespace external {
namespace {

constexpr int kThreads = 256;

__global__ void scale_add_vectorized_kernel(ScaleAddArgs a) {
  const long long vectors = a.n / 4;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto* x4 = reinterpret_cast<const float4*>(a.x);
  const auto* y4 = reinterpret_cast<const float4*>(a.y);
  auto* out4 = reinterpret_cast<float4*>(a.out);
  for (long long v = first; v < vectors; v += stride) {
    const float4 x = x4[v], y = y4[v];
    out4[v] = make_float4(a.alpha * x.x + y.x, a.alpha * x.y + y.y, a.alpha * x.z + y.z, a.alpha * x.w + y.w);
  }
  for (long long i = vectors * 4 + first; i < a.n; i += stride) a.out[i] = a.alpha * a.x[i] + a.y[i];
}

void launch(const ScaleAddArgs& a, cudaStream_t stream) {
  int device = 0, sms = 0;
  KGATE_CUDA_CHECK(cudaGetDevice(&device));
  KGATE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const long long needed = (a.n / 4 + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(std::max(1LL, std::min<long long>(needed, 8LL * sms)));
  scale_add_vectorized_kernel<<<blocks, kThreads, 0, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(ScaleAddFamily, launch,
                       {.name = "vectorized", .description = "float4 loads and stores, grid-stride loop, scalar tail"});

}  // namespace external
