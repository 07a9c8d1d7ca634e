#include "kgate/core/registry.hpp"
#include "scale_add.hpp"

namespace external {
namespace {

enum Tensor { kX, kY, kOut };

kgate::Shape elements(std::int64_t n, const char* origin) { return kgate::Shape({{"n", n}}, kgate::DType::fp32, origin); }

}  // namespace

std::string ScaleAddFamily::description() const { return "out = alpha * x + y over n fp32 values"; }

// Small and odd: a partial vector at the end, fewer elements than one block, one element.
std::vector<kgate::Shape> ScaleAddFamily::test_shapes() const {
  return {elements(1, "one element"), elements(1001, "n % 4 = 1: scalar tail"), elements(4096, "whole vectors"),
          elements(1 << 20, "many blocks")};
}

// From L2-resident to well past the L2 of an H100 (50 MiB): the bandwidth-bound regime.
std::vector<kgate::Shape> ScaleAddFamily::bench_shapes() const {
  return {elements(1 << 16, "L2-resident"), elements(1 << 22, "16 MiB per tensor"), elements(1 << 26, "256 MiB per tensor")};
}

std::vector<kgate::TensorSpec> ScaleAddFamily::tensors(const kgate::Shape& shape) const {
  const std::size_t n = shape.at("n");
  return {
      {.name = "x", .dtype = kgate::DType::fp32, .count = n, .access = kgate::Access::input},
      {.name = "y", .dtype = kgate::DType::fp32, .count = n, .access = kgate::Access::input},
      {.name = "out", .dtype = kgate::DType::fp32, .count = n, .access = kgate::Access::output},
  };
}

// x and y read once, out written once: 12 bytes per element.
double ScaleAddFamily::min_bytes(const kgate::Shape& shape) const { return 12.0 * static_cast<double>(shape.at("n")); }

// One multiply and one add per element.
double ScaleAddFamily::flops(const kgate::Shape& shape) const { return 2.0 * static_cast<double>(shape.at("n")); }

void ScaleAddFamily::reference(const kgate::Shape& shape, kgate::HostTensors& t) const {
  for (std::int64_t i = 0; i < shape.at("n"); ++i) t[kOut][i] = double{kAlpha} * t[kX][i] + t[kY][i];
}

ScaleAddArgs ScaleAddFamily::make_args(const kgate::Shape& shape, const kgate::TensorViews& v) const {
  return {v.get<const float>(kX), v.get<const float>(kY), v.get<float>(kOut), kAlpha, shape.at("n")};
}

KGATE_REGISTER_FAMILY(ScaleAddFamily);

}  // namespace external
