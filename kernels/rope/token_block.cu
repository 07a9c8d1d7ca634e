// Rotary embedding with one block per token, as Liger-Kernel's Triton kernel (one program per
// token) does. rope/vectorized spreads a grid-stride loop over at most one wave of 256-thread
// blocks with four heads per thread: at t 16-256 that is 5-80 blocks (grid 20 at t 64 for
// Llama-3-8B's 40 heads), each thread 128 registers, and it ran at 0.81-0.85x Liger's speed on an
// H100; at t 4096-32768, 22-25% warps active, 0.95-0.97x. Here every token has its own block, so
// even a few tokens spread over as many SMs as they have blocks, and each thread's loads are
// issued at once: the token's position first (the cache row waits on it), then its q/k vectors
// (which do not), then the cos/sin chunk. A unit of work is (group of HEADS heads, chunk of VEC
// pairs), chunk fastest, so a warp's access to one half of a head is contiguous; the heads of a
// group are `groups` apart, so the j-th loads of a warp cover consecutive heads.
//
// HEADS trades threads for bytes in flight per thread, for one sweep to choose (keep the winner,
// or a rule by t): token_block_h1 (40 heads x 8 chunks = 320 threads at Llama-3-8B, 32 bytes of
// q/k each), token_block_h2 (160 threads, 64 bytes), token_block_h4 (80 threads rounded to 96,
// 128 bytes: Liger's 128 threads hold 160).
#include "../common/launch_limits.hpp"
#include "../common/packed.cuh"
#include "../common/rope_rotation.cuh"
#include "kgate/core/registry.hpp"
#include "rope.hpp"

namespace kgate::kernels {
namespace {

constexpr int kMaxThreads = 512;

// VEC divides d/2, so both halves of every head and every cache row stay VEC-aligned. blockIdx.y
// picks the slice of the token's units when they need more than one block.
template <int VEC, int HEADS>
__global__ void __launch_bounds__(kMaxThreads) rope_token_block_kernel(RopeArgs a, int chunks, int groups) {
  using Vector = BF16Vector<VEC>;
  const int unit = blockIdx.y * blockDim.x + threadIdx.x;
  if (unit >= chunks * groups) return;
  const int token = blockIdx.x;
  const int group = unit / chunks, chunk = unit - group * chunks;
  const int heads = a.q_heads + a.k_heads;
  const int half_vectors = a.head_dim / 2 / VEC;
  const int position = a.positions[token];
  Vector* first[HEADS];  // the chunk in the first half; the second half is half_vectors on
  Vector x[HEADS], y[HEADS];
#pragma unroll
  for (int j = 0; j < HEADS; ++j) {
    if (group + j * groups < heads) {
      first[j] = reinterpret_cast<Vector*>(head_of(a, token, group + j * groups)) + chunk;
      x[j] = load_vector_evict_first(first[j]);
      y[j] = load_vector_evict_first(first[j] + half_vectors);
    }
  }
  const std::size_t cache_row = static_cast<std::size_t>(position) * (a.head_dim / 2);
  float c[VEC], s[VEC];
  load_fp32<VEC>(a.cos + cache_row, chunk, c);
  load_fp32<VEC>(a.sin + cache_row, chunk, s);
#pragma unroll
  for (int j = 0; j < HEADS; ++j) {
    if (group + j * groups < heads) {
      Vector rotated_x, rotated_y;
      rotate_pairs<VEC>(kept_packed(x[j]), kept_packed(y[j]), c, s, rotated_x, rotated_y);
      store_vector_evict_first(first[j], rotated_x);
      store_vector_evict_first(first[j] + half_vectors, rotated_y);
    }
  }
}

template <int VEC, int HEADS>
void launch_with(const RopeArgs& a, cudaStream_t stream) {
  const int chunks = a.head_dim / 2 / VEC;
  const int groups = (a.q_heads + a.k_heads + HEADS - 1) / HEADS;
  const int units = chunks * groups;
  // Units split evenly over as few blocks as hold them.
  const int slices = (units + kMaxThreads - 1) / kMaxThreads;
  const int threads = ((units + slices - 1) / slices + 31) / 32 * 32;
  if (slices > 65535) throw UnsupportedShape("a token's heads need more than 65535 blocks");
  rope_token_block_kernel<VEC, HEADS><<<dim3(a.tokens, slices), threads, 0, stream>>>(a, chunks, groups);
  KGATE_CHECK_LAUNCH();
}

template <int HEADS>
void launch(const RopeArgs& a, cudaStream_t stream) {
  const int half = a.head_dim / 2;
  if (half % 8 == 0) return launch_with<8, HEADS>(a, stream);
  if (half % 4 == 0) return launch_with<4, HEADS>(a, stream);
  if (half % 2 == 0) return launch_with<2, HEADS>(a, stream);
  launch_with<1, HEADS>(a, stream);
}

}  // namespace

KGATE_REGISTER_VARIANT(RopeFamily, launch<1>,
                       {.name = "token_block_h1",
                        .description = "one block per token, one head per thread, position then q/k then cos/sin "
                                       "loads issued at once"});
KGATE_REGISTER_VARIANT(RopeFamily, launch<2>,
                       {.name = "token_block_h2", .description = "token_block with two heads per thread"});
KGATE_REGISTER_VARIANT(RopeFamily, launch<4>,
                       {.name = "token_block_h4", .description = "token_block with four heads per thread"});

}  // namespace kgate::kernels
