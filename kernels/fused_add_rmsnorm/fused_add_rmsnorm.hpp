#pragma once
// Fused residual add + RMSNorm, in place as in vLLM and FlashInfer:
//   residual <- bf16(x + residual);  x <- rmsnorm(residual) * w
// The normalization reads the rounded residual, exactly what an unfused add followed by RMSNorm
// would see. Variants: naive.cu (reference), vectorized.cu, weight_first.cu.
#include <cuda_bf16.h>

#include "kgate/core/family.hpp"

namespace kgate::kernels {

struct FusedAddRmsNormArgs {
  __nv_bfloat16* x;             // [m, n] in: the layer's output; out: the normalized residual
  __nv_bfloat16* residual;      // [m, n] in: the residual stream; out: residual + x
  const __nv_bfloat16* weight;  // [n]
  int m;
  int n;
  float eps;
};

class FusedAddRmsNormFamily final : public TypedFamily<FusedAddRmsNormArgs> {
 public:
  static constexpr const char* kName = "fused_add_rmsnorm";
  static constexpr float kEps = 1e-5f;

  KGATE_FAMILY_OVERRIDES();
};

}  // namespace kgate::kernels
