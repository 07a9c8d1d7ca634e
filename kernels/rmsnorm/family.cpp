#include <cmath>

#include "../common/norm_shapes.hpp"
#include "kgate/core/registry.hpp"
#include "rmsnorm.hpp"

namespace kgate::kernels {

namespace {
enum Tensor { kX, kWeight, kY };
}

std::string RmsNormFamily::description() const { return "RMSNorm over rows of n elements, bf16 in/out, fp32 accumulation, eps 1e-5"; }
std::vector<Shape> RmsNormFamily::test_shapes() const { return norm_test_shapes(); }
std::vector<Shape> RmsNormFamily::bench_shapes() const { return norm_bench_shapes(); }

std::vector<TensorSpec> RmsNormFamily::tensors(const Shape& shape) const {
  const std::size_t m = shape.at("m"), n = shape.at("n");
  return {
      {.name = "x", .dtype = DType::bf16, .count = m * n, .access = Access::input},
      // Norm weights sit around 1 in trained models; keep them positive and away from zero.
      {.name = "weight",
       .dtype = DType::bf16,
       .count = n,
       .access = Access::input,
       .distribution = {.min_magnitude = 0.25f, .max_magnitude = 2.0f, .symmetric = false}},
      {.name = "y", .dtype = DType::bf16, .count = m * n, .access = Access::output},
  };
}

// Read x and w once, write y once.
double RmsNormFamily::min_bytes(const Shape& shape) const {
  const double m = shape.at("m"), n = shape.at("n");
  return 2 * m * n * 2 + 2 * n;
}

// Per element: square, accumulate, scale by the row's rstd, scale by the weight.
double RmsNormFamily::flops(const Shape& shape) const {
  return 4.0 * static_cast<double>(shape.at("m")) * static_cast<double>(shape.at("n"));
}

void RmsNormFamily::reference(const Shape& shape, HostTensors& t) const {
  const std::int64_t m = shape.at("m"), n = shape.at("n");
  for (std::int64_t i = 0; i < m; ++i) {
    const double* x = &t[kX][i * n];
    double sum_sq = 0;
    for (std::int64_t j = 0; j < n; ++j) sum_sq += x[j] * x[j];
    const double rstd = 1.0 / std::sqrt(sum_sq / n + kEps);
    for (std::int64_t j = 0; j < n; ++j) t[kY][i * n + j] = x[j] * rstd * t[kWeight][j];
  }
}

RmsNormArgs RmsNormFamily::make_args(const Shape& shape, const TensorViews& v) const {
  return {v.get<const __nv_bfloat16>(kX),  v.get<const __nv_bfloat16>(kWeight), v.get<__nv_bfloat16>(kY),
          static_cast<int>(shape.at("m")), static_cast<int>(shape.at("n")),     kEps};
}

KGATE_REGISTER_FAMILY(RmsNormFamily);

}  // namespace kgate::kernels
