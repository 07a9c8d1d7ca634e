#pragma once
#include <cuda_runtime.h>

namespace kgate::kernels {

// SiLU (swish), x·sigmoid(x), in fp32. __expf is a few ulp off expf, far below a bf16 rounding;
// for x < -88 it gives +inf and the quotient the correct -0.
__device__ __forceinline__ float silu(float x) { return x / (1.0f + __expf(-x)); }

}  // namespace kgate::kernels
