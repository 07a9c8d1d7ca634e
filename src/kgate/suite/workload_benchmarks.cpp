#include "kgate/suite/workload_benchmarks.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <set>

#include "kgate/measure/cupti.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/base/random.hpp"
#include "kgate/base/text.hpp"
#include "kgate/results/roofline.hpp"

namespace kgate {
namespace {

// Cold runs of the step traced for its timeline: enough for a median run, few enough to be queued
// behind one hold.
constexpr int kTracedRuns = 16;

// A step that cannot run in this build or on this device: the benchmark is skipped, saying why.
class StepUnavailable : public UnsupportedShape {
 public:
  using UnsupportedShape::UnsupportedShape;
};

const Family& family_of(const Registry& registry, const std::string& name) {
  const Family* family = registry.find_family(name);
  if (!family) throw StepUnavailable("family " + name + " is not registered in this build");
  return *family;
}

std::unique_ptr<ProblemInstance> make_instance(const Family& family, const Shape& shape, const std::string& seed_name,
                                               cudaStream_t stream) {
  auto instance = std::make_unique<ProblemInstance>(family, shape);
  instance->fill_inputs(derive_seed(benchmark_seed(), seed_name), false, stream);
  instance->poison_outputs(stream);
  return instance;
}

// A step's instance and the variant that runs it.
struct StepRun {
  const Family* family = nullptr;
  const Variant* variant = nullptr;
  std::unique_ptr<ProblemInstance> instance;
  void launch(cudaStream_t stream) const { variant->launch(*instance, 0, stream); }
};

// The first of the step's candidates that is registered, runs on this device and accepts the
// shape; a variant says it refuses a shape only when launched, so trying one is its first launch.
StepRun choose_variant(const WorkloadStep& step, const WorkloadSpec& spec, const Registry& registry, const DeviceInfo& device,
                       const std::string& seed_name, cudaStream_t stream) {
  StepRun run;
  run.family = &family_of(registry, step.family);
  run.instance = make_instance(*run.family, step.shape, seed_name, stream);
  std::vector<std::string> refusals;
  for (const std::string& name : candidate_variants(step, spec)) {
    const Variant* variant = registry.find_variant(step.family + "/" + name);
    if (!variant) {
      refusals.push_back(name + ": not registered");
      continue;
    }
    if (device.compute_capability < variant->info.min_compute_capability) {
      refusals.push_back(name + ": needs compute capability " + std::to_string(variant->info.min_compute_capability));
      continue;
    }
    try {
      variant->launch(*run.instance, 0, stream);
      KGATE_CUDA_CHECK(cudaStreamSynchronize(stream));
    } catch (const UnsupportedShape& e) {
      refusals.push_back(name + ": " + e.what());
      continue;
    }
    run.variant = variant;
    return run;
  }
  throw StepUnavailable("step " + step.label + " (" + step.family + " at " + step.shape.id() + "): no variant runs it (" +
                        join(refusals, "; ") + ")");
}

// The names of the kernels each step launches, one traced launch per step.
std::vector<std::vector<std::string>> kernels_per_step(const std::vector<StepRun>& steps, cudaStream_t stream) {
  std::vector<std::vector<std::string>> names;
  for (const StepRun& step : steps) {
    KernelTrace trace;
    trace.start();
    step.launch(stream);
    std::vector<std::string>& launched = names.emplace_back();
    for (const KernelLaunch& launch : trace.stop_launches()) launched.push_back(launch.record.name);
    if (launched.empty()) throw ProfilerError("a step launched no kernel that CUPTI recorded");
  }
  return names;
}

double seconds_between(std::uint64_t start_ns, std::uint64_t end_ns) { return static_cast<double>(end_ns - start_ns) * 1e-9; }

// Traces kTracedRuns cold runs of the step, queued and timed as cold samples are, and keeps the
// run whose span (first kernel start to last kernel end) is the median as the timeline.
void record_timeline(WorkloadRecord& workload, std::vector<KernelRecord>& kernels, const std::vector<StepRun>& steps, GpuTimer& timer,
                     const CopyLaunch& step_launch) {
  const std::vector<std::vector<std::string>> names = kernels_per_step(steps, timer.stream());
  std::vector<std::string> expected;
  std::vector<std::size_t> step_of;
  for (std::size_t s = 0; s < names.size(); ++s)
    for (const std::string& name : names[s]) {
      expected.push_back(name);
      step_of.push_back(s);
    }

  KernelTrace trace;
  trace.start();
  workload.traced_event_s = timer.cold_batch(step_launch, kTracedRuns);
  const std::vector<KernelLaunch> launches = trace.stop_launches();
  // Between the runs the trace holds the timer's own kernels (its hold, its L2 flush): a run is the
  // step's kernels in their order, and everything else is passed over.
  std::vector<std::vector<const KernelLaunch*>> runs;
  std::vector<const KernelLaunch*> run;
  for (const KernelLaunch& launch : launches) {
    if (launch.record.name != expected[run.size()]) continue;
    run.push_back(&launch);
    if (run.size() == expected.size()) runs.push_back(std::exchange(run, {}));
  }
  if (runs.size() != static_cast<std::size_t>(kTracedRuns))
    throw ProfilerError("the trace of " + std::to_string(kTracedRuns) + " runs of the step holds " + std::to_string(runs.size()) +
                        " complete runs of its " + std::to_string(expected.size()) + " kernels");
  for (const auto& r : runs) {
    for (const KernelLaunch* launch : r)
      if (launch->end_ns <= launch->start_ns) throw ProfilerError("CUPTI recorded a kernel without its start and end");
    workload.traced_span_s.push_back(seconds_between(r.front()->start_ns, r.back()->end_ns));
  }
  std::vector<std::size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return workload.traced_span_s[a] < workload.traced_span_s[b]; });
  const std::vector<const KernelLaunch*>& median_run = runs[order[order.size() / 2]];

  const std::uint64_t origin = median_run.front()->start_ns;
  std::vector<KernelLaunch> folded;
  for (std::size_t i = 0; i < median_run.size(); ++i) {
    const KernelLaunch& launch = *median_run[i];
    TimelineKernel& k = workload.timeline.emplace_back();
    k.step = step_of[i];
    k.kernel = launch.record;
    k.kernel.launches = 1;
    k.kernel.duration_s = seconds_between(launch.start_ns, launch.end_ns);
    k.start_s = seconds_between(origin, launch.start_ns);
    k.end_s = seconds_between(origin, launch.end_ns);
    folded.push_back(launch);
  }
  kernels = fold_launches(std::move(folded));
}

}  // namespace

std::vector<WorkloadPlan> plan_workloads(const std::vector<std::string>& names, const WorkloadRegistry& workloads) {
  workloads.validate();
  std::vector<WorkloadSpec> specs;
  if (names.empty()) {
    for (const ModelConfig* model : workloads.models())
      for (const Workload* workload : workloads.workloads())
        for (const Shape& point : workload->bench_points()) specs.push_back({model->name, workload->name(), {}, point});
  } else {
    for (const std::string& name : names) specs.push_back(WorkloadSpec::parse(name, workloads));
  }
  std::vector<WorkloadPlan> plans;
  std::set<std::string> seen;
  for (WorkloadSpec& spec : specs) {
    const Workload* workload = workloads.find_workload(spec.workload);
    const ModelConfig* model = workloads.find_model(spec.model);
    std::vector<WorkloadStep> steps = workload->steps(*model, spec.point);
    for (const auto& [family, variant] : spec.chosen)
      if (std::none_of(steps.begin(), steps.end(), [&](const WorkloadStep& s) { return s.family == family; }))
        throw std::invalid_argument("workload benchmark '" + spec.name() + "' chooses a variant of " + family + ", which workload " +
                                    spec.workload + " does not run");
    std::string name = spec.name();
    if (seen.insert(name).second) plans.push_back({std::move(spec), std::move(name), workload, model, std::move(steps)});
  }
  return plans;
}

MeasureOutcome measure_workload(const WorkloadPlan& plan, const Registry& registry, GpuTimer& timer, const Calibration& calibration,
                                const SuiteOptions& options, bool trace_kernels) {
  const auto started = std::chrono::steady_clock::now();
  MeasureOutcome outcome;
  BenchmarkRecord& r = outcome.record;
  r.name = plan.name;
  r.family = kWorkloadFamily;
  r.variant = plan.spec.variant();
  r.shape = plan.spec.point.id();
  r.role = "workload";
  r.headline_mode = options.cold ? "cold" : "hot";
  r.correctness_detail = "not checked: a workload runs variants that the correctness suite checks one by one";
  WorkloadRecord workload;
  workload.workload = plan.spec.workload;
  workload.model = *plan.model;
  workload.tokens = plan.workload->tokens(plan.spec.point);
  record_faults(outcome, [&] {
    const DeviceInfo& device = *probe_device().device;
    std::size_t needed = 0;
    for (const WorkloadStep& step : plan.steps) needed += instance_bytes(family_of(registry, step.family), step.shape);
    const double usable = usable_device_bytes(device);
    if (static_cast<double>(needed) > usable)
      throw StepUnavailable("needs " + std::to_string(needed >> 20) + " MiB of device memory, " +
                            std::to_string(static_cast<long long>(std::max(usable, 0.0)) >> 20) + " MiB usable");

    std::vector<StepRun> steps;
    for (const WorkloadStep& step : plan.steps) {
      steps.push_back(choose_variant(step, plan.spec, registry, device, plan.name + "/" + step.label, timer.stream()));
      const Family& family = *steps.back().family;
      workload.steps.push_back({.label = step.label,
                                .family = step.family,
                                .variant = steps.back().variant->info.name,
                                .shape = step.shape.id(),
                                .min_bytes = family.min_bytes(step.shape),
                                .flops = family.flops(step.shape),
                                .memory_ceiling = family.read_dominated() ? "read" : "copy"});
      r.min_bytes += workload.steps.back().min_bytes;
      r.flops += workload.steps.back().flops;
    }
    const CopyLaunch step_launch = [&](int, cudaStream_t stream) {
      for (const StepRun& step : steps) step.launch(stream);
    };

    if (!trace_kernels) {
      workload.timeline_unavailable = "kernel records are off (--kgate_counters=off)";
    } else {
      try {
        record_timeline(workload, r.kernels, steps, timer, step_launch);
      } catch (const ProfilerError& e) {
        workload.timeline_unavailable = e.what();
        workload.traced_event_s.clear();
        workload.traced_span_s.clear();
        workload.timeline.clear();
      }
    }
    if (options.measures("cold", r.headline_mode)) r.cold = timer.measure_cold(step_launch, 1);
    if (options.measures("hot", r.headline_mode)) r.hot = timer.measure_hot(step_launch, cold_median(r));
    // The ceiling of the traffic that dominates: decode's GEMV and attention mostly read.
    double read_bytes = 0;
    for (const WorkloadStepRecord& step : workload.steps)
      if (step.memory_ceiling == "read") read_bytes += step.min_bytes;
    r.memory_ceiling = 2 * read_bytes >= r.min_bytes ? "read" : "copy";
    derive_from_calibration(r, calibration);
  });
  r.workload = std::move(workload);
  r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

void profile_workload(BenchmarkRecord& record, const Registry& registry, RangeProfiler& profiler) {
  if (!record.workload) return;
  std::vector<StepRun> steps;
  for (const WorkloadStepRecord& step : record.workload->steps) {
    StepRun& run = steps.emplace_back();
    run.family = &family_of(registry, step.family);
    run.variant = registry.find_variant(step.family + "/" + step.variant);
    if (!run.variant) throw StepUnavailable("variant " + step.family + "/" + step.variant + " is not registered in this build");
    run.instance = make_instance(*run.family, Shape::parse(step.shape), record.name + "/" + step.label, nullptr);
  }
  const RangeProfile profile = profiler.profile([&] {
    for (const StepRun& step : steps) step.launch(nullptr);
  });
  record.metrics = profile.combined;
  std::vector<TimelineKernel>& timeline = record.workload->timeline;
  if (profile.kernels.size() == timeline.size()) {
    for (std::size_t i = 0; i < timeline.size(); ++i) timeline[i].metrics = profile.kernels[i].values;
  } else if (!timeline.empty()) {
    record.metrics_unavailable = "the profiled step launched " + std::to_string(profile.kernels.size()) +
                                 " kernels and the timeline holds " + std::to_string(timeline.size()) +
                                 ": counters are recorded for the step only, not per kernel";
  }
}

}  // namespace kgate
