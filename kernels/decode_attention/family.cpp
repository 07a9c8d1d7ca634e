#include "../common/decode_attention_problem.hpp"
#include "decode_attention.hpp"
#include "kgate/registry.hpp"

namespace kgate::kernels {

namespace {
enum Tensor { kQ, kK, kV, kLengths, kOut, kPartialOut, kPartialLse };
}

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
  attention_reference(d, t[kQ], t[kK], t[kV], t[kLengths],
                      [&](std::int64_t b, std::int64_t h, std::int64_t j) {
                        return layout.cursor(static_cast<int>(b), static_cast<int>(h)).row(static_cast<int>(j));
                      },
                      t[kOut]);
}

DecodeAttentionArgs DecodeAttentionFamily::make_args(const Shape& shape, const TensorViews& v) const {
  const AttentionDims d = AttentionDims::of(shape);
  return {.attention = attention_args(d, v, {kQ, kLengths, kOut, kPartialOut, kPartialLse}),
          .kv = {.k = v.get<const __nv_bfloat16>(kK),
                 .v = v.get<const __nv_bfloat16>(kV),
                 .kv_heads = static_cast<int>(d.kv_heads),
                 .max_len = static_cast<int>(d.max_len),
                 .head_dim = static_cast<int>(d.head_dim)}};
}

KGATE_REGISTER_FAMILY(DecodeAttentionFamily);

}  // namespace kgate::kernels
