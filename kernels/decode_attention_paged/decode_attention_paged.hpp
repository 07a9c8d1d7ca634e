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

  std::string name() const override { return kName; }
  std::string description() const override;
  std::vector<Shape> test_shapes() const override;
  std::vector<Shape> bench_shapes() const override;
  std::vector<TensorSpec> tensors(const Shape& shape) const override;
  double min_bytes(const Shape& shape) const override;
  double flops(const Shape& shape) const override;
  void reference(const Shape& shape, HostTensors& tensors) const override;
  Tolerance tolerance(const Shape& shape) const override;
  bool read_dominated() const override { return true; }
  PagedDecodeAttentionArgs make_args(const Shape& shape, const TensorViews& views) const override;
};

}  // namespace kgate::kernels
