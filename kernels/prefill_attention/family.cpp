#include <algorithm>
#include <cmath>
#include <vector>

#include "../common/decode_attention_problem.hpp"  // query_distribution, attention_tolerance
#include "../common/reference_dots.hpp"
#include "kgate/base/parallel.hpp"
#include "kgate/core/registry.hpp"
#include "prefill_attention.hpp"
#include "split_plan.hpp"

namespace kgate::kernels {

namespace {

enum Tensor { kQ, kK, kV, kO, kLse, kPartialO, kPartialLse, kTileCounter, kTileSlots };

struct PrefillDims {
  std::int64_t batch, heads, kv_heads, seq_len, head_dim;
  bool causal;

  static PrefillDims of(const Shape& shape) {
    return {.batch = shape.at("b"),
            .heads = shape.at("h"),
            .kv_heads = shape.at("hkv"),
            .seq_len = shape.at("s"),
            .head_dim = shape.at("d"),
            .causal = shape.has("causal")};
  }
  std::int64_t group() const { return heads / kv_heads; }
  std::int64_t rows() const { return batch * heads * seq_len; }  // query rows, one lse each
  // (query, key) pairs one head attends: every pair, or with the causal mask the lower triangle.
  double pairs() const {
    const auto s = static_cast<double>(seq_len);
    return causal ? s * (s + 1) / 2 : s * s;
  }
  int max_splits() const {
    const int s = static_cast<int>(seq_len);
    return prefill::max_splits(batch * heads * prefill::query_tiles(s), s);
  }
};

// Dimensions b, h (query heads), hkv, s (sequence length), d (head dim), and "causal:1" for the
// causal mask (shape dimensions are positive: a shape without it is not masked).
Shape prefill_shape(std::int64_t b, std::int64_t h, std::int64_t hkv, std::int64_t s, std::int64_t d, bool causal, const char* origin) {
  std::vector<Dim> dims = {{"b", b}, {"h", h}, {"hkv", hkv}, {"s", s}, {"d", d}};
  if (causal) dims.push_back({"causal", 1});
  return Shape(std::move(dims), DType::bf16, origin);
}

std::size_t count(std::int64_t n) { return static_cast<std::size_t>(n); }

// Multiply-adds of one fp64 host reference pass (q·k and p·v, d each per pair). Above this
// (about a second on one core) the naive GPU variant is the reference.
constexpr double kMaxHostReferenceMacs = 1 << 30;

double host_reference_macs(const PrefillDims& d) {
  return static_cast<double>(d.batch * d.heads) * d.pairs() * 2 * static_cast<double>(d.head_dim);
}

double round_to_bf16(double value) { return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(value))); }

// Attention of every query row in fp64, or, with `straightforward_bf16`, as a plain bf16
// implementation computes it (FlashAttention's test reference without upcasting): the scores
// from a GEMM with fp32 accumulation and the scale applied in its epilogue, stored as bf16; the
// softmax in fp32 from those scores, its probabilities stored as bf16; their product with v
// accumulated in fp32 and stored as bf16. The log-sum-exp is the softmax's, in fp32.
// The rows are independent and spread over the host's threads (1.6 s for one case at s 1000,
// d 128 on one core, most of the correctness suite's time); each row's arithmetic is the same on
// any number of threads.
void attend(const PrefillDims& d, HostTensors& t, bool straightforward_bf16) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.head_dim));
  const std::size_t dim = count(d.head_dim);
  constexpr std::size_t kRowsPerBlock = 8;
  parallel_for(count(d.rows()), kRowsPerBlock, [&](std::size_t first_row, std::size_t end_row) {
    std::vector<double> weights(count(d.seq_len)), accumulator(dim);
    for (std::size_t row = first_row; row < end_row; ++row) {
      const auto i = static_cast<std::int64_t>(row % count(d.seq_len));
      const auto head = static_cast<std::int64_t>(row / count(d.seq_len));  // b * heads + h
      const std::int64_t b = head / d.heads, kv_head = (head % d.heads) / d.group();
      const double* keys = &t[kK][count((b * d.kv_heads + kv_head) * d.seq_len) * dim];
      const double* values = &t[kV][count((b * d.kv_heads + kv_head) * d.seq_len) * dim];
      const double* query = &t[kQ][row * dim];
      const std::size_t visible = count(d.causal ? i + 1 : d.seq_len);
      dot_rows(
          query, dim, visible, [&](std::size_t j) { return keys + j * dim; }, weights.data());
      double top = -INFINITY;
      for (std::size_t j = 0; j < visible; ++j) {
        weights[j] = straightforward_bf16 ? round_to_bf16(static_cast<float>(weights[j]) * static_cast<float>(scale)) : weights[j] * scale;
        top = std::max(top, weights[j]);
      }
      double total = 0;
      for (std::size_t j = 0; j < visible; ++j) total += (weights[j] = std::exp(weights[j] - top));
      std::fill(accumulator.begin(), accumulator.end(), 0.0);
      for (std::size_t j = 0; j < visible; ++j) {
        const double p = straightforward_bf16 ? round_to_bf16(weights[j] / total) : weights[j] / total;
        for (std::size_t e = 0; e < dim; ++e) accumulator[e] += p * values[j * dim + e];
      }
      for (std::size_t e = 0; e < dim; ++e) t[kO][row * dim + e] = straightforward_bf16 ? round_to_bf16(accumulator[e]) : accumulator[e];
      const double lse = top + std::log(total);
      t[kLse][row] = straightforward_bf16 ? static_cast<float>(lse) : lse;
    }
  });
}

}  // namespace

std::string PrefillAttentionFamily::description() const {
  return "prefill self-attention forward, q/o [b, h, s, d], k/v [b, hkv, s, d] (GQA), causal (top-left) or not, "
         "scale 1/sqrt(d); bf16 in and out, fp32 softmax, fp32 log-sum-exp per row";
}

std::vector<Shape> PrefillAttentionFamily::test_shapes() const {
  return {
      prefill_shape(2, 4, 4, 17, 64, true, "fewer keys than one tile"),
      prefill_shape(1, 4, 4, 65, 64, false, "one key into a second tile"),
      prefill_shape(1, 4, 4, 65, 128, true, "one key into a second tile"),
      prefill_shape(2, 8, 2, 127, 128, false, "GQA 4/1, one short of two tiles"),
      prefill_shape(2, 8, 2, 127, 64, true, "GQA 4/1, one short of two tiles"),
      prefill_shape(1, 32, 8, 128, 128, true, "llama3-8b heads 32/8, whole tiles"),
      prefill_shape(3, 2, 2, 128, 64, false, "MHA, batch of 3"),
      prefill_shape(1, 4, 2, 1000, 128, false, "GQA 2/1, no multiple of any tile"),
      prefill_shape(1, 4, 2, 1000, 128, true, "GQA 2/1, no multiple of any tile"),
      prefill_shape(1, 2, 2, 1000, 64, true, "MHA, d 64"),
      prefill_shape(2, 80, 80, 129, 64, true, "more work tiles than a wave of blocks"),
      prefill_shape(2, 24, 24, 520, 64, true, "more work tiles than a wave of blocks, S above 512: fa3_pingpong's blocks claim tiles"),
      prefill_shape(2, 80, 80, 129, 128, true, "more work tiles than a wave of blocks, d 128"),
      prefill_shape(2, 2, 1, 2048, 128, true, "long: naive is the reference"),
      prefill_shape(1, 4, 4, 4096, 64, false, "long: naive is the reference"),
      prefill_shape(1, 2, 1, 4096, 128, true, "long: naive is the reference"),
      prefill_shape(1, 2, 2, 8191, 128, false, "long and odd: naive is the reference"),
      prefill_shape(1, 2, 1, 16384, 128, true, "the longest benchmark length"),
      prefill_shape(1, 1, 1, 16384, 64, false, "the longest benchmark length, d 64"),
  };
}

// FlashAttention-3 paper's convention: batch × seq_len = 16K tokens, hidden size 2048 (heads =
// 2048 / d); plus llama3-8b's GQA 32/8 heads at d 128.
std::vector<Shape> PrefillAttentionFamily::bench_shapes() const {
  constexpr std::int64_t kTokens = 16384, kHidden = 2048;
  std::vector<Shape> shapes;
  for (const std::int64_t d : {64, 128})
    for (const bool causal : {false, true})
      for (const std::int64_t s : {512, 1024, 2048, 4096, 8192, 16384})
        shapes.push_back(prefill_shape(kTokens / s, kHidden / d, kHidden / d, s, d, causal, "FlashAttention-3 paper, 16K tokens"));
  shapes.push_back(prefill_shape(kTokens / 4096, 32, 8, 4096, 128, false, "llama3-8b GQA 32/8, 16K tokens"));
  shapes.push_back(prefill_shape(kTokens / 4096, 32, 8, 4096, 128, true, "llama3-8b GQA 32/8, 16K tokens"));
  shapes.push_back(prefill_shape(kTokens / 16384, 32, 8, 16384, 128, true, "llama3-8b GQA 32/8, 16K tokens"));
  return shapes;
}

std::vector<TensorSpec> PrefillAttentionFamily::tensors(const Shape& shape) const {
  const PrefillDims d = PrefillDims::of(shape);
  const std::size_t query_elements = count(d.rows() * d.head_dim);
  const std::size_t kv_elements = count(d.batch * d.kv_heads * d.seq_len * d.head_dim);
  // One split writes the output directly: the scratch is only for more.
  const int splits = d.max_splits();
  const std::size_t scratch_splits = splits > 1 ? count(splits) : 0;
  // Every variant computes the log-sum-exp in fp32 from fp32 scores, whatever it does with the
  // probabilities afterwards, so fp32's default bound (64 ulp) applies, with a floor for rows
  // whose lse is near zero (causal row 0 has one key: its lse is that score). Being its own, it
  // is not widened by the bf16 baseline, whose bf16 scores are off by ~1e-3 in lse: enough to
  // hide a dropped or extra key among a thousand.
  const Tolerance lse_tolerance{.rel_l2 = 1e-5, .max_ulps = 64, .abs_floor = 1e-5};
  return {
      {.name = "q", .dtype = DType::bf16, .count = query_elements, .access = Access::input, .distribution = query_distribution()},
      {.name = "k", .dtype = DType::bf16, .count = kv_elements, .access = Access::input},
      {.name = "v", .dtype = DType::bf16, .count = kv_elements, .access = Access::input},
      {.name = "o", .dtype = DType::bf16, .count = query_elements, .access = Access::output},
      {.name = "lse", .dtype = DType::fp32, .count = count(d.rows()), .access = Access::output, .tolerance = lse_tolerance},
      {.name = "partial_o", .dtype = DType::fp32, .count = scratch_splits * query_elements, .access = Access::scratch},
      {.name = "partial_lse", .dtype = DType::fp32, .count = scratch_splits * count(d.rows()), .access = Access::scratch},
      {.name = "tile_counter", .dtype = DType::i32, .count = 2, .access = Access::zeroed_scratch},
      {.name = "tile_slots", .dtype = DType::i32, .count = std::size_t{kMaxClaimingBlocks} * 2, .access = Access::scratch},
  };
}

// q read and o written once, k and v read once (each KV head once, however many query heads share
// it), the fp32 lse written once.
double PrefillAttentionFamily::min_bytes(const Shape& shape) const {
  const PrefillDims d = PrefillDims::of(shape);
  const auto query = static_cast<double>(d.rows() * d.head_dim);
  const auto kv = static_cast<double>(d.batch * d.kv_heads * d.seq_len * d.head_dim);
  return 2 * query * 2 + 2 * kv * 2 + 4 * static_cast<double>(d.rows());
}

// The FlashAttention convention: 4·b·h·s²·d (q·kᵀ and p·v, one multiply-add = 2 FLOPs), exactly
// half with the causal mask; the softmax is not counted.
double PrefillAttentionFamily::flops(const Shape& shape) const {
  const PrefillDims d = PrefillDims::of(shape);
  const double full =
      4.0 * static_cast<double>(d.batch * d.heads * d.head_dim) * static_cast<double>(d.seq_len) * static_cast<double>(d.seq_len);
  return d.causal ? full / 2 : full;
}

void PrefillAttentionFamily::reference(const Shape& shape, HostTensors& t) const {
  attend(PrefillDims::of(shape), t, /*straightforward_bf16=*/false);
}

bool PrefillAttentionFamily::baseline(const Shape& shape, HostTensors& t) const {
  attend(PrefillDims::of(shape), t, /*straightforward_bf16=*/true);
  return true;
}

std::optional<std::string> PrefillAttentionFamily::device_reference(const Shape& shape) const {
  if (host_reference_macs(PrefillDims::of(shape)) <= kMaxHostReferenceMacs) return std::nullopt;
  return "naive";
}

// Against the fp64 host reference, this is the floor under FlashAttention's rule (twice the
// straightforward bf16 implementation's error is added): decode attention's bound, 2 ulp with a
// floor for outputs that cancel to almost zero.
// Against naive's outputs (long sequences) no baseline can be computed, and a variant that, as
// tensor-core kernels do, rounds the probabilities to bf16 before p·v moves an output by up to
// 2^-9 · Σ p·|v| ≤ 2^-9 (|v| < 1) where the output itself may cancel to far less: the floor is
// that bound. The lse, which a missing, extra or mis-scaled key shifts, keeps its fp32 bound.
Tolerance PrefillAttentionFamily::tolerance(const Shape& shape) const {
  Tolerance tolerance = attention_tolerance();
  if (device_reference(shape)) tolerance.abs_floor = std::ldexp(1.0, -9);
  return tolerance;
}

PrefillAttentionArgs PrefillAttentionFamily::make_args(const Shape& shape, const TensorViews& v) const {
  const PrefillDims d = PrefillDims::of(shape);
  return {.q = v.get<const __nv_bfloat16>(kQ),
          .k = v.get<const __nv_bfloat16>(kK),
          .v = v.get<const __nv_bfloat16>(kV),
          .o = v.get<__nv_bfloat16>(kO),
          .lse = v.get<float>(kLse),
          .partial_o = v.get<float>(kPartialO),
          .partial_lse = v.get<float>(kPartialLse),
          .max_splits = d.max_splits(),
          .batch = static_cast<int>(d.batch),
          .heads = static_cast<int>(d.heads),
          .kv_heads = static_cast<int>(d.kv_heads),
          .seq_len = static_cast<int>(d.seq_len),
          .head_dim = static_cast<int>(d.head_dim),
          .causal = d.causal,
          .scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.head_dim))),
          .tile_counter = v.get<int>(kTileCounter),
          .tile_slots = v.get<int>(kTileSlots)};
}

KGATE_REGISTER_FAMILY(PrefillAttentionFamily);

}  // namespace kgate::kernels
