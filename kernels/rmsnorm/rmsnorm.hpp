#pragma once
// RMSNorm: y[i, j] = x[i, j] / sqrt(mean_j(x[i, :]^2) + eps) * w[j]; bf16 in and out, fp32
// accumulation. Variants: naive.cu (reference), vectorized.cu, weight_first.cu.
#include <cuda_bf16.h>

#include "kgate/core/family.hpp"

namespace kgate::kernels {

struct RmsNormArgs {
  const __nv_bfloat16* x;       // [m, n]
  const __nv_bfloat16* weight;  // [n]
  __nv_bfloat16* y;             // [m, n]
  int m;
  int n;
  float eps;
};

class RmsNormFamily final : public TypedFamily<RmsNormArgs> {
 public:
  static constexpr const char* kName = "rmsnorm";
  static constexpr float kEps = 1e-5f;  // Llama-3's rms_norm_eps

  KGATE_FAMILY_OVERRIDES();
};

}  // namespace kgate::kernels
