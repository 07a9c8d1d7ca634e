#pragma once
// One benchmark, start to finish: instance, first launch, correctness check, kernel records, cold
// and hot timing, and the derived figures. Faults are caught and recorded, never propagated.
#include <optional>

#include "kgate/base/phase_clock.hpp"
#include "kgate/core/cuda_check.hpp"
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
MeasureOutcome measure_benchmark(const BenchmarkPlan& plan, GpuTimer& timer, const Calibration& calibration, const SuiteOptions& options,
                                 const CounterPass* cupti);

}  // namespace kgate
