#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kgate/results/detectable.hpp"
#include "kgate/base/random.hpp"
#include "kgate/base/text.hpp"
#include "kgate/results/roofline.hpp"

namespace kgate::bench {
namespace {

// Above this the benchmark skips its correctness check: generating inputs on the host and the
// fp64 reference take longer than the timing (at 64 MiB they were over half of an H200 suite's
// timing phase, the GEMV shapes alone ~1 s each). The correctness suite covers small shapes.
constexpr std::size_t kMaxCheckedBytes = std::size_t(16) << 20;

std::string gib(double bytes) { return printf_string("%.1f GiB", bytes / double(1ull << 30)); }

}  // namespace

int input_copies(std::size_t bytes_per_copy, std::size_t l2_bytes, int placements, double budget_bytes) {
  if (bytes_per_copy == 0) return 1;
  const double per_copy = static_cast<double>(bytes_per_copy);
  const double l2_cover = bytes_per_copy >= l2_bytes ? 1 : std::ceil(2.0 * static_cast<double>(l2_bytes) / per_copy);
  const double placed = std::min<double>(placements, std::floor(budget_bytes / per_copy));
  return static_cast<int>(std::max({1.0, std::min<double>(l2_cover, kMaxInputCopies), placed}));
}

double usable_device_bytes(const DeviceInfo& device) {
  std::size_t free_bytes = 0, total_bytes = 0;
  KGATE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return 0.85 * static_cast<double>(free_bytes) - 2.0 * static_cast<double>(device.l2_bytes);
}

std::vector<BenchmarkPlan> plan_benchmarks(const Registry& registry, const DeviceInfo& device, const TimingOptions& timing) {
  const double usable = usable_device_bytes(device);

  std::vector<BenchmarkPlan> plans;
  for (const Variant* variant : registry.variants()) {
    const Family* family = registry.find_family(variant->info.family);
    for (const Shape& shape : family->bench_shapes()) {
      BenchmarkPlan plan{family, variant, shape, benchmark_name(*variant, shape), 1, {}};
      const std::size_t per_copy = instance_bytes(*family, shape);
      plan.copies = input_copies(per_copy, device.l2_bytes, timing.input_placements,
                                 std::min(timing.placement_budget_bytes, usable));
      if (device.compute_capability < variant->info.min_compute_capability) {
        plan.skip_reason = "needs compute capability " + std::to_string(variant->info.min_compute_capability) + ", " +
                           device.name + " has " + std::to_string(device.compute_capability);
      } else if (variant->info.max_bench_flops > 0 && family->flops(shape) > variant->info.max_bench_flops) {
        plan.skip_reason = "not benchmarked: " + std::to_string(static_cast<long long>(family->flops(shape) / 1e9)) +
                           " GFLOP is above this variant's benchmark limit of " +
                           std::to_string(static_cast<long long>(variant->info.max_bench_flops / 1e9)) + " GFLOP";
      } else if (static_cast<double>(per_copy) > usable) {
        plan.skip_reason = "needs " + gib(static_cast<double>(per_copy)) + " of device memory, " + gib(usable) + " usable";
      }
      plans.push_back(std::move(plan));
    }
  }
  return plans;
}


MeasureOutcome measure_benchmark(const BenchmarkPlan& plan, GpuTimer& timer, const Calibration& calibration,
                                 const BenchOptions& options, const CounterPass* cupti) {
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
  r.headline_mode = plan.family->headline_mode() == TimingMode::hot && options.hot ? "hot" : options.cold ? "cold" : "hot";
  if (!plan.skip_reason.empty()) {
    r.status = BenchmarkStatus::skipped;
    r.error = plan.skip_reason;
    return outcome;
  }

  PhaseClock clock(outcome.phase_s);
  record_faults(outcome, [&] {
    const std::size_t per_copy = instance_bytes(*plan.family, plan.shape);
    const bool check = options.check && per_copy <= kMaxCheckedBytes;
    ProblemInstance instance(*plan.family, plan.shape, plan.copies);
    instance.fill_inputs(derive_seed(benchmark_seed(), plan.name), check, timer.stream());
    instance.poison_outputs(timer.stream());
    const CopyLaunch launch = [&](int copy, cudaStream_t stream) { plan.variant->launch(instance, copy, stream); };

    clock.lap("instance");
    r.first_launch_s = timer.first_launch_s(launch);
    if (check) {
      const InstanceCheck result = instance.check();
      r.correct = result.passed();
      r.correctness_detail = result.describe();
    } else {
      r.correctness_detail = options.check ? "not checked: the instance is larger than the " +
                                                 std::to_string(kMaxCheckedBytes >> 20) +
                                                 " MiB checked in benchmarks (the correctness suite covers small shapes)"
                                           : "not checked (--kgate_check=off)";
    }
    clock.lap("check");
    if (cupti) {
      r.kernels = cupti->trace([&] { launch(0, timer.stream()); });
    }
    clock.lap("trace");
    if (options.measures("cold", r.headline_mode)) r.cold = timer.measure_cold(launch, plan.copies);
    clock.lap("cold");
    if (options.measures("hot", r.headline_mode)) r.hot = timer.measure_hot(launch, cold_median(r));
    clock.lap("hot");
    r.memory_ceiling = plan.family->read_dominated() ? "read" : "copy";
    place_record_on_roofline(r, calibration);
    note_detectable_change(r, calibration.timer_resolution_s);
  });
  r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

}  // namespace kgate::bench
