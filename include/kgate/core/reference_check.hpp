#pragma once
// A family's fp64 host reference checked on the CPU alone, so that a user without a GPU learns
// when the reference itself is wrong (on a GPU, every variant would fail against it instead, and
// the variants would be blamed). The reference runs twice on the same fresh inputs, each time
// with its output tensors filled with a NaN poison first, as ProblemInstance hands it its tensors
// otherwise (no values for scratch); a baseline (Family::baseline) is held to the same rules.
// Host code only: the correctness suite runs it without a GPU, and the CPU tests cover it.
#include <cstdint>
#include <string>
#include <vector>

#include "kgate/core/family.hpp"

namespace kgate {

struct ReferenceCheck {
  std::string family;
  std::string shape;                  // the shape's id
  std::vector<std::string> problems;  // one sentence each, naming the function and the tensor
  bool passed() const { return problems.empty(); }
  // "softmax's host reference at m:1/n:1/bf16 passed" or the problems, one per line.
  std::string describe() const;
};

// The test shape whose expected values come from the host reference (no device_reference) with
// the fewest bytes. Throws std::logic_error when every test shape names a device reference.
Shape smallest_host_reference_shape(const Family& family);

// Runs reference() (and baseline(), where the family has one) twice at `shape` on inputs drawn
// from `seed`. A problem each where a run
//   - leaves an element of an output or in-place tensor unwritten (still the poison) or writes it
//     NaN or Inf: the GPU check would fail every variant there;
//   - changes an input tensor: a reference writes only what it checks;
//   - resizes a tensor;
//   - or gives other values in its second run, made on one thread (parallel.hpp): it reads memory
//     it never wrote, keeps state between calls or depends on how its work is split over threads,
//     and the expected values would change from run to run or machine to machine.
ReferenceCheck check_host_reference(const Family& family, const Shape& shape, std::uint64_t seed);

}  // namespace kgate
