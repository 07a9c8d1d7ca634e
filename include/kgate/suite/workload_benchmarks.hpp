#pragma once
// Workload benchmarks (include/kgate/base/workload.hpp): a layer's step measured as a whole. Each step
// runs on a problem instance of its own — data is not chained from one kernel to the next: every
// kernel reads inputs of its shape, not its predecessor's output, which changes what a kernel
// finds in the L2 only for the small activations (the L2 is flushed before each step anyway).
//
// Per benchmark: each step's variant (the one chosen on the command line, else the first of the
// step's preference that is registered, runs on this device and accepts the shape — trying it is
// its first launch); the kernel timeline (CUPTI activity records of cold runs queued behind the
// timer's hold exactly as cold samples are, tracing off again before the first timed sample); then
// the whole step timed cold (L2 flushed before it) and hot (replayed from a CUDA graph). Hardware
// counters per kernel come from the counter pass, outside any timing (profile_workload).
#include <string>
#include <vector>

#include "kgate/core/registry.hpp"
#include "kgate/results/results.hpp"
#include "kgate/measure/range_profiler.hpp"
#include "kgate/measure/timing.hpp"
#include "kgate/base/workload.hpp"
#include "kgate/suite/measure_benchmark.hpp"
#include "kgate/suite/options.hpp"

namespace kgate {

struct WorkloadPlan {
  WorkloadSpec spec;
  std::string name;
  const Workload* workload = nullptr;
  const ModelConfig* model = nullptr;
  std::vector<WorkloadStep> steps;
};

// `names` (--kgate_workloads), or else every workload's bench points for every model. Needs no
// GPU. Throws std::invalid_argument on a name that names no workload benchmark.
std::vector<WorkloadPlan> plan_workloads(const std::vector<std::string>& names,
                                         const WorkloadRegistry& workloads = WorkloadRegistry::instance());

// `trace_kernels`: record the timeline (off with --kgate_counters=off).
MeasureOutcome measure_workload(const WorkloadPlan& plan, const Registry& registry, GpuTimer& timer, const Calibration& calibration,
                                const SuiteOptions& options, bool trace_kernels);

// The range-profiler counters of each kernel of a workload benchmark that ran: one profiled call of
// its step, on fresh instances of the variants it ran. The counter pass (CounterPass::run) calls
// it, outside any timing, for the records that name no registered variant; throws on a failure,
// which the pass records as the reason the record has no counters.
void profile_workload(BenchmarkRecord& record, const Registry& registry, RangeProfiler& profiler);

}  // namespace kgate
