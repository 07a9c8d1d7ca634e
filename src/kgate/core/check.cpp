#include "kgate/core/check.hpp"

#include <stdexcept>

namespace kgate {

bool InstanceCheck::passed() const {
  for (const auto& t : tensors)
    if (!t.passed()) return false;
  return !tensors.empty();
}

std::string InstanceCheck::describe() const {
  std::string out;
  for (const auto& t : tensors) {
    if (!out.empty()) out += '\n';
    out += t.describe();
  }
  return out;
}

bool is_checked(Access access) { return access == Access::output || access == Access::inout || access == Access::zeroed_scratch; }

Tolerance tensor_tolerance(const Family& family, const Shape& shape, const TensorSpec& spec) {
  if (spec.access == Access::zeroed_scratch) return {.rel_l2 = 0, .max_ulps = 0, .abs_floor = 0};
  return spec.tolerance ? *spec.tolerance : family.tolerance(shape);
}

InstanceCheck check_outputs(const Family& family, const Shape& shape, const std::vector<TensorSpec>& specs, const HostTensors& expected,
                            const HostTensors* baseline, const std::vector<std::vector<std::byte>>& outputs, std::string reference) {
  if (expected.size() != specs.size() || outputs.size() != specs.size() || (baseline && baseline->size() != specs.size()))
    throw std::invalid_argument("check_outputs: expected, baseline and outputs need one entry per tensor (" + std::to_string(specs.size()) +
                                ")");
  InstanceCheck result;
  result.reference = std::move(reference);
  for (std::size_t t = 0; t < specs.size(); ++t) {
    const TensorSpec& spec = specs[t];
    if (!is_checked(spec.access)) continue;
    Tolerance tolerance = tensor_tolerance(family, shape, spec);
    if (spec.access == Access::zeroed_scratch) {
      result.tensors.push_back(compare(spec.name, spec.dtype, outputs[t], std::vector<double>(spec.count, 0.0), tolerance));
      continue;
    }
    if (baseline && !spec.tolerance) tolerance = widen_by_baseline(tolerance, baseline_error((*baseline)[t], expected[t]));
    result.tensors.push_back(compare(spec.name, spec.dtype, outputs[t], expected[t], tolerance));
  }
  return result;
}

}  // namespace kgate
