#pragma once
// Decode attention over a contiguous KV cache: one query token per sequence, k and v as
// [batch, kv_heads, max_len, head_dim] with per-sequence lengths, GQA, scale 1/sqrt(d); bf16 in
// and out, fp32 softmax and accumulation. The problem is stated in
// ../common/decode_attention_problem.hpp and shared with decode_attention_paged.
// Variants: naive.cu (reference), splitk.cu.
#include "../common/decode_attention_args.hpp"
#include "kgate/core/family.hpp"

namespace kgate::kernels {

struct DecodeAttentionArgs {
  AttentionArgs attention;
  ContiguousKv kv;
};

class DecodeAttentionFamily final : public TypedFamily<DecodeAttentionArgs> {
 public:
  static constexpr const char* kName = "decode_attention";

  KGATE_FAMILY_OVERRIDES();
  Tolerance tolerance(const Shape& shape) const override;
  bool read_dominated() const override { return true; }
};

}  // namespace kgate::kernels
