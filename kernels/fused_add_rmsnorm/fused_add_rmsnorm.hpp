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

  std::string name() const override { return kName; }
  std::string description() const override;
  std::vector<Shape> test_shapes() const override;
  std::vector<Shape> bench_shapes() const override;
  std::vector<TensorSpec> tensors(const Shape& shape) const override;
  double min_bytes(const Shape& shape) const override;
  double flops(const Shape& shape) const override;
  void reference(const Shape& shape, HostTensors& tensors) const override;
  FusedAddRmsNormArgs make_args(const Shape& shape, const TensorViews& views) const override;
};

}  // namespace kgate::kernels
