// Rotary embedding from the cos/sin cache with 16-byte accesses. A work item is (token, group of
// kHeadsPerItem heads, chunk of VEC pairs): the thread loads the chunk's cos and sin once and
// reuses them for every head of the group, and issues all of the group's q/k loads (two per head:
// the chunk in each half) before the first use. Items are laid out chunk-fastest, so a warp's
// access to one half of a head is contiguous. A grid-stride loop over one wave of blocks.
#include "../common/launch_limits.hpp"
#include "../common/packed.cuh"
#include "../common/row_vectors.cuh"
#include "kgate/registry.hpp"
#include "rope.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kHeadsPerItem = 4;

// VEC divides d/2, so both halves of every head and every cache row stay VEC-aligned.
template <int VEC>
__global__ void __launch_bounds__(kThreads) rope_vectorized_kernel(RopeArgs a, unsigned chunks, unsigned groups,
                                                                    unsigned items) {
  const int half = a.head_dim / 2;
  const int heads = a.q_heads + a.k_heads;
  for (unsigned item = blockIdx.x * kThreads + threadIdx.x; item < items; item += gridDim.x * kThreads) {
    const int chunk = static_cast<int>(item % chunks);
    const unsigned token_group = item / chunks;
    const int first_head = static_cast<int>(token_group % groups) * kHeadsPerItem;
    const int token = static_cast<int>(token_group / groups);
    const std::size_t row = static_cast<std::size_t>(a.positions[token]) * half;

    float c[VEC], s[VEC];
    load_fp32<VEC>(a.cos + row, chunk, c);
    load_fp32<VEC>(a.sin + row, chunk, s);
    // Kept packed until used: half the registers of widened values, for the same loads in flight.
    BF16Vector<VEC> x[kHeadsPerItem], y[kHeadsPerItem];
    __nv_bfloat16* head[kHeadsPerItem];
#pragma unroll
    for (int j = 0; j < kHeadsPerItem; ++j) {
      if (first_head + j < heads) {
        head[j] = a.head(token, first_head + j);
        x[j] = reinterpret_cast<const BF16Vector<VEC>*>(head[j])[chunk];
        y[j] = reinterpret_cast<const BF16Vector<VEC>*>(head[j] + half)[chunk];
      }
    }
#pragma unroll
    for (int j = 0; j < kHeadsPerItem; ++j) {
      if (first_head + j < heads) {
        float rotated_x[VEC], rotated_y[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          const float first = __bfloat162float(x[j].values[e]), second = __bfloat162float(y[j].values[e]);
          rotated_x[e] = first * c[e] - second * s[e];
          rotated_y[e] = second * c[e] + first * s[e];
        }
        store_floats<VEC>(head[j], chunk, rotated_x);
        store_floats<VEC>(head[j] + half, chunk, rotated_y);
      }
    }
  }
}

template <int VEC>
void launch_with(const RopeArgs& a, cudaStream_t stream) {
  const unsigned long long chunks = a.head_dim / 2 / VEC;
  const unsigned long long groups = (a.q_heads + a.k_heads + kHeadsPerItem - 1) / kHeadsPerItem;
  const unsigned long long items = static_cast<unsigned long long>(a.tokens) * groups * chunks;
  if (items > 0x7FFFFFFFull) throw UnsupportedShape("more than 2^31 work items: 32-bit item indices would overflow");
  constexpr auto kernel = rope_vectorized_kernel<VEC>;
  kernel<<<grid_stride_blocks<kernel, kThreads>(items), kThreads, 0, stream>>>(
      a, static_cast<unsigned>(chunks), static_cast<unsigned>(groups), static_cast<unsigned>(items));
  KGATE_CHECK_LAUNCH();
}

void launch(const RopeArgs& a, cudaStream_t stream) {
  const int half = a.head_dim / 2;
  if (half % 8 == 0) return launch_with<8>(a, stream);
  if (half % 4 == 0) return launch_with<4>(a, stream);
  if (half % 2 == 0) return launch_with<2>(a, stream);
  launch_with<1>(a, stream);
}

}  // namespace

KGATE_REGISTER_VARIANT(RopeFamily, launch,
                       {.name = "vectorized",
                        .description = "cos/sin cache, 16-byte loads, 4 heads per thread sharing one cache chunk, "
                                       "grid-stride over one wave"});

}  // namespace kgate::kernels
