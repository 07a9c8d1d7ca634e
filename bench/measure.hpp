#pragma once
// One benchmark, start to finish: instance, first launch, correctness check, kernel records, cold and hot timing,
// and the derived figures. Faults are caught and recorded, never propagated.
#include <map>
#include <optional>
#include <string>

#include "kgate/core/cuda_check.hpp"
#include "kgate/base/phase_clock.hpp"
#include "kgate/core/registry.hpp"
#include "kgate/results/results.hpp"
#include "kgate/measure/timing.hpp"
#include "counters.hpp"
#include "options.hpp"

namespace kgate::bench {

struct BenchmarkPlan {
  const Family* family;
  const Variant* variant;
  Shape shape;
  std::string name;         // "<family>/<variant>/<shape id>"
  int copies = 1;           // input copies rotated in cold mode (input_copies)
  std::string skip_reason;  // set when the benchmark cannot run on this device
};

// "<family>/<variant>/<shape id>": the one name a benchmark has in results, baselines and filters.
inline std::string benchmark_name(const Variant& variant, const Shape& shape) {
  return variant.info.full_name() + "/" + shape.id();
}

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

// Every registered variant x bench shape, with input copies planned (input_copies) and skips
// decided against the device (compute capability, memory).
std::vector<BenchmarkPlan> plan_benchmarks(const Registry& registry, const DeviceInfo& device, const TimingOptions& timing);

struct MeasureOutcome {
  BenchmarkRecord record;
  bool context_lost = false;  // a sticky fault: the process must restart to go on
  PhaseSeconds phase_s;  // instance, check, trace, cold, hot: summed into wall_s.timing.<phase>
};

// Runs `measure`, turning what it throws into the record's status, the same way for kernels and
// workloads: a shape that cannot run here (UnsupportedShape) is skipped, a CUDA error fails the
// benchmark and says whether it poisoned the context, any other error fails it with its message.
template <class Measure>
void record_faults(MeasureOutcome& outcome, Measure&& measure) {
  BenchmarkRecord& r = outcome.record;
  try {
    measure();
  } catch (const UnsupportedShape& e) {
    r.status = BenchmarkStatus::skipped;
    r.error = e.what();
  } catch (const CudaError& e) {
    r.status = BenchmarkStatus::failed;
    r.error = e.what();
    // A sticky fault (illegal address, trap) poisons the context: every later call fails too.
    cudaGetLastError();
    outcome.context_lost = cudaDeviceSynchronize() != cudaSuccess || cudaFree(nullptr) != cudaSuccess;
  } catch (const std::exception& e) {
    r.status = BenchmarkStatus::failed;
    r.error = e.what();
  }
}

// The cold median when the cold mode ran: the hot mode's estimate of one launch.
inline std::optional<double> cold_median(const BenchmarkRecord& r) {
  return r.cold ? std::optional<double>(r.cold->summary.median) : std::nullopt;
}

// `cupti` (null when counters are off) traces one launch between the check and the timing.
MeasureOutcome measure_benchmark(const BenchmarkPlan& plan, GpuTimer& timer, const Calibration& calibration,
                                 const BenchOptions& options, const CounterPass* cupti);

}  // namespace kgate::bench
