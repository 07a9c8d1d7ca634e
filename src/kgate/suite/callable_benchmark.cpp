#include "kgate/suite/callable_benchmark.hpp"

#include <chrono>

#include "kgate/base/random.hpp"
#include "kgate/suite/benchmark_plan.hpp"

namespace kgate {

MeasureOutcome measure_callable(const CallableBenchmark& benchmark, const DeviceInfo& device, GpuTimer& timer,
                                const Calibration& calibration, const SuiteOptions& options, const CounterPass* cupti) {
  const auto started = std::chrono::steady_clock::now();
  MeasureOutcome outcome;
  BenchmarkRecord& r = outcome.record;
  r.name = benchmark.name;
  r.family = benchmark.family;
  r.variant = benchmark.variant;
  r.shape = benchmark.shape;
  r.role = benchmark.role;
  r.follows = benchmark.follows;
  r.min_bytes = benchmark.min_bytes;
  r.flops = benchmark.flops;
  r.headline_mode = headline_mode(benchmark.headline, options);
  r.provenance = benchmark.provenance;

  PhaseClock clock(outcome.phase_s);
  record_faults(outcome, [&] {
    CallableInstance instance = benchmark.instantiate(derive_seed(benchmark_seed(), benchmark.name));
    // Whether to check is known once copy 0 exists (its size), and the reference is kept only
    // then: an fp64 reference of a large instance would cost the front door more than its timing.
    const std::string unchecked = unchecked_reason(benchmark.checked_at_any_size ? 0 : instance.bytes_per_copy, options);
    for (const auto& [key, value] : instance.prepare(unchecked.empty())) r.provenance[key] = value;
    const int copies = planned_input_copies(instance.bytes_per_copy, device, options.timing, usable_device_bytes(device));
    if (copies > 1) instance.make_copies(copies);
    clock.lap("instance");
    const InstanceUnderTest under_test{.launch = instance.launch,
                                       .copies = copies,
                                       .check = unchecked.empty() ? instance.check : nullptr,
                                       .unchecked_reason = unchecked,
                                       .read_dominated = benchmark.read_dominated};
    measure_instance(r, under_test, timer, calibration, options, cupti, clock);
  });
  clock.lap("release");  // the instance's tensors dropped by the front door
  r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

}  // namespace kgate
