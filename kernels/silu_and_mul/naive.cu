// The straightforward SiLU-and-mul: one thread per output element, scalar loads. The family's
// reference variant.
#include "../common/activations.cuh"
#include "kgate/core/registry.hpp"
#include "silu_and_mul.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void silu_and_mul_naive_kernel(SiluAndMulArgs a) {
  const std::size_t index = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= static_cast<std::size_t>(a.rows) * a.cols) return;
  const std::size_t row = index / a.cols, col = index % a.cols;
  const __nv_bfloat16* gate = a.x + row * 2 * a.cols;
  a.out[index] = __float2bfloat16_rn(silu(__bfloat162float(gate[col])) * __bfloat162float(gate[a.cols + col]));
}

void launch(const SiluAndMulArgs& a, cudaStream_t stream) {
  const std::size_t blocks = (static_cast<std::size_t>(a.rows) * a.cols + kThreads - 1) / kThreads;
  if (blocks > 0x7FFFFFFFu) throw UnsupportedShape("more outputs than a one-dimensional grid covers");
  silu_and_mul_naive_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(SiluAndMulFamily, launch,
                       {.name = "naive", .description = "one thread per output, scalar loads", .role = VariantRole::reference});

}  // namespace kgate::kernels
