#include <limits>

#include "../common/decode_attention_problem.hpp"
#include "decode_attention.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {

namespace {

enum Tensor { kQ, kK, kV, kLengths, kOut, kPartialOut, kPartialLse, kArrivals };

// A ragged batch leaves each sequence's cache rows past its length unused. There they hold NaN,
// as a cache's unwritten rows may: a kernel that reads them (the split kernel does, to start
// before it knows the length) fails unless none reaches the output. The rows in use draw the
// values the harness draws for any input.
CustomInit cache_with_nan_past_lengths(const AttentionDims& d) {
  return [d, lengths = sequence_lengths(d)](std::uint64_t seed, std::span<double> values) {
    // Row by row ([b, hkv, l] rows of d values), not element by element: no divisions per value.
    const auto row = static_cast<std::size_t>(d.head_dim);
    std::size_t i = 0;
    for (std::int64_t b = 0; b < d.batch; ++b)
      for (std::int64_t h = 0; h < d.kv_heads; ++h)
        for (std::int64_t j = 0; j < d.max_len; ++j)
          for (std::size_t end = i + row; i < end; ++i)
            values[i] = j < lengths[static_cast<std::size_t>(b)] ? random_value(seed, i, Distribution{})
                                                                 : std::numeric_limits<double>::quiet_NaN();
  };
}

}  // namespace

std::string DecodeAttentionFamily::description() const {
  return "decode attention, one query per sequence, contiguous KV cache [b, hkv, l, d], ragged lengths, GQA, "
         "scale 1/sqrt(d); bf16, fp32 softmax";
}

std::vector<Shape> DecodeAttentionFamily::test_shapes() const { return decode_attention_test_shapes(); }
std::vector<Shape> DecodeAttentionFamily::bench_shapes() const { return decode_attention_bench_shapes(); }

std::vector<TensorSpec> DecodeAttentionFamily::tensors(const Shape& shape) const {
  const AttentionDims d = AttentionDims::of(shape);
  const auto cache = static_cast<std::size_t>(d.batch * d.kv_heads * d.max_len * d.head_dim);
  std::vector<TensorSpec> specs = {
      query_spec(d),
      {.name = "k_cache", .dtype = DType::bf16, .count = cache, .access = Access::input},
      {.name = "v_cache", .dtype = DType::bf16, .count = cache, .access = Access::input},
      lengths_spec(d),
      output_spec(d),
  };
  // Only ragged shapes have unused rows (the test shapes; every bench shape's sequences are full,
  // and their caches keep the harness's device-side fill).
  if (d.min_len < d.max_len)
    for (const Tensor t : {kK, kV}) specs[t].custom_init = cache_with_nan_past_lengths(d);
  for (TensorSpec& scratch : split_scratch_specs(d)) specs.push_back(std::move(scratch));
  return specs;
}

double DecodeAttentionFamily::min_bytes(const Shape& shape) const { return attention_core_bytes(AttentionDims::of(shape)); }
double DecodeAttentionFamily::flops(const Shape& shape) const { return attention_flops(AttentionDims::of(shape)); }
Tolerance DecodeAttentionFamily::tolerance(const Shape&) const { return attention_tolerance(); }

void DecodeAttentionFamily::reference(const Shape& shape, HostTensors& t) const {
  const AttentionDims d = AttentionDims::of(shape);
  const ContiguousKv layout{.k = nullptr,
                            .v = nullptr,
                            .kv_heads = static_cast<int>(d.kv_heads),
                            .max_len = static_cast<int>(d.max_len),
                            .head_dim = static_cast<int>(d.head_dim)};
  attention_reference(
      d, t[kQ], t[kK], t[kV], t[kLengths],
      [&](std::int64_t b, std::int64_t h, std::int64_t j) {
        return layout.cursor(static_cast<int>(b), static_cast<int>(h)).row(static_cast<int>(j));
      },
      t[kOut]);
}

DecodeAttentionArgs DecodeAttentionFamily::make_args(const Shape& shape, const TensorViews& v) const {
  const AttentionDims d = AttentionDims::of(shape);
  return {.attention = attention_args(d, v, {kQ, kLengths, kOut, kPartialOut, kPartialLse, kArrivals}),
          .kv = {.k = v.get<const __nv_bfloat16>(kK),
                 .v = v.get<const __nv_bfloat16>(kV),
                 .kv_heads = static_cast<int>(d.kv_heads),
                 .max_len = static_cast<int>(d.max_len),
                 .head_dim = static_cast<int>(d.head_dim)}};
}

KGATE_REGISTER_FAMILY(DecodeAttentionFamily);

}  // namespace kgate::kernels
