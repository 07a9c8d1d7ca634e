// The straightforward rotary embedding: one thread per rotated pair, scalar loads, and the angle
// computed on the spot (exp2f for the frequency, sincosf for the rotation) instead of read from
// the cache, so this variant checks the cache-reading ones independently. The family's reference.
#include "kgate/core/registry.hpp"
#include "rope.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void rope_naive_kernel(RopeArgs a) {
  const int half = a.head_dim / 2;
  const int heads = a.q_heads + a.k_heads;
  const std::size_t pair = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pair >= static_cast<std::size_t>(a.tokens) * heads * half) return;
  const int i = static_cast<int>(pair % half);
  const std::size_t head_index = pair / half;
  const int token = static_cast<int>(head_index / heads);
  __nv_bfloat16* x = a.head(token, static_cast<int>(head_index % heads));

  const float inv_freq = exp2f(-static_cast<float>(2 * i) / a.head_dim * a.log2_base);
  float s, c;
  sincosf(static_cast<float>(a.positions[token]) * inv_freq, &s, &c);
  const float first = __bfloat162float(x[i]), second = __bfloat162float(x[i + half]);
  x[i] = __float2bfloat16_rn(first * c - second * s);
  x[i + half] = __float2bfloat16_rn(second * c + first * s);
}

void launch(const RopeArgs& a, cudaStream_t stream) {
  const std::size_t pairs = static_cast<std::size_t>(a.tokens) * (a.q_heads + a.k_heads) * (a.head_dim / 2);
  const std::size_t blocks = (pairs + kThreads - 1) / kThreads;
  if (blocks > 0x7FFFFFFFu) throw UnsupportedShape("more rotated pairs than a one-dimensional grid covers");
  rope_naive_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(RopeFamily, launch,
                       {.name = "naive",
                        .description = "one thread per pair, scalar, angles computed with exp2f/sincosf",
                        .role = VariantRole::reference});

}  // namespace kgate::kernels
