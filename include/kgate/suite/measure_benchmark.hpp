#pragma once
// One benchmark, start to finish: instance, first launch, correctness check, kernel records, cold
// and hot timing, and the derived figures. Faults are caught and recorded, never propagated.
#include <functional>
#include <optional>
#include <string>

#include "kgate/base/phase_clock.hpp"
#include "kgate/core/check.hpp"
#include "kgate/core/cuda_check.hpp"
#include "kgate/core/family.hpp"
#include "kgate/measure/timing.hpp"
#include "kgate/results/results.hpp"
#include "kgate/suite/benchmark_plan.hpp"
#include "kgate/suite/counter_pass.hpp"
#include "kgate/suite/options.hpp"

namespace kgate {

struct MeasureOutcome {
  BenchmarkRecord record;
  bool context_lost = false;  // a sticky fault: the process must restart to go on
  PhaseSeconds phase_s;       // instance, check, trace, cold, hot: summed into wall_s.timing.<phase>
};

// Runs `measure`, turning what it throws into the record's status, the same way for kernels,
// workloads and a front door's callables: a shape that cannot run here (UnsupportedShape) is
// skipped, any other error fails the benchmark with its message. After a failure the runtime is
// asked whether the context survived: a sticky fault (illegal address, trap) poisons it, and every
// later call fails too. It is asked whatever the error's type, since a front door reports a CUDA
// fault in its own (Triton raises a Python error).
template <class Measure>
void record_faults(MeasureOutcome& outcome, Measure&& measure) {
  BenchmarkRecord& r = outcome.record;
  try {
    measure();
    return;
  } catch (const UnsupportedShape& e) {
    r.status = BenchmarkStatus::skipped;
    r.error = e.what();
    return;
  } catch (const std::exception& e) {
    r.status = BenchmarkStatus::failed;
    r.error = e.what();
  }
  cudaGetLastError();
  outcome.context_lost = cudaDeviceSynchronize() != cudaSuccess || cudaFree(nullptr) != cudaSuccess;
}

// The cold median when the cold mode ran: the hot mode's estimate of one launch.
inline std::optional<double> cold_median(const BenchmarkRecord& r) {
  return r.cold ? std::optional<double>(r.cold->summary.median) : std::nullopt;
}

// Why a benchmark whose instance holds `bytes_per_copy` bytes per input copy is not checked for
// correctness in this run, or empty when it is.
std::string unchecked_reason(std::size_t bytes_per_copy, const SuiteOptions& options);

// The record's headline mode: the family's when this run measures it, else the one it does.
std::string headline_mode(TimingMode family_headline, const SuiteOptions& options);

// What the steps after an instance's creation need of it, whoever made it (a registered variant's
// ProblemInstance, or a front door's callable: callable_benchmark.hpp).
struct InstanceUnderTest {
  CopyLaunch launch;
  int copies = 1;
  std::function<InstanceCheck()> check;  // copy 0's outputs against the reference; empty: not checked
  std::string unchecked_reason;          // why not, when `check` is empty
  bool read_dominated = false;           // placed against the read ceiling rather than the copy ceiling
};

// The steps every benchmark takes once its inputs are filled and its outputs poisoned: the first
// launch, the correctness check, the kernel trace (with `cupti`), cold and hot timing, and the
// roofline and detectable-change figures, each step's wall time lapped on `clock`. Throws what the
// launch throws (record_faults turns it into the record's status).
void measure_instance(BenchmarkRecord& r, const InstanceUnderTest& instance, GpuTimer& timer, const Calibration& calibration,
                      const SuiteOptions& options, const CounterPass* cupti, PhaseClock& clock);

// `cupti` (null when counters are off) traces one launch between the check and the timing.
MeasureOutcome measure_benchmark(const BenchmarkPlan& plan, GpuTimer& timer, const Calibration& calibration, const SuiteOptions& options,
                                 const CounterPass* cupti);

}  // namespace kgate
