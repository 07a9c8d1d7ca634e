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

  std::string name() const override { return kName; }
  std::string description() const override;
  std::vector<Shape> test_shapes() const override;
  std::vector<Shape> bench_shapes() const override;
  std::vector<TensorSpec> tensors(const Shape& shape) const override;
  double min_bytes(const Shape& shape) const override;
  double flops(const Shape& shape) const override;
  void reference(const Shape& shape, HostTensors& tensors) const override;
  RmsNormArgs make_args(const Shape& shape, const TensorViews& views) const override;
};

}  // namespace kgate::kernels
