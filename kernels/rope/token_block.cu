// Rotary embedding with one block per token, as Liger-Kernel's Triton kernel (one program per
// token) does. rope/vectorized spreads a grid-stride loop over at most one wave of 256-thread
// blocks with four heads per thread: at t 16-256 that is 5-80 blocks (grid 20 at t 64 for
// Llama-3-8B's 40 heads), each thread 128 registers, and it ran at 0.81-0.85x Liger's speed on an
// H100; at t 4096-32768, 22-25% warps active, 0.95-0.97x. Here every token has its own block, so
// even a few tokens spread over as many SMs as they have blocks, and each thread's loads are
// issued at once: the token's position first (the cache row waits on it), then its q/k vectors
// (which do not), then the cos/sin chunk. A thread takes one (head, chunk of VEC pairs) unit,
// chunk fastest, so a warp's access to one half of a head is contiguous: 40 heads x 8 chunks =
// 320 threads at Llama-3-8B, 32 bytes of q/k each.
//
// One head per thread won a sweep on an H100 against two and four (fewer threads, more bytes in
// flight each): Liger's time / this kernel's, geomean over the 12 bench shapes, 1.088x against
// 1.069x and 1.003x; two or four were ahead by at most 5% at t 256-4096 only.
//
// A token's units take one block of up to 1024 threads once the tokens fill many waves, and are
// split over blocks of at most 512 below that. Llama-3-70B's 72 heads are 576 units: one block per
// token took t 32768 from 419 to 406 us on an H100 (Liger 417) and from 317 to 305 us on an H200,
// and t 4096 from 49.2 to 48.5 us (H100); but at t 1-64, two blocks a token spread over twice the
// SMs, and one block was 12% slower (2.02-2.46 against 2.30-2.66 us, H100).
//
// A thread's head and chunk come from its unit by dividing by the chunk count, which at a runtime
// count is an integer-division routine of about 20 dependent instructions (I2F, MUFU.RCP, F2I,
// IMAD.HI, fix-ups) between the thread's start and the address of its first q/k load. At head_dim
// 128 (every model the suite measures) the count is a template argument and the division a shift:
// the VEC = 8 kernel went from 160 to 136 SASS instructions, and kgate ab against the runtime
// division (H100, 5 rounds) gave 1.05x geomean over the 12 shapes, 1.045-1.108x at t 1-256 and
// 1.016x at t 4096. (A 500-cycle spin planted at the top of the last block had made the kernel
// 1.03-1.09x faster at t 16-256 too; its SASS differs from the old kernel's only by the spin loop
// and register assignment, and this change is ahead of it at 8 of the 9 shapes that moved.)
//
// Once the tokens fill many waves, q and k are loaded and stored without the streaming
// (evict-first) hints: on an H200 (two runs, same process) that was 1.016-1.018x faster at t 4096
// and 32768 with 32 query heads and 1.002-1.009x with 64, where L2 was 80% busy and DRAM 65% (ncu,
// t 4096 hq 64). With few tokens the hints stay: without them t 1 hq 64 took 1.63 us against 1.60.
#include "../common/launch_limits.hpp"
#include "../common/packed.cuh"
#include "../common/row_plan.hpp"
#include "../common/rope_rotation.cuh"
#include "kgate/core/registry.hpp"
#include "rope.hpp"

namespace kgate::kernels {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kFewTokensThreads = 512;  // a token's block size below many waves of tokens

// VEC divides d/2, so both halves of every head and every cache row stay VEC-aligned. blockIdx.y
// picks the slice of the token's units when they need more than one block. CHUNKS: a head's half
// in VEC-pair chunks when known at compile time, else 0 and runtime_chunks. STREAMING: q and k
// loaded and stored with the evict-first hints (see the top).
template <int VEC, int CHUNKS, bool STREAMING>
__global__ void __launch_bounds__(kMaxThreads) rope_token_block_kernel(RopeArgs a, int runtime_chunks) {
  using Vector = BF16Vector<VEC>;
  const int chunks = CHUNKS ? CHUNKS : runtime_chunks;
  const int token = blockIdx.x;
  const int position = a.positions[token];
  const int unit = blockIdx.y * blockDim.x + threadIdx.x;
  if (unit >= chunks * (a.q_heads + a.k_heads)) return;
  const int head = unit / chunks, chunk = unit - head * chunks;
  const int half_vectors = chunks;  // a head's half is its chunks of VEC pairs
  // The chunk in the first half; the second half is half_vectors on.
  Vector* first = reinterpret_cast<Vector*>(head_of(a, token, head)) + chunk;
  const Vector x = STREAMING ? load_vector_evict_first(first) : first[0];
  const Vector y = STREAMING ? load_vector_evict_first(first + half_vectors) : first[half_vectors];
  const std::size_t cache_row = static_cast<std::size_t>(position) * (a.head_dim / 2);
  float c[VEC], s[VEC];
  load_fp32<VEC>(a.cos + cache_row, chunk, c);
  load_fp32<VEC>(a.sin + cache_row, chunk, s);
  Vector rotated_x, rotated_y;
  rotate_pairs<VEC>(kept_packed(x), kept_packed(y), c, s, rotated_x, rotated_y);
  if constexpr (STREAMING) {
    store_vector_evict_first(first, rotated_x);
    store_vector_evict_first(first + half_vectors, rotated_y);
  } else {
    first[0] = rotated_x;
    first[half_vectors] = rotated_y;
  }
}

template <int VEC, int CHUNKS>
void launch_kernel(const RopeArgs& a, int chunks, dim3 grid, int threads, bool many_waves, cudaStream_t stream) {
  if (many_waves) rope_token_block_kernel<VEC, CHUNKS, false><<<grid, threads, 0, stream>>>(a, chunks);
  else rope_token_block_kernel<VEC, CHUNKS, true><<<grid, threads, 0, stream>>>(a, chunks);
}

template <int VEC>
void launch_with(const RopeArgs& a, cudaStream_t stream) {
  const int chunks = a.head_dim / 2 / VEC;
  const int units = chunks * (a.q_heads + a.k_heads);
  // Units split evenly over as few blocks as hold them.
  const bool many_waves = rows_for_many_waves(a.tokens);
  const int block_limit = many_waves ? kMaxThreads : kFewTokensThreads;
  const int slices = (units + block_limit - 1) / block_limit;
  const int threads = ((units + slices - 1) / slices + 31) / 32 * 32;
  if (slices > 65535) throw UnsupportedShape("a token's heads need more than 65535 blocks");
  const dim3 grid(a.tokens, slices);
  if (a.head_dim == 128) launch_kernel<VEC, 64 / VEC>(a, chunks, grid, threads, many_waves, stream);  // a shift (see the top)
  else launch_kernel<VEC, 0>(a, chunks, grid, threads, many_waves, stream);
  KGATE_CHECK_LAUNCH();
}

void launch(const RopeArgs& a, cudaStream_t stream) {
  dispatch_vector_width(a.head_dim / 2, [&]<int VEC>() { launch_with<VEC>(a, stream); });
}

}  // namespace

KGATE_REGISTER_VARIANT(RopeFamily, launch,
                       {.name = "token_block",
                        .description = "one block per token, one head per thread, position then q/k then cos/sin "
                                       "loads issued at once, no streaming hints once tokens fill many waves",
                        .follows = "vectorized"});

}  // namespace kgate::kernels
