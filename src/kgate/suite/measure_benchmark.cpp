#include "kgate/suite/measure_benchmark.hpp"

#include <chrono>
#include <string>

#include "kgate/base/random.hpp"
#include "kgate/results/roofline.hpp"

namespace kgate {
namespace {

// Above this the benchmark skips its correctness check: generating inputs on the host and the
// fp64 reference take longer than the timing (at 64 MiB they were over half of an H200 suite's
// timing phase, the GEMV shapes alone ~1 s each). The correctness suite covers small shapes.
constexpr std::size_t kMaxCheckedBytes = std::size_t(16) << 20;

}  // namespace

std::string unchecked_reason(std::size_t bytes_per_copy, const SuiteOptions& options) {
  if (!options.check) return "not checked (--kgate_check=off)";
  if (bytes_per_copy <= kMaxCheckedBytes) return {};
  return "not checked: the instance is larger than the " + std::to_string(kMaxCheckedBytes >> 20) +
         " MiB checked in benchmarks (the correctness suite covers small shapes)";
}

std::string headline_mode(TimingMode family_headline, const SuiteOptions& options) {
  return family_headline == TimingMode::hot && options.hot ? "hot" : options.cold ? "cold" : "hot";
}

void measure_instance(BenchmarkRecord& r, const InstanceUnderTest& instance, GpuTimer& timer, const Calibration& calibration,
                      const SuiteOptions& options, const CounterPass* cupti, PhaseClock& clock) {
  r.first_launch_s = timer.first_launch_s(instance.launch);
  if (instance.check) {
    const InstanceCheck result = instance.check();
    r.correct = result.passed();
    r.correctness_detail = result.describe();
  } else {
    r.correctness_detail = instance.unchecked_reason;
  }
  clock.lap("check");
  if (cupti) {
    r.kernels = cupti->trace([&] { instance.launch(0, timer.stream()); });
  }
  clock.lap("trace");
  if (options.measures("cold", r.headline_mode)) r.cold = timer.measure_cold(instance.launch, instance.copies);
  clock.lap("cold");
  if (options.measures("hot", r.headline_mode)) r.hot = timer.measure_hot(instance.launch, cold_median(r));
  clock.lap("hot");
  r.memory_ceiling = instance.read_dominated ? "read" : "copy";
  derive_from_calibration(r, calibration);
}

MeasureOutcome measure_benchmark(const BenchmarkPlan& plan, GpuTimer& timer, const Calibration& calibration, const SuiteOptions& options,
                                 const CounterPass* cupti) {
  const auto started = std::chrono::steady_clock::now();
  MeasureOutcome outcome;
  BenchmarkRecord& r = outcome.record;
  r.name = plan.name;
  r.family = plan.family->name();
  r.variant = plan.variant->info.name;
  r.shape = plan.shape.id();
  r.role = std::string(to_string(plan.variant->info.role));
  r.follows = plan.variant->info.follows;
  r.min_bytes = plan.family->min_bytes(plan.shape);
  r.flops = plan.family->flops(plan.shape);
  r.headline_mode = headline_mode(plan.family->headline_mode(), options);
  if (!plan.skip_reason.empty()) {
    r.status = BenchmarkStatus::skipped;
    r.error = plan.skip_reason;
    return outcome;
  }

  PhaseClock clock(outcome.phase_s);
  record_faults(outcome, [&] {
    const std::string unchecked = unchecked_reason(instance_bytes(*plan.family, plan.shape), options);
    const bool check = unchecked.empty();
    ProblemInstance instance(*plan.family, plan.shape, plan.copies);
    instance.fill_inputs(derive_seed(benchmark_seed(), plan.name), check, timer.stream());
    instance.poison_outputs(timer.stream());
    clock.lap("instance");
    const InstanceUnderTest under_test{.launch = [&](int copy, cudaStream_t stream) { plan.variant->launch(instance, copy, stream); },
                                       .copies = plan.copies,
                                       .check = check ? std::function<InstanceCheck()>([&] { return instance.check(); }) : nullptr,
                                       .unchecked_reason = unchecked,
                                       .read_dominated = plan.family->read_dominated()};
    measure_instance(r, under_test, timer, calibration, options, cupti, clock);
  });
  clock.lap("release");  // the instance's memory freed: calls the driver serves one at a time across a host's GPUs
  r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

}  // namespace kgate
