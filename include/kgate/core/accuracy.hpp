#pragma once
// Comparison of a kernel's output with a higher-precision reference. The figures are the ones a
// reviewer asks for: relative L2 error over the tensor, the worst element and its bound, and the
// count of NaN/Inf and of elements the kernel never wrote.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kgate/base/dtype.hpp"

namespace kgate {

// Per element, |got - ref| <= max_ulps * ulp(ref) + abs_floor, where ulp is that of the
// output dtype at |ref|: a variant that rounds an fp32 result once lands within 0.5 ulp, so the
// bound reads directly as "how many roundings apart". Over the tensor, ||got - ref|| / ||ref||
// <= rel_l2.
struct Tolerance {
  double rel_l2 = 1e-2;
  double max_ulps = 2.0;
  double abs_floor = 0.0;
};

// The documented default per output dtype (docs/architecture.md, "Tolerances").
Tolerance default_tolerance(DType dtype);

// Unit in the last place of `value` when stored as `dtype` (bf16: 8 significant bits).
double ulp(DType dtype, double value);

// The bit pattern written into output buffers before a launch: a quiet NaN with a payload no
// arithmetic produces, so an element still holding it was never written.
std::uint16_t poison_bits_16();
std::uint32_t poison_bits_32();
bool is_poison(DType dtype, const void* element);

struct AccuracyReport {
  std::string tensor;
  std::size_t elements = 0;
  double rel_l2 = 0;
  double max_abs = 0;           // largest |got - ref|
  double max_abs_bound = 0;     // the bound at that element
  std::size_t worst_index = 0;  // element with the largest error relative to its bound
  double worst_got = 0, worst_ref = 0;
  std::size_t violations = 0;  // elements outside their bound
  std::size_t non_finite = 0;  // NaN or Inf (poison excluded)
  std::size_t unwritten = 0;   // elements still holding the poison pattern
  Tolerance tolerance{};

  bool passed() const;
  std::string describe() const;  // one line with every figure, for failure messages and logs
};

// `got_raw` holds the device's bytes of the tensor (dtype-typed), `ref` the reference values.
AccuracyReport compare(std::string tensor, DType dtype, std::span<const std::byte> got_raw, std::span<const double> ref,
                       const Tolerance& tolerance);

// FlashAttention's test rule, for outputs whose error comes mostly from arithmetic in the output
// precision (attention in bf16): a result passes when its error against the reference is at most
// kBaselineErrorFactor times the error of a straightforward implementation in that precision (the
// baseline) against the same reference, plus a floor. The floor is the tensor's own tolerance;
// the baseline's largest error widens every element's bound and its relative L2 error the limit.
inline constexpr double kBaselineErrorFactor = 2.0;

struct BaselineError {
  double max_abs = 0;  // largest |baseline - ref|
  double rel_l2 = 0;   // ||baseline - ref|| / ||ref||
};

// Throws std::invalid_argument on different sizes or a non-finite baseline value (a host
// emulation that overflowed is a bug in the family, not a lenient tolerance).
BaselineError baseline_error(std::span<const double> baseline, std::span<const double> ref);
Tolerance widen_by_baseline(const Tolerance& floor, const BaselineError& baseline, double factor = kBaselineErrorFactor);

// The values of a tensor's device bytes (dtype-typed), as doubles, and back: each value rounded
// to nearest-even as the device stores it.
std::vector<double> decode_values(DType dtype, std::span<const std::byte> raw);
std::vector<std::byte> encode_values(DType dtype, std::span<const double> values);

// Host conversions, round-to-nearest-even as the device's __float2bfloat16_rn.
std::uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_fp16_bits(float value);
float fp16_bits_to_float(std::uint16_t bits);

}  // namespace kgate
