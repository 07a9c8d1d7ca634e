#pragma once
// Rotary position embedding (RoPE), applied in place to the queries and keys of a batch of tokens,
// NeoX style ("rotate halves", as Llama-3 in Hugging Face and vLLM's is_neox_style): within a head
// of d elements, element i < d/2 is paired with element i + d/2 (not GPT-J's interleaved
// (2i, 2i+1)), and each pair is rotated by the angle pos · base^(-2i/d):
//   x[i]' = x[i]·cos − x[i + d/2]·sin,   x[i + d/2]' = x[i + d/2]·cos + x[i]·sin
// base = 500000 (Llama-3's rope_theta, no long-context frequency scaling). bf16 in and out, fp32
// arithmetic. The cos/sin cache holds the same angles precomputed for every position.
// Variants: naive.cu (reference; computes the angles itself), vectorized.cu and token_block.cu (read
// the cache).
#include <cuda_bf16.h>

#include <cstdint>

#include "kgate/core/family.hpp"
#include "kgate/base/random.hpp"

namespace kgate::kernels {

struct RopeArgs {
  __nv_bfloat16* q;               // [tokens, q_heads, head_dim]
  __nv_bfloat16* k;               // [tokens, k_heads, head_dim]
  const std::int32_t* positions;  // [tokens], each in [0, max_pos)
  const float* cos;               // [max_pos, head_dim / 2]
  const float* sin;               // [max_pos, head_dim / 2]
  int tokens;
  int q_heads;
  int k_heads;
  int head_dim;  // even
  float log2_base;

  // Head h of a token, counting the query heads first and then the key heads.
  KGATE_HD __nv_bfloat16* head(int token, int h) const {
    return h < q_heads ? q + (static_cast<std::size_t>(token) * q_heads + h) * head_dim
                       : k + (static_cast<std::size_t>(token) * k_heads + (h - q_heads)) * head_dim;
  }
};

class RopeFamily final : public TypedFamily<RopeArgs> {
 public:
  static constexpr const char* kName = "rope";
  static constexpr double kBase = 500000.0;

  KGATE_FAMILY_OVERRIDES();
  Tolerance tolerance(const Shape& shape) const override;
};

}  // namespace kgate::kernels
