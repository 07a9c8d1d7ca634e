#pragma once
// The suite's kernel benchmarks as a plan, before any of them runs: every registered variant x bench
// shape, named, with its input copies and, where it cannot run on this device, why.
#include <cstddef>
#include <string>
#include <vector>

#include "kgate/core/registry.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/measure/timing.hpp"

namespace kgate {

struct BenchmarkPlan {
  const Family* family;
  const Variant* variant;
  Shape shape;
  std::string name;         // "<family>/<variant>/<shape id>"
  int copies = 1;           // input copies rotated in cold mode (input_copies)
  std::string skip_reason;  // set when the benchmark cannot run on this device
};

// "<family>/<variant>/<shape id>": the one name a benchmark has in results, baselines and filters.
inline std::string benchmark_name(const Variant& variant, const Shape& shape) { return variant.info.full_name() + "/" + shape.id(); }

// Input copies a cold benchmark rotates among, each a separate allocation: where one copy fits in
// the L2, enough to cover it twice, so that no sample finds its inputs resident (at most
// kMaxInputCopies); and at least `placements` where they fit in `budget_bytes`. The second is for
// reproducibility: where one allocation lands in DRAM moves a bandwidth-bound kernel's median by
// up to 4% (on an H200 the medians of 8 allocations in one process spread by 1.3-3.9% for GEMV at
// n 28672, 235 MB), and a median over 8 placements does not hang on one. What else differs
// between processes remains (docs/timing.md).
int input_copies(std::size_t bytes_per_copy, std::size_t l2_bytes, int placements, double budget_bytes);

// Device memory a benchmark's instances may take: most of what is free, leaving room for the flush
// buffer, cuBLAS workspaces and the counter pass.
double usable_device_bytes(const DeviceInfo& device);

// input_copies for an instance of `bytes_per_copy` bytes on `device`, with the timing's placements
// and budget, the budget held under `usable_bytes` (usable_device_bytes): the copies of a variant's
// and of a front door's callable alike.
int planned_input_copies(std::size_t bytes_per_copy, const DeviceInfo& device, const TimingOptions& timing, double usable_bytes);

// Every registered variant x bench shape, with input copies planned (input_copies) and skips
// decided against the device (compute capability, memory).
std::vector<BenchmarkPlan> plan_benchmarks(const Registry& registry, const DeviceInfo& device, const TimingOptions& timing);

}  // namespace kgate
