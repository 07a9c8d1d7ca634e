#include <cmath>

#include "../common/reference_dots.hpp"
#include "gemv.hpp"
#include "kgate/base/parallel.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {

namespace {

enum Tensor { kX, kW, kY };

Shape problem(std::int64_t m, std::int64_t n, std::int64_t k, const char* origin) {
  return Shape({{"m", m}, {"n", n}, {"k", k}}, DType::bf16, origin);
}

// Root mean square of the default input distribution (magnitudes uniform in [a, b), random sign).
double input_rms() {
  const Distribution d{};
  const double a = d.min_magnitude, b = d.max_magnitude;
  return std::sqrt((a * a + a * b + b * b) / 3);
}

}  // namespace

std::string GemvFamily::description() const {
  return "decode GEMM y[m, n] = x[m, k] * W[n, k]^T for m = 1..16 (linear layers of a decode step); bf16, fp32 accumulation";
}

std::vector<Shape> GemvFamily::test_shapes() const {
  return {
      problem(1, 4096, 4096, "llama3-8b o_proj, one token"),
      problem(16, 512, 14336, "down_proj k, m 16: two 8-column tiles"),
      problem(4, 1024, 4096, "m 4"),
      problem(3, 200, 1000, "k % 32 = 8, n % 16 = 8"),
      problem(9, 100, 520, "m 9: a second, mostly empty column tile"),
      problem(8, 17, 64, "one full column tile, 17 rows"),
      problem(2, 1, 8, "one output row, one vector"),
      problem(5, 33, 1001, "odd k: rows not 16-byte aligned"),
      // The warps of a tile take k's rounds in turn: 256 k a round at m <= 8, 128 at m > 8. Tiles
      // per block (gemv_plan.hpp, 132 SMs): 1 at m <= 8; at m > 8 up to 4, leaving every SM a block.
      problem(3, 6000, 264, "375 blocks: warp 1 has the partial last round, warps 2-7 no k"),
      problem(12, 20000, 40, "m 12: 1250 tiles, 4 per block, 2 warps each: one partial round"),
      problem(10, 6144, 264, "m 10: 384 tiles, 2 per block, 4 warps each: a partial third round"),
      problem(1, 40000, 72, "2500 blocks: several waves"),
      problem(16, 40, 2200, "m 16: 17 full rounds of 128 k, warp 0 takes three, warp 1 the partial one"),
  };
}

std::vector<Shape> GemvFamily::bench_shapes() const {
  struct Projection {
    std::int64_t n, k;
    const char* origin;
  };
  const Projection projections[] = {
      {6144, 4096, "llama3-8b qkv_proj"},
      {4096, 4096, "llama3-8b o_proj"},
      {28672, 4096, "llama3-8b gate_up_proj"},
      {4096, 14336, "llama3-8b down_proj"},
  };
  std::vector<Shape> shapes;
  for (const Projection& p : projections)
    for (std::int64_t m : {1, 2, 4, 8, 16}) shapes.push_back(problem(m, p.n, p.k, p.origin));
  return shapes;
}

std::vector<TensorSpec> GemvFamily::tensors(const Shape& shape) const {
  const std::size_t m = shape.at("m"), n = shape.at("n"), k = shape.at("k");
  return {
      {.name = "x", .dtype = DType::bf16, .count = m * k, .access = Access::input},
      {.name = "w", .dtype = DType::bf16, .count = n * k, .access = Access::input},
      {.name = "y", .dtype = DType::bf16, .count = m * n, .access = Access::output},
  };
}

// W and x read once, y written once.
double GemvFamily::min_bytes(const Shape& shape) const {
  const double m = shape.at("m"), n = shape.at("n"), k = shape.at("k");
  return n * k * 2 + m * k * 2 + m * n * 2;
}

// One multiply-add per (m, n, k).
double GemvFamily::flops(const Shape& shape) const {
  return 2.0 * static_cast<double>(shape.at("m")) * static_cast<double>(shape.at("n")) * static_cast<double>(shape.at("k"));
}

// Blocks of W's rows over the host's threads, each block against every row of x, four of W's rows
// at a time (reference_dots.hpp).
void GemvFamily::reference(const Shape& shape, HostTensors& t) const {
  const auto m = static_cast<std::size_t>(shape.at("m")), n = static_cast<std::size_t>(shape.at("n")),
             k = static_cast<std::size_t>(shape.at("k"));
  constexpr std::size_t kRowsPerBlock = 64;
  parallel_for(n, kRowsPerBlock, [&](std::size_t first, std::size_t end) {
    for (std::size_t i = 0; i < m; ++i)
      dot_rows(
          &t[kX][i * k], k, end - first, [&](std::size_t j) { return &t[kW][(first + j) * k]; }, &t[kY][i * n + first]);
  });
}

// An output is a sum of k products of random sign: typically sqrt(k)·rms(x)·rms(w) in size, but
// any one may cancel to near zero, where 2 bf16 ulps of the small result are less than the
// arithmetic's legitimate error. fp32 accumulation is far below that error; the largest
// legitimate one is cuBLAS splitting k into s parts and reducing the partial sums in the output
// type (bf16): each partial, typically sqrt(k/s)·rms² in size, is rounded by up to 2^-9 of itself,
// and the s roundings add up like a random walk to sqrt(k)·rms²·2^-9. The floor is twice that,
// 2^-8 · sqrt(k) · rms(x) · rms(w): between a half and one ulp of a typical output, so the bound
// stays tight where outputs are of typical size. rel_l2 stays at the bf16 default of 1e-2.
Tolerance GemvFamily::tolerance(const Shape& shape) const {
  Tolerance tolerance = default_tolerance(shape.dtype());
  tolerance.abs_floor = std::ldexp(std::sqrt(static_cast<double>(shape.at("k"))) * input_rms() * input_rms(), -8);
  return tolerance;
}

GemvArgs GemvFamily::make_args(const Shape& shape, const TensorViews& v) const {
  return {v.get<const __nv_bfloat16>(kX),  v.get<const __nv_bfloat16>(kW),  v.get<__nv_bfloat16>(kY),
          static_cast<int>(shape.at("m")), static_cast<int>(shape.at("n")), static_cast<int>(shape.at("k"))};
}

KGATE_REGISTER_FAMILY(GemvFamily);

}  // namespace kgate::kernels
