// SiLU-and-mul with one block per tile of a row (no loop below 65536 rows): the shape Inductor's
// generated Triton kernel has (a grid of up to 1.8M blocks of 128 threads, 24 registers), which
// reached 102-104% of the copy ceiling at m 4096-32768 on an H100 where silu_and_mul/vectorized (a
// grid-stride loop over one wave of 128-thread blocks, two-stage cp.async, 32 KB of shared memory
// per block) ran at 94.5-98.5%: 35% warps active with DRAM 86% busy, and at m 1-64 its few blocks
// (4-224) were slower too. Here each thread loads one 16-byte vector of gate and one of up (kept
// packed until used, so ptxas cannot sink the loads below the arithmetic), computes and stores:
// small blocks, few registers, full occupancy, and a grid of tiles x rows, so every row's tile is
// one block and no index needs a division. Rows whose width i is not a multiple of 8 (test shapes)
// use the widest vector dividing i, so every row's halves stay aligned.
//
// One vector per thread won a sweep on an H100 against two and four (fewer blocks, more bytes in
// flight each): the best peer's time / this kernel's, geomean over the 12 bench shapes, 1.010x
// against 0.946x and 0.886x. Below 8 MB of output the vectors are 8 bytes (four values), as in
// Inductor's kernel at m 16 (448 blocks of 128 threads): twice the blocks, so a small problem
// spreads over more SMs. From sweeps at m 1-256 (best peer's time / this kernel's, same run):
// with this rule, 1.021x geomean against 1.000x on an H100, faster or equal at all 8 shapes; with
// four values at all 8 shapes, 1.108x against 1.091x on an H200, but 0.997x against 1.009x at
// m 256 i 28672 (14.7 MB), hence the line.
#include <algorithm>

#include "../common/activations.cuh"
#include "../common/row_plan.hpp"
#include "../common/row_vectors.cuh"
#include "kgate/core/registry.hpp"
#include "silu_and_mul.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 128;

// Block (x, y) covers tile x of rows y, y + gridDim.y, ...: vector x·kThreads + threadIdx.x of each
// row's row_vectors output vectors. The grid is tiles x rows (rows above 65535 taking turns), so a
// block finds its row and tile without dividing its index by the tile count, an integer-division
// routine of about 20 dependent instructions before the first load's address (as rope/token_block
// found: 1.05x there).
template <int VEC>
__global__ void __launch_bounds__(kThreads) silu_and_mul_flat_kernel(SiluAndMulArgs a, int row_vectors) {
  using Vector = BF16Vector<VEC>;
  const int c = static_cast<int>(blockIdx.x) * kThreads + static_cast<int>(threadIdx.x);
  if (c >= row_vectors) return;
  for (int row = static_cast<int>(blockIdx.y); row < a.rows; row += static_cast<int>(gridDim.y)) {
    const Vector* gate = reinterpret_cast<const Vector*>(a.x + static_cast<std::size_t>(row) * 2 * a.cols);
    const Vector* up = gate + row_vectors;
    Vector* out = reinterpret_cast<Vector*>(a.out + static_cast<std::size_t>(row) * a.cols);
    const Vector g = load_vector_evict_first(gate + c);
    const Vector u = load_vector_evict_first(up + c);
    store_vector_evict_first(out + c, silu_and_mul(kept_packed(g), kept_packed(u)));
  }
}

template <int VEC>
void launch_with(const SiluAndMulArgs& a, cudaStream_t stream) {
  constexpr int kMaxGridY = 65535;
  const int row_vectors = a.cols / VEC;
  const int tiles = (row_vectors + kThreads - 1) / kThreads;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(std::min(a.rows, kMaxGridY)));
  silu_and_mul_flat_kernel<VEC><<<grid, kThreads, 0, stream>>>(a, row_vectors);
  KGATE_CHECK_LAUNCH();
}

constexpr double kNarrowVectorsBelowBytes = 8e6;

void launch(const SiluAndMulArgs& a, cudaStream_t stream) {
  const double out_bytes = 2.0 * a.rows * a.cols;
  dispatch_vector_width(
      a.cols, [&]<int VEC>() { launch_with<VEC>(a, stream); }, out_bytes < kNarrowVectorsBelowBytes ? 4 : 8);
}

}  // namespace

KGATE_REGISTER_VARIANT(SiluAndMulFamily, launch,
                       {.name = "flat",
                        .description = "one block per 128-vector tile of a row, no loop, one 16-byte vector of gate "
                                       "and up per thread, evict-first loads and stores",
                        .follows = "vectorized"});

}  // namespace kgate::kernels
