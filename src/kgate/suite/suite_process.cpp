#include "kgate/suite/suite_process.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <iostream>
#include <set>
#include <stdexcept>

#include "kgate/base/random.hpp"
#include "kgate/measure/calibration.hpp"
#include "kgate/results/repetitions.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/results/roofline.hpp"
#include "kgate/suite/measure_benchmark.hpp"

namespace kgate {
namespace {

double seconds_since(SuiteProcess::Clock::time_point start) {
  return std::chrono::duration<double>(SuiteProcess::Clock::now() - start).count();
}

void add_phases(RunResults& results, const std::string& pass, const PhaseSeconds& phases) {
  for (const auto& [phase, seconds] : phases) results.context.wall_s[pass + "." + phase] += seconds;
}

// A fresh run's context: the device, the build and the command, and how this run was asked to
// time (l2_flush), which part of the suite and which GPU it had, for `kgate merge` (docs/ci.md).
RunResults fresh_results(const DeviceInfo& device, const SuiteOptions& options, const SuiteBuild& suite, const std::string& command_line) {
  RunResults results;
  results.context = make_run_context(device, suite, command_line);
  results.context.extra["l2_flush"] = std::string(to_string(options.timing.flush));
  if (options.shard) results.context.extra["shard"] = options.shard->text();
  if (!options.shard_durations.empty()) results.context.extra["shard_durations"] = options.shard_durations;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) results.context.extra["cuda_visible_devices"] = visible;
  return results;
}

// Folds a measurement (an earlier process's, or another repetition) into the record already
// there: more samples of the same distribution. A failure in any repetition is the benchmark's
// result. Returns the record as it now stands.
const BenchmarkRecord& pool_record(RunResults& results, BenchmarkRecord record) {
  for (BenchmarkRecord& existing : results.benchmarks) {
    if (existing.name != record.name) continue;
    if (is_repetition(existing, record)) pool_repetition(existing, record, results.context.calibration);
    else if (record.status == BenchmarkStatus::failed) existing = std::move(record);
    return existing;
  }
  return results.benchmarks.emplace_back(std::move(record));
}

std::vector<std::string> all_benchmark_names(const Registry& registry, const std::vector<WorkloadPlan>& workloads,
                                             const std::vector<CallableBenchmark>& callables) {
  std::vector<std::string> names;
  for (const Variant* v : registry.variants())
    for (const Shape& s : registry.find_family(v->info.family)->bench_shapes()) names.push_back(benchmark_name(*v, s));
  for (const WorkloadPlan& w : workloads) names.push_back(w.name);
  for (const CallableBenchmark& c : callables) names.push_back(c.name);
  std::set<std::string> seen;
  for (const std::string& name : names)
    if (!seen.insert(name).second) throw std::invalid_argument("two benchmarks are named " + name);
  return names;
}

}  // namespace

std::vector<std::string> suite_benchmark_names(const SuiteOptions& options, const std::vector<CallableBenchmark>& callables,
                                               const Registry& registry, const WorkloadRegistry& workloads) {
  registry.validate();
  std::vector<std::string> names = all_benchmark_names(registry, plan_workloads(options.workloads, workloads), callables);
  if (!options.shard || !options.shard_claims.empty()) return names;
  std::map<std::string, double> durations;
  if (!options.shard_durations.empty()) durations = benchmark_durations(read_results_file(options.shard_durations));
  return split_into_shards(names, options.shard->count, durations)[static_cast<std::size_t>(options.shard->index)];
}

std::vector<std::string> others_last_first(const std::vector<std::string>& suite, const std::function<bool(const std::string&)>& own) {
  std::vector<std::string> others;
  std::copy_if(suite.rbegin(), suite.rend(), std::back_inserter(others), [&](const std::string& name) { return !own(name); });
  return others;
}

SuiteProcess::SuiteProcess(const DeviceInfo& device, const SuiteOptions& options, const SuiteBuild& suite, const std::string& command_line,
                           Clock::time_point started, std::vector<CallableBenchmark> callables)
    : SuiteProcess(device, options, fresh_results(device, options, suite, command_line), started, true, std::move(callables)) {}

SuiteProcess::SuiteProcess(const DeviceInfo& device, const SuiteOptions& options, RunResults handed_over, Clock::time_point started,
                           std::vector<CallableBenchmark> callables)
    : SuiteProcess(device, options, std::move(handed_over), started, false, std::move(callables)) {}

SuiteProcess::SuiteProcess(const DeviceInfo& device, const SuiteOptions& options, RunResults results, Clock::time_point started, bool fresh,
                           std::vector<CallableBenchmark> callables)
    : device_(device),
      registry_(Registry::instance()),
      results_(std::move(results)),
      process_(timing_process(results_, options.processes)),
      options_(options_for_process(options, process_)),
      names_(suite_benchmark_names(options, callables)),
      timer_(device, options_.timing),
      phase_start_(started),
      fresh_(fresh) {
  // Where the shards claim their benchmarks, the later processes measure what the first claimed,
  // and the last, once done with those, may take other shards' (others_last_first).
  if (!options.shard_claims.empty() && process_.index > 0) {
    const auto own = [&](const std::string& name) { return record(name) != nullptr; };
    if (process_.last()) others_ = others_last_first(names_, own);
    std::erase_if(names_, [&](const std::string& name) { return !own(name); });
  }
  if (!options.shard_claims.empty() && (process_.index == 0 || process_.last()))
    claims_.emplace(options.shard_claims, options.shard ? options.shard->text() : "?");
  std::set<std::string> in_suite(names_.begin(), names_.end());
  in_suite.insert(others_.begin(), others_.end());
  for (BenchmarkPlan& plan : plan_benchmarks(registry_, device, options_.timing))
    if (in_suite.contains(plan.name)) benchmarks_.push_back(std::move(plan));
  for (WorkloadPlan& plan : plan_workloads(options_.workloads))
    if (in_suite.contains(plan.name)) workloads_.push_back(std::move(plan));
  for (CallableBenchmark& callable : callables)
    if (in_suite.contains(callable.name)) callables_.push_back(std::move(callable));
  using Kind = PlanIndex::Kind;
  for (std::size_t i = 0; i < benchmarks_.size(); ++i) plan_of_[benchmarks_[i].name] = {Kind::variant, i};
  for (std::size_t i = 0; i < workloads_.size(); ++i) plan_of_[workloads_[i].name] = {Kind::workload, i};
  for (std::size_t i = 0; i < callables_.size(); ++i) plan_of_[callables_[i].name] = {Kind::callable, i};
  // The first process traces each benchmark's kernels, the last profiles them all. Metrics asked
  // for by name are tried in the first too, so an unknown one is refused before any timing; the
  // default set is known, and trying it there cost each shard 0.5-1.4 s of startup on a 4x H200
  // host (the driver serves the GPUs' profilers one at a time).
  const bool profiles_here = options_.profile && (process_.last() || !options_.metrics.empty());
  if (options_.counters && (process_.index == 0 || (options_.profile && process_.last())))
    counters_.emplace(options_.metrics, timer_, profiles_here);
  if (shares_last_round())
    for (const std::string& name : names_)
      if (record(name) && due(name)) claims_->offer(name);
  say_timer_fallback();
  end_phase("startup");
}

void SuiteProcess::add_context(const std::map<std::string, std::string>& extra) {
  for (const auto& [key, value] : extra) results_.context.extra[key] = value;
}

const Calibration& SuiteProcess::calibrate() {
  std::cerr << "kgate_bench: measuring the ceilings of " << device_.name << "...\n";
  results_.context.calibration = measure_calibration(device_, timer_);
  const Calibration& c = results_.context.calibration;
  std::fprintf(stderr,
               "kgate_bench: copy %.0f GB/s, read %.0f GB/s (datasheet %.0f GB/s), bf16 GEMM %.0f TFLOP/s, "
               "launch floor %.2f us, graph floor %.2f us; timer %s (tick %.0f ns)\n",
               c.copy_bytes_per_s / 1e9, c.read_bytes_per_s / 1e9, c.datasheet_bytes_per_s / 1e9, c.gemm_flops_per_s / 1e12,
               c.launch_floor_s * 1e6, c.graph_floor_s * 1e6, std::string(to_string(timer_.timer())).c_str(), c.timer_resolution_s * 1e9);
  say_timer_fallback();
  end_phase("calibration");
  return c;
}

void SuiteProcess::claim_calibration() {
  if (!claims_ || !process_.last() || calibration_claimed_) return;
  calibration_claimed_ = true;
  if (!claims_->claim_run_step("calibration")) return;
  end_phase("timing");  // its own benchmarks' timing so far
  const Calibration& c = calibrate();
  for (BenchmarkRecord& r : results_.benchmarks)
    if (r.status == BenchmarkStatus::ok) derive_from_calibration(r, c);
  results_.context.extra["ceilings_measured_by"] = "shard " + (options_.shard ? options_.shard->text() : "?");
}

void SuiteProcess::own_done() {
  if (own_done_) return;
  own_done_ = true;
  claim_calibration();
  if (counted_) return;  // a shard that counts first has
  end_phase("timing");   // its own benchmarks' timing
  count();
}

const BenchmarkRecord* SuiteProcess::record(const std::string& name) const {
  for (const BenchmarkRecord& r : results_.benchmarks)
    if (r.name == name) return &r;
  return nullptr;
}

bool SuiteProcess::due(const std::string& name) const {
  return plan_of_.contains(name) && kgate::due(record(name), process_, options_.repetitions);
}

bool SuiteProcess::take(const std::string& name) {
  if (!due(name)) return false;
  if (!claims_) return true;
  const bool own = record(name) != nullptr;  // in the first process: a repetition of one it claimed
  if (process_.index == 0) return own || claims_->claim(name);
  if (!shares_last_round() || taken_.contains(name)) return true;  // a middle process's, or a repetition
  if (!own) own_done();
  if ((!own && !claims_->offered(name)) || !claims_->claim_last_round(name)) return false;
  taken_.insert(name);
  if (!own) from_others_.insert(name);
  return true;
}

SuiteProcess::Measured SuiteProcess::measure(const std::string& name) {
  const PlanIndex plan = plan_of_.at(name);
  const Calibration& calibration = results_.context.calibration;
  const CounterPass* tracer = counters_ && process_.index == 0 ? &*counters_ : nullptr;
  MeasureOutcome outcome;
  switch (plan.kind) {
    case PlanIndex::Kind::variant: outcome = measure_benchmark(benchmarks_[plan.index], timer_, calibration, options_, tracer); break;
    case PlanIndex::Kind::workload:
      outcome = measure_workload(workloads_[plan.index], registry_, timer_, calibration, options_, tracer != nullptr);
      break;
    case PlanIndex::Kind::callable:
      outcome = measure_callable(callables_[plan.index], device_, timer_, calibration, options_, tracer);
      break;
  }
  say_timer_fallback();
  add_phases(results_, "timing", outcome.phase_s);
  return {pool_record(results_, std::move(outcome.record)), outcome.context_lost};
}

void SuiteProcess::finish_timing() {
  claim_calibration();
  end_phase("timing");
  mark_finished(results_, process_);
}

void SuiteProcess::count() {
  if (counted_) return;
  counted_ = true;
  if (counters_ && options_.profile && process_.last()) {
    add_phases(results_, "counters",
               counters_->run(
                   results_, registry_, [&](BenchmarkRecord& record, RangeProfiler& profiler) { profile_other(record, profiler); },
                   from_others_));
  }
  end_phase("counters");
}

void SuiteProcess::profile_other(BenchmarkRecord& record, RangeProfiler& profiler) const {
  if (record.workload) return profile_workload(record, registry_, profiler);
  for (const CallableBenchmark& callable : callables_) {
    if (callable.name != record.name) continue;
    // One copy on the default stream, as the counter pass launches variants.
    const CallableInstance instance = callable.instantiate(derive_seed(benchmark_seed(), record.name));
    instance.prepare(false);  // its compile, outside the profiled range
    record.metrics = profiler.profile([&] { instance.launch(0, nullptr); }).combined;
  }
}

void SuiteProcess::end_phase(const std::string& phase) {
  results_.context.wall_s[phase] += seconds_since(phase_start_);
  phase_start_ = Clock::now();
}

// Said once per process, when it happens: at the start (CUPTI unusable here) or mid-run (CUPTI
// failed on a benchmark, and the timer went on with events).
void SuiteProcess::say_timer_fallback() {
  if (fallback_said_ || timer_.timer_fallback_reason().empty()) return;
  fallback_said_ = true;
  std::cerr << "kgate_bench: warning: " << to_string(options_.timing.timer) << " timing is unavailable (" << timer_.timer_fallback_reason()
            << "); samples from here on are CUDA-event-timed (\"timer\": \"events\"), "
            << "which adds 2-4 us of launch overhead per sample and cannot be compared with CUPTI-timed baselines\n";
}

}  // namespace kgate
