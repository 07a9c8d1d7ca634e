#include "decode_attention_problem.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "decode_attention_args.hpp"
#include "kgate/base/parallel.hpp"
#include "kgate/base/random.hpp"
#include "reference_dots.hpp"

namespace kgate::kernels {

namespace {

Shape attention_shape(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t d, std::int64_t l, const char* origin) {
  return Shape({{"b", b}, {"hq", hq}, {"hkv", hkv}, {"d", d}, {"l", l}}, DType::bf16, origin);
}

Shape ragged_shape(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t d, std::int64_t l, const char* origin) {
  return Shape({{"b", b}, {"hq", hq}, {"hkv", hkv}, {"d", d}, {"l", l}, {"l_min", 1}}, DType::bf16, origin);
}

std::size_t count(std::int64_t n) { return static_cast<std::size_t>(n); }

}  // namespace

AttentionDims AttentionDims::of(const Shape& shape) {
  const std::int64_t max_len = shape.at("l");
  return {.batch = shape.at("b"),
          .q_heads = shape.at("hq"),
          .kv_heads = shape.at("hkv"),
          .head_dim = shape.at("d"),
          .max_len = max_len,
          .min_len = shape.has("l_min") ? shape.at("l_min") : max_len,
          .query_max = shape.has("q_max") ? static_cast<float>(shape.at("q_max")) : kQueryMax};
}

std::vector<Shape> decode_attention_test_shapes() {
  return {
      ragged_shape(1, 32, 8, 128, 1, "one key: the output is v"),
      ragged_shape(3, 32, 8, 128, 15, "fewer keys than one warp step of the block"),
      ragged_shape(4, 32, 8, 128, 17, "one key into a second page"),
      ragged_shape(2, 32, 8, 128, 1000, "llama3-8b heads"),
      Shape({{"b", 3}, {"hq", 32}, {"hkv", 8}, {"d", 128}, {"l", 2000}, {"l_min", 1}, {"q_max", 64}}, DType::bf16,
            "sharply peaked scores (|q| up to 64): the maximum a softmax state is taken against is raised "
            "many times within a piece"),
      ragged_shape(4, 32, 8, 128, 2047, "llama3-8b heads, ragged batch"),
      ragged_shape(1, 32, 8, 128, 2048, "a multiple of every tile, page and split"),
      ragged_shape(2, 4, 4, 128, 1000, "MHA"),
      ragged_shape(3, 8, 8, 64, 333, "MHA, d 64"),
      ragged_shape(4, 4, 1, 64, 2047, "GQA 4/1, d 64"),
      ragged_shape(3, 4, 2, 64, 129, "GQA group of 2"),
      ragged_shape(2, 8, 1, 128, 500, "GQA group of 8, as llama3-70b"),
      ragged_shape(2, 4, 2, 256, 300, "d 256"),
      ragged_shape(2, 6, 2, 80, 100, "group of 3, d 80: only variants with generic loops"),
  };
}

std::vector<Shape> decode_attention_bench_shapes() {
  std::vector<Shape> shapes;
  const std::pair<std::int64_t, std::int64_t> batches[] = {{1, 32768}, {1, 4096},   {16, 4096}, {64, 2048},
                                                           {64, 4096}, {256, 2048}, {256, 4096}};
  for (const auto& [b, l] : batches) shapes.push_back(attention_shape(b, 32, 8, 128, l, "llama3-8b GQA 32/8"));
  shapes.push_back(attention_shape(16, 32, 32, 128, 4096, "MHA 32/32"));
  return shapes;
}

std::vector<std::int64_t> sequence_lengths(const AttentionDims& dims) {
  std::vector<std::int64_t> lengths(count(dims.batch), dims.max_len);
  const auto span = static_cast<std::uint64_t>(dims.max_len - dims.min_len + 1);
  for (std::int64_t b = 1; b < dims.batch; ++b)
    lengths[count(b)] =
        dims.min_len +
        static_cast<std::int64_t>(splitmix64(static_cast<std::uint64_t>(b) ^ (static_cast<std::uint64_t>(dims.max_len) << 20)) % span);
  return lengths;
}

std::int64_t total_length(const AttentionDims& dims) {
  std::int64_t total = 0;
  for (std::int64_t l : sequence_lengths(dims)) total += l;
  return total;
}

CustomInit lengths_init(const AttentionDims& dims) {
  return [lengths = sequence_lengths(dims)](std::uint64_t, std::span<double> values) {
    std::copy(lengths.begin(), lengths.end(), values.begin());
  };
}

Distribution query_distribution(float max_magnitude) {
  return {.min_magnitude = 1.0f / 64, .max_magnitude = max_magnitude, .symmetric = true};
}

TensorSpec query_spec(const AttentionDims& d) {
  return {.name = "q",
          .dtype = DType::bf16,
          .count = count(d.batch * d.q_heads * d.head_dim),
          .access = Access::input,
          .distribution = query_distribution(d.query_max)};
}

TensorSpec lengths_spec(const AttentionDims& d) {
  return {.name = "lengths", .dtype = DType::i32, .count = count(d.batch), .access = Access::input, .custom_init = lengths_init(d)};
}

TensorSpec output_spec(const AttentionDims& d) {
  return {.name = "out", .dtype = DType::bf16, .count = count(d.batch * d.q_heads * d.head_dim), .access = Access::output};
}

std::vector<TensorSpec> split_scratch_specs(const AttentionDims& d) {
  const std::int64_t splits = max_splits(d.batch * d.kv_heads, d.max_len);
  return {
      {.name = "partial_out", .dtype = DType::fp32, .count = count(d.batch * d.q_heads * splits * d.head_dim), .access = Access::scratch},
      {.name = "partial_lse", .dtype = DType::fp32, .count = count(d.batch * d.q_heads * splits), .access = Access::scratch},
      {.name = "arrivals", .dtype = DType::i32, .count = count(d.batch * d.kv_heads), .access = Access::zeroed_scratch},
  };
}

double attention_core_bytes(const AttentionDims& d) {
  const double keys = static_cast<double>(total_length(d));
  const double qo = static_cast<double>(d.batch * d.q_heads * d.head_dim) * 2;
  return 2 * static_cast<double>(d.kv_heads * d.head_dim) * 2 * keys + 2 * qo + 4.0 * static_cast<double>(d.batch);
}

double attention_flops(const AttentionDims& d) {
  return 4.0 * static_cast<double>(d.q_heads * d.head_dim) * static_cast<double>(total_length(d));
}

// An output is a softmax-weighted average of values below 1 in magnitude. Against the exact fp64
// result a kernel's fp32 scores, exponentials and sums are off by about 1e-6 in absolute terms,
// while its rounding to bf16 is up to 2^-9 relative: the default 2 ulp covers outputs of ordinary
// size. An average of many values of random sign can cancel to almost zero, where 2 ulp shrink
// below the fp32 error; the floor 2^-16 (2 ulp of an output of 2^-10, and still 15 times the fp32
// error) covers those.
Tolerance attention_tolerance() {
  Tolerance tolerance = default_tolerance(DType::bf16);
  tolerance.abs_floor = std::ldexp(1.0, -16);
  return tolerance;
}

void attention_reference(const AttentionDims& d, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                         const std::vector<double>& lengths, const KvRowLocator& row, std::vector<double>& out) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.head_dim));
  const std::size_t dim = count(d.head_dim);
  // One (batch, query head) pair per index: independent, spread over the host's threads.
  parallel_for(count(d.batch * d.q_heads), 1, [&](std::size_t first, std::size_t end) {
    std::vector<double> scores;
    for (std::size_t pair = first; pair < end; ++pair) {
      const auto b = static_cast<std::int64_t>(pair / count(d.q_heads)), h = static_cast<std::int64_t>(pair % count(d.q_heads));
      const auto length = static_cast<std::int64_t>(lengths[count(b)]);
      const std::int64_t kv_head = h / d.group();
      scores.resize(count(length));
      dot_rows(
          &q[pair * dim], dim, count(length), [&](std::size_t j) { return &k[row(b, kv_head, static_cast<std::int64_t>(j))]; },
          scores.data());
      double top = -INFINITY;
      for (double& s : scores) top = std::max(top, s *= scale);
      double total = 0;
      for (double& s : scores) total += (s = std::exp(s - top));
      double* result = &out[pair * dim];
      std::fill(result, result + dim, 0.0);
      for (std::int64_t j = 0; j < length; ++j) {
        const double* value = &v[row(b, kv_head, j)];
        const double weight = scores[count(j)] / total;
        for (std::size_t e = 0; e < dim; ++e) result[e] += weight * value[e];
      }
    }
  });
}

AttentionArgs attention_args(const AttentionDims& d, const TensorViews& v, const AttentionTensorIndices& at) {
  return {.q = v.get<const __nv_bfloat16>(at.q),
          .lengths = v.get<const std::int32_t>(at.lengths),
          .out = v.get<__nv_bfloat16>(at.out),
          .partial_out = v.get<float>(at.partial_out),
          .partial_lse = v.get<float>(at.partial_lse),
          .arrivals = v.get<int>(at.arrivals),
          .batch = static_cast<int>(d.batch),
          .q_heads = static_cast<int>(d.q_heads),
          .kv_heads = static_cast<int>(d.kv_heads),
          .head_dim = static_cast<int>(d.head_dim),
          .max_len = static_cast<int>(d.max_len),
          .max_splits = max_splits(d.batch * d.kv_heads, d.max_len)};
}

}  // namespace kgate::kernels
