#include "kgate/suite/counter_pass.hpp"

#include <iostream>
#include <stdexcept>
#include <utility>

#include "kgate/measure/cupti.hpp"
#include "kgate/base/random.hpp"

namespace kgate {

CounterPass::CounterPass(std::vector<std::string> metrics, GpuTimer& timer, bool profile)
    : flush_(timer.options().flush),
      setup_kernels_(timer.flush_kernels()),
      counters_unavailable_(profile ? counters_unavailable_reason() : "not asked for (--kgate_counters=trace)"),
      activity_unavailable_(activity_unavailable_reason()) {
  if (!activity_unavailable_.empty()) std::cerr << "kgate_bench: warning: kernel records unavailable (" << activity_unavailable_ << ")\n";
  if (!profile) return;
  if (!counters_unavailable_.empty()) {
    std::cerr << "kgate_bench: warning: hardware counters unavailable (" << counters_unavailable_
              << "); timings are recorded without them\n";
    return;
  }
  try {
    profiler_ =
        std::make_unique<RangeProfiler>(metrics.empty() ? default_range_metrics() : std::move(metrics), [&timer] { timer.flush_l2(); });
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

namespace {

// A batch's instances are all alive at once; beyond this they are profiled in several batches.
constexpr std::size_t kMaxBatchBytes = std::size_t{2} << 30;

// The kernels one call of the record's variant launches, from its Activity trace (0: unknown).
std::size_t kernels_per_call(const BenchmarkRecord& record) {
  std::size_t kernels = 0;
  for (const KernelRecord& kernel : record.kernels) kernels += static_cast<std::size_t>(kernel.launches);
  return kernels;
}

}  // namespace

PhaseSeconds CounterPass::run(RunResults& results, const Registry& registry, const ProfileOther& profile_other,
                              const std::set<std::string>& counted_elsewhere) {
  if (std::exchange(ran_, true)) throw std::logic_error("CounterPass::run: the pass already ran (its profiler is released)");
  PhaseSeconds phase_s;
  PhaseClock clock(phase_s);
  if (profiler_) {
    results.context.extra["counters_replay"] = "user";
    results.context.extra["counters_l2_flush"] = std::string(to_string(flush_));
  }

  // Benchmarks whose kernels per call are known are profiled in batches, one replay session each;
  // a batch CUPTI cannot attribute (a call launched other kernels than traced) is profiled again
  // one benchmark at a time.
  struct Pending {
    BenchmarkRecord* record;
    const Variant* variant;
    std::unique_ptr<ProblemInstance> instance;
    std::size_t kernels;
    void launch() const { variant->launch(*instance, 0, nullptr); }
  };
  std::vector<Pending> batch;
  std::size_t batch_ranges = 0, batch_bytes = 0;
  const auto profile_alone = [&](Pending& p) {
    try {
      // No inputs restored between passes: an in-place variant (RoPE, fused add + RMSNorm) runs
      // each pass on the last one's output, the same work and so the same counters.
      p.record->metrics = profiler_->profile([&] { p.launch(); }).combined;
    } catch (const std::exception& e) {
      p.record->metrics_unavailable = e.what();
    }
  };
  const auto profile_batch = [&] {
    if (batch.size() == 1) {
      profile_alone(batch.front());
    } else if (!batch.empty()) {
      std::vector<RangeProfiler::BatchedCall> calls;
      for (const Pending& p : batch) calls.push_back({[&p] { p.launch(); }, p.kernels});
      try {
        std::vector<RangeProfile> profiles = profiler_->profile_batch(calls, *setup_kernels_);
        for (std::size_t i = 0; i < batch.size(); ++i) batch[i].record->metrics = std::move(profiles[i].combined);
      } catch (const std::exception&) {
        for (Pending& p : batch) profile_alone(p);
      }
    }
    clock.lap("profile");
    batch.clear();
    batch_ranges = batch_bytes = 0;
    clock.lap("instance");  // freeing the instances
  };

  for (BenchmarkRecord& record : results.benchmarks) {
    if (record.status != BenchmarkStatus::ok || !record.metrics.empty() || !record.metrics_unavailable.empty() ||
        counted_elsewhere.contains(record.name))
      continue;
    if (!profiler_) {
      record.metrics_unavailable = counters_unavailable_;
      continue;
    }
    const Variant* variant = registry.find_variant(record.family + "/" + record.variant);
    const Family* family = registry.find_family(record.family);
    if (!variant || !family) {
      try {
        if (profile_other) profile_other(record, *profiler_);
      } catch (const std::exception& e) {
        record.metrics_unavailable = e.what();
      }
      clock.lap("profile");
      continue;
    }
    Pending pending{&record, variant, nullptr, kernels_per_call(record)};
    try {
      const Shape shape = Shape::parse(record.shape);
      const std::size_t bytes = instance_bytes(*family, shape);
      const std::size_t ranges = setup_kernels_ ? *setup_kernels_ + pending.kernels : 0;
      const bool batchable = setup_kernels_ && pending.kernels > 0 && ranges <= kMaxRangesPerProfile;
      if (!batchable || batch_ranges + ranges > kMaxRangesPerProfile || batch_bytes + bytes > kMaxBatchBytes) profile_batch();
      pending.instance = std::make_unique<ProblemInstance>(*family, shape);
      pending.instance->fill_inputs(derive_seed(benchmark_seed(), record.name), false);
      pending.instance->poison_outputs();
      clock.lap("instance");
      if (!batchable) {
        profile_alone(pending);
        clock.lap("profile");
        continue;
      }
      batch.push_back(std::move(pending));
      batch_ranges += ranges;
      batch_bytes += bytes;
    } catch (const std::exception& e) {
      record.metrics_unavailable = e.what();
    }
  }
  profile_batch();
  if (profiler_)
    for (const auto& [step, seconds] : profiler_->seconds_by_step()) phase_s["profile." + step] = seconds;
  profiler_.reset();  // disables the range profiler: a recording (the timer's) may follow
  return phase_s;
}

}  // namespace kgate
