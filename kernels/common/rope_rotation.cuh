#pragma once
// The pieces of the vectorized rotary-embedding kernels that do not depend on how work is laid
// out: where a head lies, and the rotation of one chunk of VEC pairs.
#include "../rope/rope.hpp"
#include "row_vectors.cuh"

namespace kgate::kernels {

// Head h of a token (query heads first, then key heads), with selects instead of the branches
// RopeArgs::head compiles to, so the loads of several heads stay one straight-line block.
__device__ __forceinline__ __nv_bfloat16* head_of(const RopeArgs& a, int token, int h) {
  const bool query = h < a.q_heads;
  __nv_bfloat16* base = query ? a.q : a.k;
  const int heads = query ? a.q_heads : a.k_heads;
  const int index = query ? h : h - a.q_heads;
  return base + (static_cast<std::size_t>(token) * heads + index) * a.head_dim;
}

// x holds VEC elements of a head's first half and y the same elements of its second half; each
// pair (x[e], y[e]) is rotated by the angle whose cosine and sine are c[e] and s[e].
template <int VEC>
__device__ __forceinline__ void rotate_pairs(const BF16Vector<VEC>& x, const BF16Vector<VEC>& y, const float (&c)[VEC],
                                             const float (&s)[VEC], BF16Vector<VEC>& rotated_x, BF16Vector<VEC>& rotated_y) {
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    const float u = __bfloat162float(x.values[e]), v = __bfloat162float(y.values[e]);
    rotated_x.values[e] = __float2bfloat16_rn(u * c[e] - v * s[e]);
    rotated_y.values[e] = __float2bfloat16_rn(v * c[e] + u * s[e]);
  }
}

}  // namespace kgate::kernels
