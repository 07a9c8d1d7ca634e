// SiLU-and-mul with one block per tile of a row and no loop: the shape Inductor's generated Triton
// kernel has (a grid of up to 1.8M blocks of 128 threads, 24 registers), which reached 102-104% of
// the copy ceiling at m 4096-32768 on an H100 where silu_and_mul/vectorized (a grid-stride loop
// over one wave of 128-thread blocks, two-stage cp.async, 32 KB of shared memory per block) ran at
// 94.5-98.5%: 35% warps active with DRAM 86% busy, and at m 1-64 its few blocks (4-224) were
// slower too. Here each thread loads one 16-byte vector of gate and one of up (kept packed until
// used, so ptxas cannot sink the loads below the arithmetic), computes and stores: small blocks,
// few registers, full occupancy, and a grid of rows x tiles, so every row's tile is one block and
// no index needs a division by the row length. Rows whose width i is not a multiple of 8 (test
// shapes) use the widest vector dividing i, so every row's halves stay aligned.
//
// One vector per thread won a sweep on an H100 against two and four (fewer blocks, more bytes in
// flight each): the best peer's time / this kernel's, geomean over the 12 bench shapes, 1.010x
// against 0.946x and 0.886x. Below 8 MB of output the vectors are 8 bytes (four values), as in
// Inductor's kernel at m 16 (448 blocks of 128 threads): twice the blocks, so a small problem
// spreads over more SMs. From sweeps at m 1-256 (best peer's time / this kernel's, same run):
// with this rule, 1.021x geomean against 1.000x on an H100, faster or equal at all 8 shapes; with
// four values at all 8 shapes, 1.108x against 1.091x on an H200, but 0.997x against 1.009x at
// m 256 i 28672 (14.7 MB), hence the line.
//
// Plain loads and stores, and the row from a FastDivisor: with the streaming (evict-first) hints
// on its 16-byte loads and stores, the kernel ran 1.048-1.056x slower than without them at m 4096
// and 32768 on an H200 (two runs, same process: 82.4 against 78.6 us at m 4096 i 14336, where
// torch.compile's kernel, the same grid without hints, took 78.6), and dividing the block index
// by a runtime tile count cost 1.006-1.023x at m <= 256, as the integer-division routine stood
// before the first load (both together: 1.027x geomean over the 12 bench shapes).
#include <climits>

#include "../common/activations.cuh"
#include "../common/fast_divisor.hpp"
#include "../common/row_plan.hpp"
#include "../common/row_vectors.cuh"
#include "kgate/core/registry.hpp"
#include "silu_and_mul.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 128;

// Block b covers tile b % tiles of row b / tiles: vector tile·kThreads + threadIdx.x of the row's
// row_vectors output vectors.
template <int VEC>
__global__ void __launch_bounds__(kThreads) silu_and_mul_flat_kernel(SiluAndMulArgs a, int row_vectors, FastDivisor tiles) {
  using Vector = BF16Vector<VEC>;
  const unsigned row = tiles.quotient(blockIdx.x), tile = blockIdx.x - row * tiles.divisor();
  const Vector* gate = reinterpret_cast<const Vector*>(a.x + static_cast<std::size_t>(row) * 2 * a.cols);
  const Vector* up = gate + row_vectors;
  Vector* out = reinterpret_cast<Vector*>(a.out + static_cast<std::size_t>(row) * a.cols);
  const int c = static_cast<int>(tile) * kThreads + static_cast<int>(threadIdx.x);
  if (c >= row_vectors) return;
  const Vector g = gate[c];
  const Vector u = up[c];
  out[c] = silu_and_mul(kept_packed(g), kept_packed(u));
}

template <int VEC>
void launch_with(const SiluAndMulArgs& a, cudaStream_t stream) {
  const int row_vectors = a.cols / VEC;
  const unsigned long long tiles = (row_vectors + kThreads - 1) / kThreads;
  const unsigned long long blocks = tiles * static_cast<unsigned long long>(a.rows);
  if (blocks > INT_MAX) throw UnsupportedShape("more than 2^31 - 1 blocks");
  silu_and_mul_flat_kernel<VEC>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, row_vectors, FastDivisor(static_cast<std::uint32_t>(tiles)));
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
                                       "and up per thread, the row by a multiply-high rather than a division",
                        .follows = "vectorized"});

}  // namespace kgate::kernels
