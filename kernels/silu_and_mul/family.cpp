#include <cmath>

#include "kgate/core/registry.hpp"
#include "silu_and_mul.hpp"

namespace kgate::kernels {

namespace {

enum Tensor { kX, kOut };

Shape rows(std::int64_t m, std::int64_t i, const char* origin) { return Shape({{"m", m}, {"i", i}}, DType::bf16, origin); }

}  // namespace

std::string SiluAndMulFamily::description() const {
  return "SwiGLU activation out[m, i] = silu(x[:, :i]) * x[:, i:] from the fused gate/up output x [m, 2i]; bf16, fp32 math";
}

std::vector<Shape> SiluAndMulFamily::test_shapes() const {
  return {
      rows(1, 14336, "llama3-8b intermediate, one token"),
      rows(3, 28672, "llama3-70b intermediate"),
      rows(3, 1000, "125 vectors per row"),
      rows(4, 1004, "i % 8 = 4: 4-wide vectors"),
      rows(2, 1002, "i % 4 = 2: 2-wide vectors"),
      rows(5, 1001, "odd i: scalar path"),
      rows(33, 72, "short rows, many of them"),
      rows(257, 8, "one vector per row"),
  };
}

std::vector<Shape> SiluAndMulFamily::bench_shapes() const {
  std::vector<Shape> shapes;
  for (const auto& [i, model] : {std::pair<std::int64_t, const char*>{14336, "llama3-8b"}, {28672, "llama3-70b"}})
    for (std::int64_t m : {1, 16, 64, 256, 4096, 32768}) shapes.push_back(rows(m, i, model));
  return shapes;
}

std::vector<TensorSpec> SiluAndMulFamily::tensors(const Shape& shape) const {
  const std::size_t m = shape.at("m"), i = shape.at("i");
  return {
      {.name = "x", .dtype = DType::bf16, .count = m * 2 * i, .access = Access::input},
      {.name = "out", .dtype = DType::bf16, .count = m * i, .access = Access::output},
  };
}

// x read once (2·m·i values), out written once (m·i).
double SiluAndMulFamily::min_bytes(const Shape& shape) const {
  const double m = shape.at("m"), i = shape.at("i");
  return 3 * m * i * 2;
}

// Per output: negate, exponential, add one, divide (silu), multiply by the up value — counting the
// exponential as one operation.
double SiluAndMulFamily::flops(const Shape& shape) const {
  return 5.0 * static_cast<double>(shape.at("m")) * static_cast<double>(shape.at("i"));
}

void SiluAndMulFamily::reference(const Shape& shape, HostTensors& t) const {
  const std::int64_t m = shape.at("m"), n = shape.at("i");
  for (std::int64_t r = 0; r < m; ++r) {
    const double* gate = &t[kX][r * 2 * n];
    const double* up = gate + n;
    for (std::int64_t j = 0; j < n; ++j) t[kOut][r * n + j] = gate[j] / (1.0 + std::exp(-gate[j])) * up[j];
  }
}

SiluAndMulArgs SiluAndMulFamily::make_args(const Shape& shape, const TensorViews& v) const {
  return {v.get<const __nv_bfloat16>(kX), v.get<__nv_bfloat16>(kOut), static_cast<int>(shape.at("m")), static_cast<int>(shape.at("i"))};
}

KGATE_REGISTER_FAMILY(SiluAndMulFamily);

}  // namespace kgate::kernels
