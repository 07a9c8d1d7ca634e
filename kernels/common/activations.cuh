#pragma once
#include <cuda_runtime.h>

#include "packed.cuh"

namespace kgate::kernels {

// SiLU (swish), x·sigmoid(x), in fp32. __expf and the approximate reciprocal are each within a few
// fp32 ulp, far below a bf16 rounding; for x < -88 the exponential is +inf, its reciprocal 0 and
// the result the correct -0.
__device__ __forceinline__ float silu(float x) { return x * fast_reciprocal(1.0f + __expf(-x)); }

}  // namespace kgate::kernels
