#include "kgate/suite/benchmark_plan.hpp"

#include <algorithm>
#include <cmath>

#include "kgate/base/text.hpp"
#include "kgate/core/cuda_check.hpp"

namespace kgate {
namespace {

std::string gib(double bytes) { return printf_string("%.1f GiB", bytes / double(1ull << 30)); }

}  // namespace

int input_copies(std::size_t bytes_per_copy, std::size_t l2_bytes, int placements, double budget_bytes) {
  if (bytes_per_copy == 0) return 1;
  const double per_copy = static_cast<double>(bytes_per_copy);
  const double l2_cover = bytes_per_copy >= l2_bytes ? 1 : std::ceil(2.0 * static_cast<double>(l2_bytes) / per_copy);
  const double placed = std::min<double>(placements, std::floor(budget_bytes / per_copy));
  return static_cast<int>(std::max({1.0, std::min<double>(l2_cover, kMaxInputCopies), placed}));
}

int planned_input_copies(std::size_t bytes_per_copy, const DeviceInfo& device, const TimingOptions& timing, double usable_bytes) {
  return input_copies(bytes_per_copy, device.l2_bytes, timing.input_placements, std::min(timing.placement_budget_bytes, usable_bytes));
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
      plan.copies = planned_input_copies(per_copy, device, timing, usable);
      if (device.compute_capability < variant->info.min_compute_capability) {
        plan.skip_reason = "needs compute capability " + std::to_string(variant->info.min_compute_capability) + ", " + device.name +
                           " has " + std::to_string(device.compute_capability);
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

}  // namespace kgate
