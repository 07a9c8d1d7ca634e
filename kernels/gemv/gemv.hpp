#pragma once
// Skinny matrix multiplication for decode: y[m, n] = Σ_k x[m, k] · W[n, k], i.e. y = x·Wᵀ with
// every matrix row-major and W in the [out_features, in_features] layout of a linear layer.
// m is the decode batch (1..16). bf16 in and out, fp32 accumulation. The cublas variant is a
// general GEMM and takes any m: the prefill workload (workloads/prefill.cpp) runs its linear
// layers, m = prompt tokens, through it.
// Variants: naive.cu (reference), cublas.cu (vendor), vectorized.cu, streamed.cu (sm_90a).
#include <cuda_bf16.h>

#include "kgate/core/family.hpp"

namespace kgate::kernels {

struct GemvArgs {
  const __nv_bfloat16* x;  // [m, k]
  const __nv_bfloat16* w;  // [n, k]
  __nv_bfloat16* y;        // [m, n]
  int m;
  int n;
  int k;
};

class GemvFamily final : public TypedFamily<GemvArgs> {
 public:
  static constexpr const char* kName = "gemv";

  KGATE_FAMILY_OVERRIDES();
  Tolerance tolerance(const Shape& shape) const override;
  bool read_dominated() const override { return true; }
};

}  // namespace kgate::kernels
