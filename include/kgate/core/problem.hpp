#pragma once
// One family at one shape, with its device buffers. Owns `copies` independent sets of tensors so
// that a cold benchmark can rotate among inputs that together exceed the L2 cache.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "kgate/core/check.hpp"
#include "kgate/core/device_buffer.hpp"
#include "kgate/core/family.hpp"

namespace kgate {

struct Variant;  // registry.hpp

class ProblemInstance {
 public:
  // Allocates every copy's tensors and zero-fills its zeroed scratch (the only time the harness
  // writes it; synchronizes the default stream).
  ProblemInstance(const Family& family, Shape shape, int copies = 1);

  const Family& family() const { return *family_; }
  const Shape& shape() const { return shape_; }
  const std::vector<TensorSpec>& specs() const { return specs_; }
  int copies() const { return static_cast<int>(views_.size()); }
  std::size_t bytes_per_copy() const;

  // Fresh random inputs in every copy (copy c draws from derive_seed(seed, c)), drawn on the
  // device, or on the host for a tensor with a custom_init. With `keep_host_copy`, copy 0's
  // values are kept on the host for the reference (read back where the device drew them).
  void fill_inputs(std::uint64_t seed, bool keep_host_copy, cudaStream_t stream = nullptr);
  void poison_outputs(cudaStream_t stream = nullptr);

  const TensorViews& views(int copy) const { return views_.at(static_cast<std::size_t>(copy)); }

  // Downloads copy 0's checked tensors and compares them with the expected values: the family's
  // fp64 host reference on the inputs kept by fill_inputs(keep_host_copy=true), with its baseline
  // widening the tolerance where it has one (Family::baseline); or, at shapes where the family
  // names a device reference (Family::device_reference), that variant's outputs from its own
  // instance on the same inputs (any fill_inputs suffices). Zeroed scratch must read zero.
  // Not const: the reference borrows the host copy of the inputs (compute_on_host).
  InstanceCheck check();

 private:
  const Family* family_;
  Shape shape_;
  std::vector<TensorSpec> specs_;
  std::vector<std::vector<DeviceAllocation>> allocations_;  // [tensor][allocation] (copy_layout)
  std::vector<TensorViews> views_;                          // [copy], built once: launches stay allocation-free
  HostTensors host_inputs_;                                 // copy 0, as generated
  std::optional<std::uint64_t> seed_;                       // of the last fill_inputs

  void* pointer(int copy, std::size_t tensor) const { return views_[static_cast<std::size_t>(copy)].get<void>(tensor); }

  // What `compute` (a reference or baseline) makes of the kept inputs, handed to it in place
  // rather than copied (a GEMV's W is 128 MB of doubles at n = k = 4096, and a copy cost as much
  // as the reference): inputs moved in and back when it returns or throws, in-place tensors
  // copied, outputs zeroed. nullopt where it returns false (a family without a baseline). A
  // reference may write only outputs and in-place tensors (check_host_reference holds it to that),
  // so the inputs come back as they were.
  std::optional<HostTensors> compute_on_host(const std::function<bool(HostTensors&)>& compute);
  HostTensors device_expected(const Variant& reference) const;
};

// Where a tensor's copies lie. In an instance of more than 16 copies (with the default 8
// placements only an instance of a quarter of the L2 or less has that many: its copies cover the
// L2 twice) a tensor below 2 MiB (the driver's large page) keeps all its copies in one allocation,
// copy c at c * stride, the stride its bytes rounded up to 256 (the alignment cudaMalloc gives). Those instances have up to a few hundred copies, and
// the driver serves cudaMalloc and cudaFree one call at a time across a host's GPUs: four suite
// shards at once spent 4.4-6.1 s each making instances with an allocation per copy, 2.3-2.7 s
// with shared ones (a 4x H200 host). Every other tensor keeps an allocation per copy: sharing one
// split the naive decodes' per-process medians (9 copies) 5-7% apart where they had agreed within
// 0.6% (docs/timing.md). With one copy (the correctness suite, scripts/sanitize.sh) an allocation
// is the tensor's bytes exactly, so compute-sanitizer's bounds are the tensor's own.
struct CopyLayout {
  int allocations = 1;               // 1: every copy in one allocation; else one per copy
  std::size_t allocation_bytes = 0;  // of each allocation; 0 for an empty tensor
  std::size_t stride = 0;            // in a shared allocation, bytes from one copy's start to the next's
};
CopyLayout copy_layout(std::size_t tensor_bytes, int copies);

// Bytes needed on the device for `copies` copies of a shape's tensors.
std::size_t instance_bytes(const Family& family, const Shape& shape, int copies = 1);

}  // namespace kgate
