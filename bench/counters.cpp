#include "counters.hpp"

#include <iostream>

#include "kgate/cupti.hpp"
#include "kgate/random.hpp"

namespace kgate::bench {

CounterPass::CounterPass(std::vector<std::string> metrics, GpuTimer& timer)
    : flush_(timer.options().flush),
      counters_unavailable_(counters_unavailable_reason()),
      activity_unavailable_(activity_unavailable_reason()) {
  if (!activity_unavailable_.empty())
    std::cerr << "kgate_bench: warning: kernel records unavailable (" << activity_unavailable_ << ")\n";
  if (!counters_unavailable_.empty()) {
    std::cerr << "kgate_bench: warning: hardware counters unavailable (" << counters_unavailable_
              << "); timings are recorded without them\n";
    return;
  }
  try {
    profiler_ = std::make_unique<RangeProfiler>(metrics.empty() ? default_range_metrics() : std::move(metrics),
                                                [&timer] { timer.flush_l2(); });
  } catch (const ProfilerError& e) {
    throw UnknownMetrics(e.what());
  }
}

std::vector<KernelRecord> CounterPass::trace(const std::function<void()>& launch_once) const {
  if (!activity_unavailable_.empty()) return {};
  KernelTrace trace;
  trace.start();
  launch_once();
  return trace.stop();
}

void CounterPass::run(RunResults& results, const Registry& registry, const ProfileOther& profile_other) {
  if (profiler_) {
    results.context.extra["counters_replay"] = "user";
    results.context.extra["counters_l2_flush"] = std::string(to_string(flush_));
  }
  for (BenchmarkRecord& record : results.benchmarks) {
    if (record.status != BenchmarkStatus::ok) continue;
    if (!profiler_) {
      record.metrics_unavailable = counters_unavailable_;
      continue;
    }
    const Variant* variant = registry.find_variant(record.family + "/" + record.variant);
    const Family* family = registry.find_family(record.family);
    try {
      if (!variant || !family) {
        if (profile_other) profile_other(record, *profiler_);
        continue;
      }
      ProblemInstance instance(*family, Shape::parse(record.shape));
      instance.fill_inputs(derive_seed(benchmark_seed(), record.name), false);
      instance.poison_outputs();
      // No inputs restored between passes: an in-place variant (RoPE, fused add + RMSNorm) runs
      // each pass on the last one's output, the same work and so the same counters.
      record.metrics = profiler_->profile([&] { variant->launch(instance, 0, nullptr); }).combined;
    } catch (const std::exception& e) {
      record.metrics_unavailable = e.what();
    }
  }
}

}  // namespace kgate::bench
