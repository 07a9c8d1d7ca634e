// SiLU-and-mul with 16-byte accesses (the widest vector dividing i, so every row's gate and up
// halves stay aligned): a grid-stride loop over one wave of blocks, each thread taking kUnroll
// vectors per iteration and issuing all of their loads (gate and up) before the first use.
#include "../common/activations.cuh"
#include "../common/launch_limits.hpp"
#include "../common/row_vectors.cuh"
#include "kgate/registry.hpp"
#include "silu_and_mul.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 2;

template <int VEC>
__global__ void __launch_bounds__(kThreads) silu_and_mul_vectorized_kernel(SiluAndMulArgs a, unsigned row_vectors,
                                                                          unsigned vectors) {
  const unsigned stride = gridDim.x * kThreads;
  for (unsigned first = blockIdx.x * kThreads + threadIdx.x; first < vectors; first += kUnroll * stride) {
    float gate[kUnroll][VEC], up[kUnroll][VEC];
    __nv_bfloat16* out[kUnroll];
    int column[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const unsigned v = first + u * stride;
      if (v < vectors) {
        const unsigned row = v / row_vectors;
        column[u] = static_cast<int>(v - row * row_vectors);
        const __nv_bfloat16* x = a.x + static_cast<std::size_t>(row) * 2 * a.cols;
        out[u] = a.out + static_cast<std::size_t>(row) * a.cols;
        load_floats<VEC>(x, column[u], gate[u]);
        load_floats<VEC>(x + a.cols, column[u], up[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (first + u * stride < vectors) {
        float result[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) result[e] = silu(gate[u][e]) * up[u][e];
        store_floats<VEC>(out[u], column[u], result);
      }
    }
  }
}

template <int VEC>
void launch_with(const SiluAndMulArgs& a, cudaStream_t stream) {
  const unsigned long long row_vectors = a.cols / VEC;
  const unsigned long long vectors = row_vectors * a.rows;
  // first + kUnroll·stride must not wrap: keep the count well inside 32 bits.
  if (vectors > 0x7FFFFFFFull) throw UnsupportedShape("more than 2^31 vectors: 32-bit indices would overflow");
  constexpr auto kernel = silu_and_mul_vectorized_kernel<VEC>;
  kernel<<<grid_stride_blocks<kernel, kThreads>(vectors, kUnroll), kThreads, 0, stream>>>(
      a, static_cast<unsigned>(row_vectors), static_cast<unsigned>(vectors));
  KGATE_CHECK_LAUNCH();
}

void launch(const SiluAndMulArgs& a, cudaStream_t stream) {
  if (a.cols % 8 == 0) return launch_with<8>(a, stream);
  if (a.cols % 4 == 0) return launch_with<4>(a, stream);
  if (a.cols % 2 == 0) return launch_with<2>(a, stream);
  launch_with<1>(a, stream);
}

}  // namespace

KGATE_REGISTER_VARIANT(SiluAndMulFamily, launch,
                       {.name = "vectorized",
                        .description = "16-byte loads and stores, 2 vectors per thread in flight, grid-stride over one wave"});

}  // namespace kgate::kernels
