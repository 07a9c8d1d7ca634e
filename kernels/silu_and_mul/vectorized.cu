// SiLU-and-mul with 16-byte accesses, for i a multiple of 8 (every Llama shape): a grid-stride
// loop over at most one wave of blocks (as many as give every thread the same number of
// iterations), each thread taking kUnroll vectors of gate and up per iteration. They travel by
// asynchronous copies into shared memory, two iterations deep: the next iteration's 2·kUnroll
// copies are in flight while this one computes (128-256 bytes per thread, 100+ KB per SM). Plain
// loads would not stay in flight: ptxas issues five of eight, then sinks the rest below the
// MUFU-heavy arithmetic of the first vectors (seen in the SASS), and the old kernel with two
// vectors per thread reached 86% of the copy ceiling. Outputs are stored evict-first.
// Other widths of i (test shapes) take a plain loop over the widest vector dividing i, so every
// row's gate and up halves stay aligned.
#include "../common/activations.cuh"
#include "../common/launch_limits.hpp"
#include "../common/row_vectors.cuh"
#include "kgate/core/registry.hpp"
#include "silu_and_mul.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 128;
constexpr int kUnroll = 4;
constexpr int kStages = 2;

// One 16-byte shared-memory read (element by element, the compiler reads 2 bytes at a time).
__device__ __forceinline__ BF16Vector<8> read_staged(const BF16Vector<8>& slot) {
  const uint4 raw = *reinterpret_cast<const uint4*>(&slot);
  BF16Vector<8> v;
  memcpy(&v, &raw, sizeof(v));
  return v;
}

// Output vector v lies in row v / row_vectors; its gate vector in x is v shifted by the rows before
// it, and its up vector row_vectors after that.
__device__ __forceinline__ std::size_t gate_vector(unsigned v, unsigned row_vectors) {
  return v + static_cast<std::size_t>(v / row_vectors) * row_vectors;
}

__global__ void __launch_bounds__(kThreads) silu_and_mul_staged_kernel(SiluAndMulArgs a, unsigned row_vectors, unsigned vectors) {
  using Vector = BF16Vector<8>;
  // [stage][gate and up of vector u][thread]: a thread reads back only the slots it filled, so no
  // barrier is needed; consecutive threads take consecutive 16-byte slots.
  __shared__ Vector staged[kStages][2 * kUnroll][kThreads];
  const Vector* x = reinterpret_cast<const Vector*>(a.x);
  Vector* out = reinterpret_cast<Vector*>(a.out);
  const unsigned stride = gridDim.x * kThreads;
  const unsigned span = kUnroll * stride;  // vectors the grid covers per iteration

  // Vectors past the end are zero-filled without reading; their results are never stored.
  auto fetch = [&](int stage, unsigned from) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const unsigned v = from + u * stride;
      const bool valid = v < vectors;
      const std::size_t gate = valid ? gate_vector(v, row_vectors) : 0;
      copy_16B_async(&staged[stage][2 * u][threadIdx.x], x + gate, valid);
      copy_16B_async(&staged[stage][2 * u + 1][threadIdx.x], x + gate + row_vectors, valid);
    }
    commit_async_copies();
  };

  unsigned first = blockIdx.x * kThreads + threadIdx.x;
  fetch(0, first);
  for (int stage = 0; first < vectors; first += span, stage ^= 1) {
    // This stage's buffer was last read in the iteration before, whose stores used those values.
    fetch(stage ^ 1, first + span);
    wait_async_copies<1>();
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const unsigned v = first + u * stride;
      if (v < vectors)
        store_vector_evict_first(out + v, silu_and_mul(read_staged(staged[stage][2 * u][threadIdx.x]),
                                                       read_staged(staged[stage][2 * u + 1][threadIdx.x])));
    }
  }
  // The last fetch (past the end: zero fills only) must land before the block's shared memory is
  // handed to another block.
  wait_async_copies<0>();
}

template <int VEC>
__global__ void __launch_bounds__(kThreads) silu_and_mul_narrow_kernel(SiluAndMulArgs a, unsigned row_vectors, unsigned vectors) {
  using Vector = BF16Vector<VEC>;
  const Vector* x = reinterpret_cast<const Vector*>(a.x);
  Vector* out = reinterpret_cast<Vector*>(a.out);
  for (unsigned v = blockIdx.x * kThreads + threadIdx.x; v < vectors; v += gridDim.x * kThreads) {
    const std::size_t gate = gate_vector(v, row_vectors);
    out[v] = silu_and_mul(x[gate], x[gate + row_vectors]);
  }
}

template <auto Kernel, int VEC, int PER_THREAD>
void launch_with(const SiluAndMulArgs& a, cudaStream_t stream) {
  const unsigned long long row_vectors = a.cols / VEC;
  const unsigned long long vectors = row_vectors * a.rows;
  // first + 2·span must not wrap: keep the count well inside 32 bits.
  if (vectors > 0x7FFFFFFFull) throw UnsupportedShape("more than 2^31 vectors: 32-bit indices would overflow");
  Kernel<<<grid_stride_blocks<Kernel, kThreads>(vectors, PER_THREAD), kThreads, 0, stream>>>(a, static_cast<unsigned>(row_vectors),
                                                                                             static_cast<unsigned>(vectors));
  KGATE_CHECK_LAUNCH();
}

void launch(const SiluAndMulArgs& a, cudaStream_t stream) {
  dispatch_vector_width(a.cols, [&]<int VEC>() {
    if constexpr (VEC == 8) launch_with<silu_and_mul_staged_kernel, 8, kUnroll>(a, stream);
    else launch_with<silu_and_mul_narrow_kernel<VEC>, VEC, 1>(a, stream);
  });
}

}  // namespace

KGATE_REGISTER_VARIANT(SiluAndMulFamily, launch,
                       {.name = "vectorized",
                        .description = "16-byte vectors through a two-stage cp.async pipeline, 8 copies per thread per "
                                       "stage, evict-first stores, grid-stride over a balanced wave",
                        .follows = "naive"});

}  // namespace kgate::kernels
