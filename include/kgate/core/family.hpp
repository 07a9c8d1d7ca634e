#pragma once
// A kernel family: the problem every variant of it solves. The family declares, once, what the
// correctness suite, the benchmark suite and the reports need to know about the problem; its
// variants only supply launch functions.
#include <cuda_runtime.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgate/core/accuracy.hpp"
#include "kgate/base/shape.hpp"
#include "kgate/core/tensor.hpp"

namespace kgate {

// Thrown by a launch function for a shape its variant does not handle (too large for a row kept
// in registers, say); the suites report the case as skipped with this message.
class UnsupportedShape : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which timing mode a family's headline figure comes from (both are always recorded).
// cold: L2 flushed before each launch, as a kernel meets its data inside a model step;
// hot: back-to-back launches replayed from a CUDA graph, for kernels whose data stays cached.
enum class TimingMode { cold, hot };

class Family {
 public:
  virtual ~Family() = default;

  virtual std::string name() const = 0;
  virtual std::string description() const = 0;

  // Small shapes for the correctness suite, including sizes that are not multiples of any
  // vector width or block size; and realistic shapes from real models for benchmarks.
  virtual std::vector<Shape> test_shapes() const = 0;
  virtual std::vector<Shape> bench_shapes() const = 0;

  // The buffers of one problem instance, in the order the launch arguments are built from.
  virtual std::vector<TensorSpec> tensors(const Shape& shape) const = 0;

  // Minimum device-memory traffic (each input read once, each output written once) and the
  // arithmetic the problem requires. Both are per launch and independent of the variant.
  virtual double min_bytes(const Shape& shape) const = 0;
  virtual double flops(const Shape& shape) const = 0;

  // Expected values of the checked tensors (output and inout), computed in fp64 on the host: every
  // element written, whatever the output entries held on entry, the inputs left as they are, and
  // the same values on every call (the correctness suite's host_reference.<family> case checks
  // all three on the CPU, reference_check.hpp).
  virtual void reference(const Shape& shape, HostTensors& tensors) const = 0;

  // FlashAttention's rule (accuracy.hpp, widen_by_baseline): a family whose outputs' error comes
  // mostly from arithmetic in the output precision writes here, as reference() does, what a
  // straightforward implementation in that precision returns for the checked tensors; the
  // tolerance of each checked tensor without one of its own then grows by twice that baseline's
  // error. Returns false, the default, when the family has no baseline.
  virtual bool baseline(const Shape& /*shape*/, HostTensors& /*tensors*/) const { return false; }

  // For shapes whose fp64 host reference would take too long (attention at long sequences): the
  // name of a variant of this family whose outputs serve as the expected values instead. It must
  // itself be checked against the host reference on the test shapes where this returns nothing,
  // and tolerance(shape) must then cover that variant's own rounding. No baseline applies there.
  virtual std::optional<std::string> device_reference(const Shape& /*shape*/) const { return std::nullopt; }

  // The tolerance of the checked tensors that declare none of their own (TensorSpec::tolerance).
  virtual Tolerance tolerance(const Shape& shape) const { return default_tolerance(shape.dtype()); }
  virtual TimingMode headline_mode() const { return TimingMode::cold; }
  // Kernels that mostly read (decode attention, GEMV) are judged against the measured read-only
  // bandwidth, which on an H200 exceeds a copy's; everything else against the copy.
  virtual bool read_dominated() const { return false; }
};

// The typed middle layer: a family whose variants take an argument struct built from the
// instance's device pointers. Variants of this family are `void launch(const Args&, cudaStream_t)`.
template <class ArgsT>
class TypedFamily : public Family {
 public:
  using Args = ArgsT;
  virtual Args make_args(const Shape& shape, const TensorViews& views) const = 0;
};

}  // namespace kgate

// The overrides every family has, declared in one line of its class (which derives from
// TypedFamily and names itself in kName):
//
//   class RmsNormFamily final : public kgate::TypedFamily<RmsNormArgs> {
//    public:
//     static constexpr const char* kName = "rmsnorm";
//     KGATE_FAMILY_OVERRIDES();
//     kgate::Tolerance tolerance(const kgate::Shape& shape) const override;  // an optional one
//   };
//
// name() returns kName; the family's .cpp defines the others: description(), test_shapes(),
// bench_shapes(), tensors(), min_bytes(), flops(), reference() and make_args(). The optional
// overrides (tolerance, read_dominated, headline_mode, baseline, device_reference) are declared
// beside it, so a family's header shows what it does differently. A family that defines its
// functions in the class itself (README's relu) writes them out instead.
//
// A macro rather than a base class: C++ wants every member a class defines declared in that class,
// so a base could take the list over only by having each family define its functions as explicit
// specializations of the base's members (`template <> std::string KernelFamily<RmsNormFamily,
// RmsNormArgs>::description() const`, the family's own constants and helpers qualified with its
// name), more to write and to read in every family than the list it saves once.
#define KGATE_FAMILY_OVERRIDES()                                                             \
  std::string name() const override { return kName; }                                        \
  std::string description() const override;                                                  \
  std::vector<::kgate::Shape> test_shapes() const override;                                  \
  std::vector<::kgate::Shape> bench_shapes() const override;                                 \
  std::vector<::kgate::TensorSpec> tensors(const ::kgate::Shape& shape) const override;      \
  double min_bytes(const ::kgate::Shape& shape) const override;                              \
  double flops(const ::kgate::Shape& shape) const override;                                  \
  void reference(const ::kgate::Shape& shape, ::kgate::HostTensors& tensors) const override; \
  Args make_args(const ::kgate::Shape& shape, const ::kgate::TensorViews& views) const override
