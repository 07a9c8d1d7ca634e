#pragma once
// What a kernel family says about each buffer of a problem: its size, type and role. The
// harness allocates, fills, poisons and checks buffers from these declarations, so a family
// never writes that code itself.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kgate/core/accuracy.hpp"
#include "kgate/base/dtype.hpp"
#include "kgate/base/random.hpp"

namespace kgate {

enum class Access {
  input,   // read only: random contents, not checked
  output,  // written only: poisoned before the launch, every element checked
  inout,   // updated in place: random contents, checked against the reference afterwards
  // Workspace a variant may use between its kernels (split-K partials): allocated per copy and
  // poisoned like an output, so a kernel that reads scratch it never wrote produces NaN; never
  // filled, never checked, and not part of a family's min_bytes.
  scratch,
  // Workspace that must hold zeros when a launch starts (arrival counters, semaphores, as
  // CUTLASS's stream-K requires): allocated per copy and zero-filled once, when the instance is
  // created, and never again, so a launch must leave it zeroed as it found it. Launches then need
  // no memset between them and replay from a CUDA graph as they run. The check requires it to
  // read zero after the launch; otherwise like scratch: never filled, not part of min_bytes.
  zeroed_scratch,
};

// Fills a host buffer of `count` values (as doubles) for tensors that are not plain random
// numbers: positions, page tables, sequence lengths.
using CustomInit = std::function<void(std::uint64_t seed, std::span<double> values)>;

struct TensorSpec {
  std::string name;
  DType dtype;
  std::size_t count;
  Access access;
  Distribution distribution{};
  CustomInit custom_init{};  // when set, used instead of `distribution`
  // Set beside a custom_init that ignores its seed, naming what the values depend on (a model's
  // precomputed table, e.g. RoPE's cos/sin cache for one head_dim): generated once per process
  // and copied into every input copy and instance (kgate/core/host_values.hpp) instead of regenerated.
  std::string shared_init_key{};
  // For a checked tensor whose precision differs from the family's main output (an fp32
  // log-sum-exp beside a bf16 output): used instead of Family::tolerance(shape), and final: a
  // family's baseline (Family::baseline) widens only the tensors checked with the family's.
  std::optional<Tolerance> tolerance{};

  std::size_t bytes() const;
};

// Device pointers of one copy of a problem's tensors, in the family's declaration order.
class TensorViews {
 public:
  explicit TensorViews(std::vector<void*> pointers) : pointers_(std::move(pointers)) {}
  template <class T>
  T* get(std::size_t index) const {
    return static_cast<T*>(pointers_.at(index));
  }

 private:
  std::vector<void*> pointers_;
};

// Host values of every tensor, as doubles, in declaration order. For the reference: inputs and
// in-place tensors hold what the kernel was given; the reference overwrites the entries of the
// tensors it checks (outputs and in-place tensors) with their expected values.
using HostTensors = std::vector<std::vector<double>>;

}  // namespace kgate
