#pragma once
// The gated activation of a SwiGLU MLP, as vLLM's silu_and_mul: the fused gate/up projection's
// output x [m, 2i] holds the gate in its first i columns and the up projection in the last i;
//   out[r, j] = silu(x[r, j]) · x[r, i + j],   silu(a) = a / (1 + e^-a)
// bf16 in and out, fp32 arithmetic, one rounding. Variants: naive.cu (reference), vectorized.cu, flat.cu.
#include <cuda_bf16.h>

#include "kgate/core/family.hpp"

namespace kgate::kernels {

struct SiluAndMulArgs {
  const __nv_bfloat16* x;  // [rows, 2 * cols]
  __nv_bfloat16* out;      // [rows, cols]
  int rows;
  int cols;
};

class SiluAndMulFamily final : public TypedFamily<SiluAndMulArgs> {
 public:
  static constexpr const char* kName = "silu_and_mul";

  KGATE_FAMILY_OVERRIDES();
};

}  // namespace kgate::kernels
