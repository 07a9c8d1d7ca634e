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
  KGATE_FAMILY_OVERRIDES();
};

}  // namespace external
