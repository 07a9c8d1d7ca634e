#include <cmath>

#include "../common/norm_shapes.hpp"
#include "fused_add_rmsnorm.hpp"
#include "kgate/core/accuracy.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {

namespace {
enum Tensor { kX, kResidual, kWeight };
}

std::string FusedAddRmsNormFamily::description() const {
  return "residual add then RMSNorm, in place (residual <- x + residual; x <- rmsnorm(residual) * w), bf16, fp32 accumulation";
}
std::vector<Shape> FusedAddRmsNormFamily::test_shapes() const { return norm_test_shapes(); }
std::vector<Shape> FusedAddRmsNormFamily::bench_shapes() const { return norm_bench_shapes(); }

std::vector<TensorSpec> FusedAddRmsNormFamily::tensors(const Shape& shape) const {
  const std::size_t m = shape.at("m"), n = shape.at("n");
  return {
      {.name = "x", .dtype = DType::bf16, .count = m * n, .access = Access::inout},
      {.name = "residual", .dtype = DType::bf16, .count = m * n, .access = Access::inout},
      {.name = "weight",
       .dtype = DType::bf16,
       .count = n,
       .access = Access::input,
       .distribution = {.min_magnitude = 0.25f, .max_magnitude = 2.0f, .symmetric = false}},
  };
}

// Read x and the residual, write both back, read w once.
double FusedAddRmsNormFamily::min_bytes(const Shape& shape) const {
  const double m = shape.at("m"), n = shape.at("n");
  return 4 * m * n * 2 + 2 * n;
}

// Per element: the add, then RMSNorm's four.
double FusedAddRmsNormFamily::flops(const Shape& shape) const {
  return 5.0 * static_cast<double>(shape.at("m")) * static_cast<double>(shape.at("n"));
}

void FusedAddRmsNormFamily::reference(const Shape& shape, HostTensors& t) const {
  const std::int64_t m = shape.at("m"), n = shape.at("n");
  for (std::int64_t i = 0; i < m; ++i) {
    double* x = &t[kX][i * n];
    double* r = &t[kResidual][i * n];
    double sum_sq = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      r[j] = bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(x[j] + r[j])));
      sum_sq += r[j] * r[j];
    }
    const double rstd = 1.0 / std::sqrt(sum_sq / n + kEps);
    for (std::int64_t j = 0; j < n; ++j) x[j] = r[j] * rstd * t[kWeight][j];
  }
}

FusedAddRmsNormArgs FusedAddRmsNormFamily::make_args(const Shape& shape, const TensorViews& v) const {
  return {v.get<__nv_bfloat16>(kX),        v.get<__nv_bfloat16>(kResidual), v.get<const __nv_bfloat16>(kWeight),
          static_cast<int>(shape.at("m")), static_cast<int>(shape.at("n")), kEps};
}

KGATE_REGISTER_FAMILY(FusedAddRmsNormFamily);

}  // namespace kgate::kernels
