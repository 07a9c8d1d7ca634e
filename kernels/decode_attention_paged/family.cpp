#include <numeric>

#include "../common/decode_attention_problem.hpp"
#include "decode_attention_paged.hpp"
#include "kgate/base/random.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {

namespace {

enum Tensor { kQ, kK, kV, kPageTable, kLengths, kOut, kPartialOut, kPartialLse, kArrivals };

// Every page of the cache, in a random order (Fisher-Yates driven by the seed): consecutive pages
// of a sequence are never neighbours in memory, as in a long-running server.
void scattered_pages(std::uint64_t seed, std::span<double> table) {
  std::vector<std::int64_t> pages(table.size());
  std::iota(pages.begin(), pages.end(), 0);
  for (std::size_t i = pages.size(); i > 1; --i) std::swap(pages[i - 1], pages[splitmix64(seed ^ splitmix64(i)) % i]);
  std::copy(pages.begin(), pages.end(), table.begin());
}

}  // namespace

std::int64_t PagedDecodeAttentionFamily::max_pages(const Shape& shape) { return (shape.at("l") + kPageSize - 1) / kPageSize; }

std::int64_t PagedDecodeAttentionFamily::num_pages(const Shape& shape) { return shape.at("b") * max_pages(shape); }

std::string PagedDecodeAttentionFamily::description() const {
  return "decode attention, one query per sequence, paged KV cache (16-key pages [pages, hkv, 16, d], scattered page "
         "table), ragged lengths, GQA; bf16, fp32 softmax";
}

std::vector<Shape> PagedDecodeAttentionFamily::test_shapes() const { return decode_attention_test_shapes(); }
std::vector<Shape> PagedDecodeAttentionFamily::bench_shapes() const { return decode_attention_bench_shapes(); }

std::vector<TensorSpec> PagedDecodeAttentionFamily::tensors(const Shape& shape) const {
  const AttentionDims d = AttentionDims::of(shape);
  const auto cache = static_cast<std::size_t>(num_pages(shape) * d.kv_heads * kPageSize * d.head_dim);
  std::vector<TensorSpec> specs = {
      query_spec(d),
      {.name = "k_pages", .dtype = DType::bf16, .count = cache, .access = Access::input},
      {.name = "v_pages", .dtype = DType::bf16, .count = cache, .access = Access::input},
      {.name = "page_table",
       .dtype = DType::i32,
       .count = static_cast<std::size_t>(num_pages(shape)),
       .access = Access::input,
       .custom_init = scattered_pages},
      lengths_spec(d),
      output_spec(d),
  };
  for (TensorSpec& scratch : split_scratch_specs(d)) specs.push_back(std::move(scratch));
  return specs;
}

// The contiguous problem's bytes plus the page-table entries a sequence's keys occupy.
double PagedDecodeAttentionFamily::min_bytes(const Shape& shape) const {
  const AttentionDims d = AttentionDims::of(shape);
  double entries = 0;
  for (std::int64_t length : sequence_lengths(d)) entries += static_cast<double>((length + kPageSize - 1) / kPageSize);
  return attention_core_bytes(d) + 4 * entries;
}

double PagedDecodeAttentionFamily::flops(const Shape& shape) const { return attention_flops(AttentionDims::of(shape)); }
Tolerance PagedDecodeAttentionFamily::tolerance(const Shape&) const { return attention_tolerance(); }

void PagedDecodeAttentionFamily::reference(const Shape& shape, HostTensors& t) const {
  const AttentionDims d = AttentionDims::of(shape);
  const std::int64_t pages_per_sequence = max_pages(shape);
  const std::vector<double>& table = t[kPageTable];
  attention_reference(
      d, t[kQ], t[kK], t[kV], t[kLengths],
      [&](std::int64_t b, std::int64_t h, std::int64_t j) {
        const auto page = static_cast<std::int64_t>(table[static_cast<std::size_t>(b * pages_per_sequence + j / kPageSize)]);
        return static_cast<std::size_t>(((page * d.kv_heads + h) * kPageSize + j % kPageSize) * d.head_dim);
      },
      t[kOut]);
}

PagedDecodeAttentionArgs PagedDecodeAttentionFamily::make_args(const Shape& shape, const TensorViews& v) const {
  const AttentionDims d = AttentionDims::of(shape);
  return {.attention = attention_args(d, v, {kQ, kLengths, kOut, kPartialOut, kPartialLse, kArrivals}),
          .kv = {.k = v.get<const __nv_bfloat16>(kK),
                 .v = v.get<const __nv_bfloat16>(kV),
                 .page_table = v.get<const std::int32_t>(kPageTable),
                 .kv_heads = static_cast<int>(d.kv_heads),
                 .max_pages = static_cast<int>(max_pages(shape)),
                 .head_dim = static_cast<int>(d.head_dim)}};
}

KGATE_REGISTER_FAMILY(PagedDecodeAttentionFamily);

}  // namespace kgate::kernels
