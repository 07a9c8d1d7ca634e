#pragma once
// Decode attention over a paged KV cache (vLLM's layout): k and v as pages of 16 keys,
// [num_pages, kv_heads, 16, head_dim], found through a per-sequence page table [batch, max_pages];
// otherwise the problem of decode_attention (../common/decode_attention_problem.hpp), with the same
// shapes and kernels. The test inputs scatter each sequence over a random permutation of the pages.
// Variants: naive.cu (reference), splitk.cu.
#include "../common/decode_attention_args.hpp"
#include "kgate/core/family.hpp"

namespace kgate::kernels {

struct PagedDecodeAttentionArgs {
  AttentionArgs attention;
  PagedKv kv;
};

class PagedDecodeAttentionFamily final : public TypedFamily<PagedDecodeAttentionArgs> {
 public:
  static constexpr const char* kName = "decode_attention_paged";

  // Pages per sequence (enough for max_len keys), and pages in the cache (every sequence's).
  static std::int64_t max_pages(const Shape& shape);
  static std::int64_t num_pages(const Shape& shape);

  KGATE_FAMILY_OVERRIDES();
  Tolerance tolerance(const Shape& shape) const override;
  bool read_dominated() const override { return true; }
};

}  // namespace kgate::kernels
