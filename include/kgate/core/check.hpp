#pragma once
// Judging a problem instance's outputs against expected values: which tolerance applies to each
// checked tensor (the family's, the tensor's own, or either widened by FlashAttention's baseline
// rule) and the comparison itself. Host data only, so the CPU tests cover the rules; the instance
// (problem.hpp) downloads the outputs and obtains the expected values.
#include <cstddef>
#include <string>
#include <vector>

#include "kgate/core/accuracy.hpp"
#include "kgate/core/family.hpp"

namespace kgate {

struct InstanceCheck {
  std::vector<AccuracyReport> tensors;  // one per checked tensor
  std::string reference;                // where the expected values came from, for messages
  bool passed() const;
  std::string describe() const;
};

// Outputs and in-place tensors are checked against the expected values, zeroed scratch against
// zero (a launch must leave it as it found it); inputs and scratch never are.
bool is_checked(Access access);

// Zeroed scratch: exactly zero. Otherwise the tensor's own tolerance when it declares one, else
// the family's for the shape.
Tolerance tensor_tolerance(const Family& family, const Shape& shape, const TensorSpec& spec);

// `expected` and `baseline` hold values per tensor in declaration order (only the entries of the
// checked tensors other than zeroed scratch are read); `baseline` is null when none applies, and
// widens the tolerance of the tensors without one of their own. `outputs` holds the device bytes
// of each tensor, empty for the unchecked ones.
InstanceCheck check_outputs(const Family& family, const Shape& shape, const std::vector<TensorSpec>& specs, const HostTensors& expected,
                            const HostTensors* baseline, const std::vector<std::vector<std::byte>>& outputs, std::string reference);

}  // namespace kgate
