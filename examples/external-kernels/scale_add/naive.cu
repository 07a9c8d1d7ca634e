// One thread per element, scalar loads: the family's reference variant.
#include "kgate/core/registry.hpp"
#include "scale_add.hpp"

namespace external {
namespace {

constexpr int kThreads = 256;

__global__ void scale_add_naive_kernel(ScaleAddArgs a) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < a.n) a.out[i] = a.alpha * a.x[i] + a.y[i];
}

void launch(const ScaleAddArgs& a, cudaStream_t stream) {
  const long long blocks = (a.n + kThreads - 1) / kThreads;
  if (blocks > 0x7FFFFFFF) throw kgate::UnsupportedShape("more elements than a one-dimensional grid covers");
  scale_add_naive_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(ScaleAddFamily, launch,
                       {.name = "naive", .description = "one thread per element, scalar loads", .role = kgate::VariantRole::reference});

}  // namespace external
