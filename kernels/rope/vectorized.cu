// Rotary embedding from the cos/sin cache with 16-byte accesses. A work item is (token, group of
// kHeadsPerItem heads, chunk of VEC pairs): the thread loads the chunk's cos and sin once and
// reuses them for every head of the group, and issues all of the group's q/k loads (two per head:
// the chunk in each half) before the first use. Items are laid out chunk-fastest, so a warp's
// access to one half of a head is contiguous. A grid-stride loop over at most one wave of blocks,
// as many as give every thread the same number of items.
//
// The cache row depends on the token's position, itself a load: read on the spot, each item waits
// out two memory latencies in a row, the second with the q/k loads queued behind the cache loads
// (81% of the copy ceiling). So each thread reads the position of its next item one iteration
// ahead, and issues the q/k loads (which need no position) before the cache loads. A group that
// does not run past the last head (every group of the Llama shapes) takes a path without guards,
// so its loads are straight-line code. q/k are read and written once: evict-first both ways.
#include "../common/launch_limits.hpp"
#include "../common/packed.cuh"
#include "../common/row_plan.hpp"
#include "../common/rope_rotation.cuh"
#include "../common/row_vectors.cuh"
#include "kgate/core/registry.hpp"
#include "rope.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kHeadsPerItem = 4;

// One item whose token's cache row starts at cache_row. WHOLE: all kHeadsPerItem heads exist.
template <int VEC, bool WHOLE>
__device__ __forceinline__ void rotate_item(const RopeArgs& a, int token, int first_head, int chunk, std::size_t cache_row) {
  using Vector = BF16Vector<VEC>;
  const int half_vectors = a.head_dim / 2 / VEC;
  const int heads = a.q_heads + a.k_heads;
  Vector* first[kHeadsPerItem];  // the chunk in the first half; the second half is half_vectors on
  // Kept packed until used: half the registers of widened values, for the same loads in flight.
  Vector x[kHeadsPerItem], y[kHeadsPerItem];
#pragma unroll
  for (int j = 0; j < kHeadsPerItem; ++j) {
    if (WHOLE || first_head + j < heads) {
      first[j] = reinterpret_cast<Vector*>(head_of(a, token, first_head + j)) + chunk;
      x[j] = load_vector_evict_first(first[j]);
      y[j] = load_vector_evict_first(first[j] + half_vectors);
    }
  }
  float c[VEC], s[VEC];
  load_fp32<VEC>(a.cos + cache_row, chunk, c);
  load_fp32<VEC>(a.sin + cache_row, chunk, s);
#pragma unroll
  for (int j = 0; j < kHeadsPerItem; ++j) {
    if (WHOLE || first_head + j < heads) {
      Vector rotated_x, rotated_y;
      rotate_pairs<VEC>(x[j], y[j], c, s, rotated_x, rotated_y);
      store_vector_evict_first(first[j], rotated_x);
      store_vector_evict_first(first[j] + half_vectors, rotated_y);
    }
  }
}

// VEC divides d/2, so both halves of every head and every cache row stay VEC-aligned.
template <int VEC>
__global__ void __launch_bounds__(kThreads, 2) rope_vectorized_kernel(RopeArgs a, unsigned chunks, unsigned groups, unsigned items) {
  const std::size_t half = a.head_dim / 2;
  const int heads = a.q_heads + a.k_heads;
  const unsigned per_token = chunks * groups;
  const unsigned stride = gridDim.x * kThreads;
  unsigned item = blockIdx.x * kThreads + threadIdx.x;
  if (item >= items) return;
  int position = a.positions[item / per_token];
  for (; item < items; item += stride) {
    const unsigned token = item / per_token, rest = item - token * per_token;
    const unsigned group = rest / chunks;
    const int chunk = static_cast<int>(rest - group * chunks);
    const int first_head = static_cast<int>(group) * kHeadsPerItem;
    // Clamped rather than guarded: the last item rereads its own position.
    const int next_position = a.positions[min(item + stride, items - 1) / per_token];
    const std::size_t cache_row = static_cast<std::size_t>(position) * half;
    if (first_head + kHeadsPerItem <= heads) rotate_item<VEC, true>(a, static_cast<int>(token), first_head, chunk, cache_row);
    else rotate_item<VEC, false>(a, static_cast<int>(token), first_head, chunk, cache_row);
    position = next_position;
  }
}

template <int VEC>
void launch_with(const RopeArgs& a, cudaStream_t stream) {
  const unsigned long long chunks = a.head_dim / 2 / VEC;
  const unsigned long long groups = (a.q_heads + a.k_heads + kHeadsPerItem - 1) / kHeadsPerItem;
  const unsigned long long items = static_cast<unsigned long long>(a.tokens) * groups * chunks;
  // item + stride must not wrap: keep the count well inside 32 bits.
  if (items > 0x7FFFFFFFull) throw UnsupportedShape("more than 2^31 work items: 32-bit item indices would overflow");
  constexpr auto kernel = rope_vectorized_kernel<VEC>;
  kernel<<<grid_stride_blocks<kernel, kThreads>(items), kThreads, 0, stream>>>(a, static_cast<unsigned>(chunks),
                                                                               static_cast<unsigned>(groups), static_cast<unsigned>(items));
  KGATE_CHECK_LAUNCH();
}

void launch(const RopeArgs& a, cudaStream_t stream) {
  dispatch_vector_width(a.head_dim / 2, [&]<int VEC>() { launch_with<VEC>(a, stream); });
}

}  // namespace

KGATE_REGISTER_VARIANT(RopeFamily, launch,
                       {.name = "vectorized",
                        .description = "cos/sin cache, 16-byte loads, 4 heads per thread sharing one cache chunk, "
                                       "positions read one item ahead, grid-stride over a balanced wave",
                        .follows = "naive"});

}  // namespace kgate::kernels
