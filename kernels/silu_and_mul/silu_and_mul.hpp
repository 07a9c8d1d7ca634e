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

  std::string name() const override { return kName; }
  std::string description() const override;
  std::vector<Shape> test_shapes() const override;
  std::vector<Shape> bench_shapes() const override;
  std::vector<TensorSpec> tensors(const Shape& shape) const override;
  double min_bytes(const Shape& shape) const override;
  double flops(const Shape& shape) const override;
  void reference(const Shape& shape, HostTensors& tensors) const override;
  SiluAndMulArgs make_args(const Shape& shape, const TensorViews& views) const override;
};

}  // namespace kgate::kernels
