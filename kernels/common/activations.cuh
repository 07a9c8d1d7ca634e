#pragma once
#include <cuda_runtime.h>

#include "packed.cuh"
#include "row_vectors.cuh"

namespace kgate::kernels {

// SiLU (swish), x·sigmoid(x), in fp32. __expf and the approximate reciprocal are each within a few
// fp32 ulp, far below a bf16 rounding; for x < -88 the exponential is +inf, its reciprocal 0 and
// the result the correct -0.
__device__ __forceinline__ float silu(float x) { return x * fast_reciprocal(1.0f + __expf(-x)); }

// silu(gate) · up for VEC packed values, rounded once to bf16.
template <int VEC>
__device__ __forceinline__ BF16Vector<VEC> silu_and_mul(const BF16Vector<VEC>& gate, const BF16Vector<VEC>& up) {
  BF16Vector<VEC> out;
#pragma unroll
  for (int e = 0; e < VEC; ++e)
    out.values[e] = __float2bfloat16_rn(silu(__bfloat162float(gate.values[e])) * __bfloat162float(up.values[e]));
  return out;
}

}  // namespace kgate::kernels
