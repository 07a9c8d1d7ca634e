#include <cmath>
#include <string>
#include <vector>

#include "kgate/base/parallel.hpp"
#include "kgate/core/registry.hpp"
#include "rope.hpp"

namespace kgate::kernels {

namespace {

enum Tensor { kQ, kK, kPositions, kCos, kSin };

Shape tokens(std::int64_t t, std::int64_t hq, std::int64_t hk, std::int64_t d, std::int64_t max_pos, const char* origin) {
  return Shape({{"t", t}, {"hq", hq}, {"hk", hk}, {"d", d}, {"max_pos", max_pos}}, DType::bf16, origin);
}

double angle(double position, std::int64_t i, std::int64_t head_dim) {
  return position * std::pow(RopeFamily::kBase, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
}

// The cache as a model precomputes it: row p holds cos (or sin) of p's angle for every pair. The
// same for every seed and shape of one head_dim, so generated once per process (shared_init_key):
// 8M values at 128K positions, about 0.2 s each on one core, and once in each of a suite's
// processes: on a 4x H200 host a shard's first RoPE benchmark took 1.5-1.9 s more than the
// one-GPU durations the shards are balanced by say. So the rows are spread over the host's
// threads (each value depends on its position alone: the same table whatever the thread count).
CustomInit angle_table(std::int64_t head_dim, double (*function)(double)) {
  return [head_dim, function](std::uint64_t, std::span<double> values) {
    const auto half = static_cast<std::size_t>(head_dim / 2);
    std::vector<double> frequency(half);
    for (std::size_t i = 0; i < half; ++i) frequency[i] = angle(1.0, static_cast<std::int64_t>(i), head_dim);
    constexpr std::size_t kRowsPerBlock = 4096;
    parallel_for(values.size() / half, kRowsPerBlock, [&](std::size_t first, std::size_t end) {
      for (std::size_t position = first; position < end; ++position)
        for (std::size_t i = 0; i < half; ++i) values[position * half + i] = function(static_cast<double>(position) * frequency[i]);
    });
  };
}

}  // namespace

std::string RopeFamily::description() const {
  return "rotary embedding (NeoX halves, base 500000) in place on q [t, hq, d] and k [t, hk, d], per-token positions, "
         "fp32 cos/sin cache [max_pos, d/2]; bf16, fp32 math";
}

std::vector<Shape> RopeFamily::test_shapes() const {
  return {
      tokens(1, 32, 8, 128, 4096, "llama3-8b heads, one decode token"),
      tokens(7, 64, 8, 128, 4096, "llama3-70b heads"),
      tokens(5, 4, 1, 128, 1, "every position 0: the identity"),
      tokens(33, 3, 2, 64, 2048, "d 64; 5 heads, a group of 4 spanning q and k"),
      tokens(257, 8, 8, 128, 4096, "257 tokens: a partial last block"),
      tokens(2100, 64, 8, 128, 4096, "tokens for many waves: one block of 576 threads per token"),
      tokens(4, 2, 1, 72, 512, "d/2 = 36: 4-wide vectors"),
      tokens(3, 2, 2, 68, 512, "d/2 = 34: 2-wide vectors"),
      tokens(3, 1, 1, 66, 512, "d/2 = 33: scalar path"),
      tokens(2, 2, 1, 2, 64, "one pair per head"),
  };
}

std::vector<Shape> RopeFamily::bench_shapes() const {
  // Positions up to Llama-3.1's 128K context, so that the cache rows a batch reads are mostly
  // distinct, as in serving.
  std::vector<Shape> shapes;
  for (const auto& [hq, model] : {std::pair<std::int64_t, const char*>{32, "llama3-8b"}, {64, "llama3-70b"}})
    for (std::int64_t t : {1, 16, 64, 256, 4096, 32768}) shapes.push_back(tokens(t, hq, 8, 128, 131072, model));
  return shapes;
}

std::vector<TensorSpec> RopeFamily::tensors(const Shape& shape) const {
  const std::int64_t t = shape.at("t"), hq = shape.at("hq"), hk = shape.at("hk"), d = shape.at("d");
  const std::int64_t max_pos = shape.at("max_pos");
  const auto count = [](std::int64_t n) { return static_cast<std::size_t>(n); };
  return {
      {.name = "q", .dtype = DType::bf16, .count = count(t * hq * d), .access = Access::inout},
      {.name = "k", .dtype = DType::bf16, .count = count(t * hk * d), .access = Access::inout},
      {.name = "positions",
       .dtype = DType::i32,
       .count = count(t),
       .access = Access::input,
       .custom_init =
           [max_pos](std::uint64_t seed, std::span<double> values) {
             for (std::size_t i = 0; i < values.size(); ++i)
               values[i] = static_cast<double>(splitmix64(seed ^ splitmix64(i)) % static_cast<std::uint64_t>(max_pos));
           }},
      {.name = "cos",
       .dtype = DType::fp32,
       .count = count(max_pos * d / 2),
       .access = Access::input,
       .custom_init = angle_table(d, [](double a) { return std::cos(a); }),
       .shared_init_key = "rope/cos/d:" + std::to_string(d)},
      {.name = "sin",
       .dtype = DType::fp32,
       .count = count(max_pos * d / 2),
       .access = Access::input,
       .custom_init = angle_table(d, [](double a) { return std::sin(a); }),
       .shared_init_key = "rope/sin/d:" + std::to_string(d)},
  };
}

// q and k read and written once; the positions; one cos and one sin row per token (a batch's
// positions are distinct in decode; where prefill repeats one, the row is counted again).
double RopeFamily::min_bytes(const Shape& shape) const {
  const double t = shape.at("t"), heads = shape.at("hq") + shape.at("hk"), d = shape.at("d");
  return 2 * t * heads * d * 2 + t * 4 + t * (d / 2) * 4 * 2;
}

// Per rotated pair: four multiplications and two additions. The angles are an input (the cache),
// so computing them is not part of the problem.
double RopeFamily::flops(const Shape& shape) const {
  const double t = shape.at("t"), heads = shape.at("hq") + shape.at("hk"), d = shape.at("d");
  return 6 * t * heads * (d / 2);
}

// The exact rotation, from the positions alone: the cache's fp32 rounding and the naive variant's
// fp32 angles are both errors measured against it.
void RopeFamily::reference(const Shape& shape, HostTensors& t) const {
  const std::int64_t tokens = shape.at("t"), d = shape.at("d"), half = d / 2;
  // A token's angles serve all its heads: computed once per token, the reference's cost is its
  // multiplications rather than 4 transcendental calls per pair (1.5 s at 2100 tokens x 72 heads).
  std::vector<double> cosines(static_cast<std::size_t>(half)), sines(static_cast<std::size_t>(half));
  for (std::int64_t token = 0; token < tokens; ++token) {
    const double position = t[kPositions][token];
    for (std::int64_t i = 0; i < half; ++i) {
      cosines[static_cast<std::size_t>(i)] = std::cos(angle(position, i, d));
      sines[static_cast<std::size_t>(i)] = std::sin(angle(position, i, d));
    }
    for (const auto& [tensor, heads] : {std::pair{kQ, shape.at("hq")}, std::pair{kK, shape.at("hk")}}) {
      for (std::int64_t h = 0; h < heads; ++h) {
        double* x = &t[tensor][(token * heads + h) * d];
        for (std::int64_t i = 0; i < half; ++i) {
          const double c = cosines[static_cast<std::size_t>(i)], s = sines[static_cast<std::size_t>(i)];
          const double a = x[i], b = x[i + half];
          x[i] = a * c - b * s;
          x[i + half] = b * c + a * s;
        }
      }
    }
  }
}

// The naive variant computes each angle in fp32: base^(-2i/d) is within about 3 fp32 ulp (a
// rounded exponent fed to exp2f), the product with the position adds half an ulp, so the angle is
// off by up to pos · 1.6·2^-22 radians; sincosf adds 2^-23. With |x|, |y| < 1 the rotated value
// moves by at most that angle error · sqrt(2) < pos · 2^-20.8. The floor max_pos · 2^-20 covers it
// with margin (2^-8 at the largest test max_pos, 4096). The cache variant is off by the cache's
// fp32 rounding, 2^-24 relative, far inside. Everything else is the default bf16 bound.
Tolerance RopeFamily::tolerance(const Shape& shape) const {
  Tolerance tolerance = default_tolerance(shape.dtype());
  tolerance.abs_floor = std::ldexp(static_cast<double>(shape.at("max_pos")), -20);
  return tolerance;
}

RopeArgs RopeFamily::make_args(const Shape& shape, const TensorViews& v) const {
  return {.q = v.get<__nv_bfloat16>(kQ),
          .k = v.get<__nv_bfloat16>(kK),
          .positions = v.get<const std::int32_t>(kPositions),
          .cos = v.get<const float>(kCos),
          .sin = v.get<const float>(kSin),
          .tokens = static_cast<int>(shape.at("t")),
          .q_heads = static_cast<int>(shape.at("hq")),
          .k_heads = static_cast<int>(shape.at("hk")),
          .head_dim = static_cast<int>(shape.at("d")),
          .log2_base = static_cast<float>(std::log2(kBase))};
}

KGATE_REGISTER_FAMILY(RopeFamily);

}  // namespace kgate::kernels
