#include "kgate/core/accuracy.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace kgate {

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::bf16: return {.rel_l2 = 1e-2, .max_ulps = 2.0, .abs_floor = 0.0};
    case DType::fp16: return {.rel_l2 = 1e-3, .max_ulps = 2.0, .abs_floor = 0.0};
    case DType::fp32: return {.rel_l2 = 1e-5, .max_ulps = 64.0, .abs_floor = 0.0};
    case DType::i32: return {.rel_l2 = 0.0, .max_ulps = 0.0, .abs_floor = 0.0};
  }
  throw std::invalid_argument("default_tolerance: unknown dtype");
}

double ulp(DType dtype, double value) {
  int significant_bits = 0, min_exponent = 0;  // min_exponent: that of the smallest normal, as frexp gives it
  switch (dtype) {
    case DType::bf16:
      significant_bits = 8;
      min_exponent = -125;
      break;
    case DType::fp16:
      significant_bits = 11;
      min_exponent = -13;
      break;
    case DType::fp32:
      significant_bits = 24;
      min_exponent = -125;
      break;
    case DType::i32: return 1.0;
  }
  // |value| in [2^(exponent-1), 2^exponent), read from the double's exponent field as frexp
  // would give it, and 2^(exponent - significant_bits) built the same way: the check calls this
  // for every element, and frexp with ldexp were most of its time. A zero or a double subnormal
  // (biased exponent 0) lies below every min_exponent here.
  const auto biased = static_cast<int>((std::bit_cast<std::uint64_t>(value) >> 52) & 0x7FF);
  int exponent = biased - 1022;
  if (biased == 0 || exponent < min_exponent) exponent = min_exponent;
  return std::bit_cast<double>(static_cast<std::uint64_t>(exponent - significant_bits + 1023) << 52);
}

std::uint16_t poison_bits_16() { return 0x7FA5; }  // quiet NaN in both bf16 and fp16
std::uint32_t poison_bits_32() { return 0x7FC0A5A5u; }

bool is_poison(DType dtype, const void* element) {
  if (size_of(dtype) == 2) {
    std::uint16_t bits;
    std::memcpy(&bits, element, 2);
    return bits == poison_bits_16();
  }
  std::uint32_t bits;
  std::memcpy(&bits, element, 4);
  return bits == poison_bits_32();
}

std::uint16_t float_to_bf16_bits(float value) { return std::bit_cast<std::uint16_t>(__float2bfloat16_rn(value)); }
float bf16_bits_to_float(std::uint16_t bits) { return __bfloat162float(std::bit_cast<__nv_bfloat16>(bits)); }
std::uint16_t float_to_fp16_bits(float value) { return std::bit_cast<std::uint16_t>(__float2half_rn(value)); }
float fp16_bits_to_float(std::uint16_t bits) { return __half2float(std::bit_cast<__half>(bits)); }

static double decode(DType dtype, const std::byte* element) {
  switch (dtype) {
    case DType::bf16: {
      std::uint16_t bits;
      std::memcpy(&bits, element, 2);
      return bf16_bits_to_float(bits);
    }
    case DType::fp16: {
      std::uint16_t bits;
      std::memcpy(&bits, element, 2);
      return fp16_bits_to_float(bits);
    }
    case DType::fp32: {
      float v;
      std::memcpy(&v, element, 4);
      return v;
    }
    case DType::i32: {
      std::int32_t v;
      std::memcpy(&v, element, 4);
      return v;
    }
  }
  return NAN;
}

AccuracyReport compare(std::string tensor, DType dtype, std::span<const std::byte> got_raw, std::span<const double> ref,
                       const Tolerance& tolerance) {
  const std::size_t width = size_of(dtype);
  if (got_raw.size() != ref.size() * width)
    throw std::invalid_argument("compare(" + tensor + "): " + std::to_string(got_raw.size() / width) + " elements from the device, " +
                                std::to_string(ref.size()) + " in the reference");
  AccuracyReport report;
  report.tensor = std::move(tensor);
  report.elements = ref.size();
  report.tolerance = tolerance;
  double error_sq = 0, ref_sq = 0, worst_ratio = -1;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const std::byte* element = got_raw.data() + i * width;
    if (is_floating(dtype) && is_poison(dtype, element)) {
      ++report.unwritten;
      continue;
    }
    const double got = decode(dtype, element);
    if (!std::isfinite(got)) {
      ++report.non_finite;
      continue;
    }
    const double diff = std::fabs(got - ref[i]);
    const double bound = tolerance.max_ulps * ulp(dtype, ref[i]) + tolerance.abs_floor;
    error_sq += diff * diff;
    ref_sq += ref[i] * ref[i];
    if (diff > bound) ++report.violations;
    const double ratio = bound > 0 ? diff / bound : (diff > 0 ? INFINITY : 0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      report.worst_index = i;
      report.worst_got = got;
      report.worst_ref = ref[i];
      report.max_abs_bound = bound;
    }
    report.max_abs = std::max(report.max_abs, diff);
  }
  report.rel_l2 = ref_sq > 0 ? std::sqrt(error_sq / ref_sq) : std::sqrt(error_sq);
  return report;
}

BaselineError baseline_error(std::span<const double> baseline, std::span<const double> ref) {
  if (baseline.size() != ref.size())
    throw std::invalid_argument("baseline_error: " + std::to_string(baseline.size()) + " baseline values, " + std::to_string(ref.size()) +
                                " in the reference");
  BaselineError error;
  double error_sq = 0, ref_sq = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(baseline[i]))
      throw std::invalid_argument("baseline_error: baseline value [" + std::to_string(i) + "] is not finite");
    const double diff = std::fabs(baseline[i] - ref[i]);
    error.max_abs = std::max(error.max_abs, diff);
    error_sq += diff * diff;
    ref_sq += ref[i] * ref[i];
  }
  error.rel_l2 = ref_sq > 0 ? std::sqrt(error_sq / ref_sq) : std::sqrt(error_sq);
  return error;
}

Tolerance widen_by_baseline(const Tolerance& floor, const BaselineError& baseline, double factor) {
  return {.rel_l2 = floor.rel_l2 + factor * baseline.rel_l2,
          .max_ulps = floor.max_ulps,
          .abs_floor = floor.abs_floor + factor * baseline.max_abs};
}

std::vector<std::byte> encode_values(DType dtype, std::span<const double> values) {
  std::vector<std::byte> raw(values.size() * size_of(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::byte* dst = raw.data() + i * size_of(dtype);
    switch (dtype) {
      case DType::bf16: {
        const std::uint16_t bits = float_to_bf16_bits(static_cast<float>(values[i]));
        std::memcpy(dst, &bits, 2);
        break;
      }
      case DType::fp16: {
        const std::uint16_t bits = float_to_fp16_bits(static_cast<float>(values[i]));
        std::memcpy(dst, &bits, 2);
        break;
      }
      case DType::fp32: {
        const float v = static_cast<float>(values[i]);
        std::memcpy(dst, &v, 4);
        break;
      }
      case DType::i32: {
        const std::int32_t v = static_cast<std::int32_t>(values[i]);
        std::memcpy(dst, &v, 4);
        break;
      }
    }
  }
  return raw;
}

std::vector<double> decode_values(DType dtype, std::span<const std::byte> raw) {
  const std::size_t width = size_of(dtype);
  std::vector<double> values(raw.size() / width);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = decode(dtype, raw.data() + i * width);
  return values;
}

bool AccuracyReport::passed() const { return unwritten == 0 && non_finite == 0 && violations == 0 && rel_l2 <= tolerance.rel_l2; }

std::string AccuracyReport::describe() const {
  std::ostringstream out;
  out << std::setprecision(3) << tensor << ": rel_l2=" << rel_l2 << " (limit " << tolerance.rel_l2 << ") max_abs=" << max_abs << " worst ["
      << worst_index << "] got=" << worst_got << " ref=" << worst_ref << " bound=" << max_abs_bound << " (" << tolerance.max_ulps
      << " ulp + " << tolerance.abs_floor << ") violations=" << violations << "/" << elements << " nan/inf=" << non_finite
      << " unwritten=" << unwritten << (passed() ? " PASS" : " FAIL");
  return out.str();
}

}  // namespace kgate
