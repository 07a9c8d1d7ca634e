#pragma once
// out = alpha * x + y over n fp32 values: this repository's one family, declared once for kgate
// (shapes, buffers, bytes and FLOP models, an fp64 reference). Variants: naive.cu (the reference),
// vectorized.cu.
#include "kgate/core/family.hpp"

namespace external {

struct ScaleAddArgs {
  const float* x;
  const float* y;
  float* out;
  float alpha;
  long long n;
};

class ScaleAddFamily final : public kgate::TypedFamily<ScaleAddArgs> {
 public:
  static constexpr const char* kName = "scale_add";
  static constexpr float kAlpha = 1.5f;
  std::string name() const override { return kName; }
  std::string description() const override { return "out = alpha * x + y over n fp32 values"; }
  std::vector<kgate::Shape> test_shapes() const override;
  std::vector<kgate::Shape> bench_shapes() const override;
  std::vector<kgate::TensorSpec> tensors(const kgate::Shape& shape) const override;
  double min_bytes(const kgate::Shape& shape) const override;
  double flops(const kgate::Shape& shape) const override;
  void reference(const kgate::Shape& shape, kgate::HostTensors& tensors) const override;
  ScaleAddArgs make_args(const kgate::Shape& shape, const kgate::TensorViews& views) const override;
};

}  // namespace external
