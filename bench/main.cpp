// kgate_bench: every registered variant x benchmark shape as a Google Benchmark benchmark, timed
// on the device (manual time = the headline mode's median), then a CUPTI pass, then the results
// JSON. The timing runs in --kgate_processes fresh processes one after another, each with its
// share of the sampling budget, pooled benchmark by benchmark: each process hands the results so
// far to the next through --kgate_resume, and the last one runs the CUPTI pass and writes the
// results. A variant that poisons the CUDA context is recorded as failed and the process restarts
// itself on the remaining benchmarks the same way, so one fault never loses a suite.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "counters.hpp"
#include "kgate/base/text.hpp"
#include "kgate/core/ctest_gpu.hpp"
#include "kgate/measure/calibration.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/repetitions.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/results/shard.hpp"
#include "listing.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "processes.hpp"
#include "workloads.hpp"

namespace {

using namespace kgate;
using namespace kgate::bench;

constexpr int kMaxRestarts = 50;

std::string flag_value(const std::vector<std::string>& args, const std::string& flag) {
  for (const std::string& a : args) {
    if (a == flag) return "true";
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  }
  return {};
}

// Folds a repetition (an earlier process's, or --benchmark_repetitions) into the record already
// there: more samples of the same distribution. A failure in any repetition is the benchmark's
// result. Returns the record as it now stands.
const BenchmarkRecord& add_record(RunResults& results, BenchmarkRecord record) {
  for (BenchmarkRecord& existing : results.benchmarks) {
    if (existing.name != record.name) continue;
    if (is_repetition(existing, record)) pool_repetition(existing, record, results.context.calibration);
    else if (record.status == BenchmarkStatus::failed) existing = std::move(record);
    return existing;
  }
  return results.benchmarks.emplace_back(std::move(record));
}

const BenchmarkRecord* find_record(const RunResults& results, const std::string& name) {
  for (const BenchmarkRecord& r : results.benchmarks)
    if (r.name == name) return &r;
  return nullptr;
}

// Earlier timing processes print nothing: their samples are part of the pooled figures that the
// last one prints.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Every benchmark of the suite, in its order: each variant x bench shape, then the workloads.
std::vector<std::string> suite_names(const Registry& registry, const std::vector<WorkloadPlan>& workloads) {
  std::vector<std::string> names;
  for (const Variant* v : registry.variants())
    for (const Shape& s : registry.find_family(v->info.family)->bench_shapes()) names.push_back(benchmark_name(*v, s));
  for (const WorkloadPlan& w : workloads) names.push_back(w.name);
  return names;
}

// The benchmarks of this process's shard (--kgate_shard), from every benchmark of the suite in
// its order: each shard process computes the same split on its own.
std::set<std::string> names_in_shard(const BenchOptions& options, const Registry& registry, const std::vector<WorkloadPlan>& workloads) {
  const std::vector<std::string> names = suite_names(registry, workloads);
  std::map<std::string, double> durations;
  if (!options.shard_durations.empty()) durations = benchmark_durations(read_results_file(options.shard_durations));
  const std::vector<std::string> mine = split_into_shards(names, options.shard->count, durations)[static_cast<std::size_t>(options.shard->index)];
  return {mine.begin(), mine.end()};
}

class Progress {
 public:
  Progress(std::size_t total, const TimingProcess& process)
      : total_(total), enabled_(isatty(STDERR_FILENO)),
        prefix_(process.count > 1 ? "process " + std::to_string(process.index + 1) + "/" + std::to_string(process.count) + " " : "") {}
  void starting(const std::string& name) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "%s[%zu/%zu] %s  (%.0f s elapsed", prefix_.c_str(), ++done_, total_, name.c_str(), elapsed);
    if (done_ > 1) std::fprintf(stderr, ", ~%.0f s left", elapsed / double(done_ - 1) * double(total_ - done_ + 1));
    std::fprintf(stderr, ")\n");
  }

 private:
  std::size_t total_, done_ = 0;
  bool enabled_;
  std::string prefix_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Replaces this process with a fresh one that goes on from `results` (--kgate_resume).
[[noreturn]] void continue_in_new_process(const RunResults& results, const std::vector<std::string>& original_args) {
  char path[] = "/tmp/kgate-resume-XXXXXX.json";
  const int fd = mkstemps(path, 5);
  if (fd < 0) std::exit(1);
  close(fd);
  write_results_file(path, to_json(results));
  std::vector<std::string> args;
  for (const std::string& a : original_args)
    if (a.rfind("--kgate_resume=", 0) != 0) args.push_back(a);
  args.push_back(std::string("--kgate_resume=") + path);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execv("/proc/self/exe", argv.data());
  std::perror("kgate_bench: execv");
  std::exit(1);
}

[[noreturn]] void restart_on_remaining(const RunResults& results, const std::vector<std::string>& original_args) {
  const int restarts = std::atoi(std::getenv("KGATE_BENCH_RESTARTS") ? std::getenv("KGATE_BENCH_RESTARTS") : "0");
  if (restarts >= kMaxRestarts) {
    std::cerr << "kgate_bench: " << restarts << " restarts after faults; giving up\n";
    std::exit(1);
  }
  setenv("KGATE_BENCH_RESTARTS", std::to_string(restarts + 1).c_str(), 1);
  std::cerr << "kgate_bench: the CUDA context was lost; restarting on the remaining benchmarks\n";
  continue_in_new_process(results, original_args);
}

void report_to_google_benchmark(benchmark::State& state, const BenchmarkRecord& r) {
  if (r.status != BenchmarkStatus::ok) {
    state.SkipWithError(((r.status == BenchmarkStatus::skipped ? "skipped: " : "failed: ") + r.error).c_str());
    return;
  }
  const double seconds = r.headline_median_s();
  for (auto _ : state) state.SetIterationTime(seconds);
  state.counters["GB/s"] = r.bytes_per_s / 1e9;
  state.counters["TFLOP/s"] = r.flops_per_s / 1e12;
  state.counters["%mem_roof"] = r.pct_of_memory_ceiling;
  if (const TimingRecord* t = r.headline()) {
    state.counters["rsd%"] = t->summary.rel_stddev() * 100;
    state.counters["MHz"] = t->sm_clock_mhz;
  }
}

int run(int argc, char** argv) {
  const auto process_started = std::chrono::steady_clock::now();
  const std::vector<std::string> original_args(argv, argv + argc);
  BenchOptions options;
  try {
    options = parse_bench_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "kgate_bench: " << e.what() << "\n";
    return 2;
  }
  if (options.help) std::cout << bench_usage() << "\nGoogle Benchmark flags:\n";
  if (!options.list_json.empty() && !options.help) return write_registry_listing(options.list_json, options.timing);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  const Registry& registry = Registry::instance();
  registry.validate();
  std::vector<WorkloadPlan> workload_plans;
  try {
    workload_plans = plan_workloads(options.workloads);
  } catch (const std::invalid_argument& e) {
    std::cerr << "kgate_bench: --kgate_workloads: " << e.what() << "\n";
    return 2;
  }
  std::optional<std::set<std::string>> shard;
  if (options.shard) {
    try {
      shard = names_in_shard(options, registry, workload_plans);
    } catch (const ResultsError& e) {
      std::cerr << "kgate_bench: --kgate_shard_durations: " << e.what() << "\n";
      return 2;
    }
  }
  const auto outside_shard = [&](const std::string& name) { return shard && !shard->contains(name); };
  if (!flag_value(original_args, "--benchmark_list_tests").empty() &&
      flag_value(original_args, "--benchmark_list_tests") != "false") {
    // Listing needs no GPU: names come from the registry alone.
    for (const std::string& name : suite_names(registry, workload_plans))
      if (!outside_shard(name)) benchmark::RegisterBenchmark(name.c_str(), [](benchmark::State&) {});
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }

  const DeviceProbe& probe = probe_device();
  if (!probe.device) {
    const std::string unmet = unmet_gpu_requirement(probe.reason);  // KGATE_REQUIRE_GPU=1: the words every GPU program uses
    std::cerr << "kgate_bench: " << (unmet.empty() ? probe.reason + "; nothing to measure" : unmet) << "\n";
    return 1;
  }
  const DeviceInfo& device = *probe.device;

  RunResults results;
  if (!options.resume.empty()) {
    results = read_results_file(options.resume);
    std::remove(options.resume.c_str());
  } else {
    results.context = make_run_context(device, kThisSuite, join(original_args, " "));
    results.context.extra["l2_flush"] = std::string(to_string(options.timing.flush));
    // Which part of the suite and which GPU this process had, for `kgate merge` (docs/ci.md).
    if (options.shard) results.context.extra["shard"] = options.shard->text();
    if (!options.shard_durations.empty()) results.context.extra["shard_durations"] = options.shard_durations;
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) results.context.extra["cuda_visible_devices"] = visible;
  }
  const TimingProcess process = timing_process(results, options.processes);
  const BenchOptions in_process = options_for_process(options, process);
  GpuTimer timer(device, in_process.timing);
  std::optional<CounterPass> counters;
  if (options.counters && (process.index == 0 || process.last())) {
    try {
      counters.emplace(options.metrics, timer);  // unknown metric names are refused here, before any timing
    } catch (const UnknownMetrics& e) {
      std::cerr << "kgate_bench: " << e.what() << "\n";
      return 2;
    }
  }
  const CounterPass* tracer = counters && process.index == 0 ? &*counters : nullptr;
  // Said once per process, when it happens: at the start (CUPTI unusable here) or mid-run (CUPTI
  // failed on a benchmark, and the timer went on with events).
  bool fallback_said = false;
  const auto say_timer_fallback = [&] {
    if (fallback_said || timer.timer_fallback_reason().empty()) return;
    fallback_said = true;
    std::cerr << "kgate_bench: warning: " << to_string(in_process.timing.timer) << " timing is unavailable ("
              << timer.timer_fallback_reason() << "); samples from here on are CUDA-event-timed (\"timer\": \"events\"), "
              << "which adds 2-4 us of launch overhead per sample and cannot be compared with CUPTI-timed baselines\n";
  };
  say_timer_fallback();

  const auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  // Where the harness's own time goes, recorded with the run (harness cost is a figure too).
  const auto add_wall = [&](const std::string& phase, double seconds) {
    const auto it = results.context.extra.find("wall_s." + phase);
    const double before = it == results.context.extra.end() ? 0 : std::stod(it->second);
    results.context.extra["wall_s." + phase] = std::to_string(before + seconds);
  };
  const auto add_walls = [&](const std::string& pass, const PhaseSeconds& phases) {
    for (const auto& [phase, seconds] : phases) add_wall(pass + "." + phase, seconds);
  };
  auto phase_start = process_started;
  auto end_phase = [&](const std::string& phase) {
    add_wall(phase, seconds_since(phase_start));
    phase_start = std::chrono::steady_clock::now();
  };
  end_phase("startup");

  if (options.resume.empty()) {
    std::cerr << "kgate_bench: measuring the ceilings of " << device.name << "...\n";
    results.context.calibration = measure_calibration(device, timer);
    const Calibration& c = results.context.calibration;
    std::fprintf(stderr,
                 "kgate_bench: copy %.0f GB/s, read %.0f GB/s (datasheet %.0f GB/s), bf16 GEMM %.0f TFLOP/s, "
                 "launch floor %.2f us, graph floor %.2f us; timer %s (tick %.0f ns)\n",
                 c.copy_bytes_per_s / 1e9, c.read_bytes_per_s / 1e9, c.datasheet_bytes_per_s / 1e9,
                 c.gemm_flops_per_s / 1e12, c.launch_floor_s * 1e6, c.graph_floor_s * 1e6,
                 std::string(to_string(timer.timer())).c_str(), c.timer_resolution_s * 1e9);
    say_timer_fallback();
  }
  end_phase("calibration");

  std::vector<BenchmarkPlan> plans = plan_benchmarks(registry, device, in_process.timing);
  std::erase_if(plans, [&](const BenchmarkPlan& p) { return outside_shard(p.name); });
  std::erase_if(workload_plans, [&](const WorkloadPlan& p) { return outside_shard(p.name); });
  const std::string repetitions_flag = flag_value(original_args, "--benchmark_repetitions");
  const std::size_t repetitions = repetitions_flag.empty() ? 1 : std::max(1, std::atoi(repetitions_flag.c_str()));
  const auto due_here = [&](const std::string& name) { return due(find_record(results, name), process, repetitions); };
  std::size_t to_measure = 0;
  for (const BenchmarkPlan& p : plans) to_measure += due_here(p.name);
  for (const WorkloadPlan& p : workload_plans) to_measure += due_here(p.name);
  Progress progress(to_measure, process);
  // One Google Benchmark benchmark per plan. Its body measures the benchmark when it is due in
  // this process and reports the record pooled so far (so the last process reports the whole run),
  // and restarts on the remaining benchmarks when a fault lost the context.
  const auto register_measured = [&](const std::string& name, std::function<MeasureOutcome()> measure) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [&, name, measure = std::move(measure)](benchmark::State& state) {
                                   if (!due_here(name)) {
                                     if (const BenchmarkRecord* done = find_record(results, name))
                                       report_to_google_benchmark(state, *done);
                                     return;
                                   }
                                   progress.starting(name);
                                   MeasureOutcome outcome = measure();
                                   say_timer_fallback();
                                   add_walls("timing", outcome.phase_s);
                                   const bool context_lost = outcome.context_lost;
                                   report_to_google_benchmark(state, add_record(results, std::move(outcome.record)));
                                   if (context_lost) restart_on_remaining(results, original_args);
                                 })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  };
  for (const BenchmarkPlan& plan : plans)
    register_measured(plan.name, [&, plan_ptr = &plan] {
      return measure_benchmark(*plan_ptr, timer, results.context.calibration, in_process, tracer);
    });
  for (const WorkloadPlan& plan : workload_plans)
    register_measured(plan.name, [&, plan_ptr = &plan] {
      return measure_workload(*plan_ptr, registry, timer, results.context.calibration, in_process, tracer != nullptr);
    });
  SilentReporter silent;
  if (process.last()) benchmark::RunSpecifiedBenchmarks();
  else benchmark::RunSpecifiedBenchmarks(&silent);
  benchmark::Shutdown();
  end_phase("timing");
  mark_finished(results, process);
  if (!process.last()) continue_in_new_process(results, original_args);

  if (counters) {
    add_walls("counters", counters->run(results, registry, [&](BenchmarkRecord& record, RangeProfiler& profiler) {
                profile_workload(record, registry, profiler);
              }));
  }
  end_phase("counters");
  std::cerr << "kgate_bench: wall time (s):";
  for (const auto& [key, seconds] : results.context.extra) {
    if (!key.starts_with("wall_s.")) continue;
    std::cerr << " " << key.substr(7) << " " << printf_string("%.1f", std::stod(seconds));
  }
  std::cerr << "\n";

  if (options.out.empty() && !options.out_dir.empty()) {
    std::filesystem::create_directories(options.out_dir);
    options.out = (std::filesystem::path(options.out_dir) / run_file_name(results.context)).string();
  }
  if (!options.out.empty()) {
    write_results_file(options.out, to_json(results));
    std::cerr << "kgate_bench: wrote " << results.benchmarks.size() << " benchmarks to " << options.out << "\n";
  }
  const std::string gbench_out = flag_value(original_args, "--benchmark_out");
  const std::string gbench_format = flag_value(original_args, "--benchmark_out_format");
  if (!gbench_out.empty() && (gbench_format.empty() || gbench_format == "json")) {
    nlohmann::json doc = read_json_file(gbench_out);
    attach_kgate_blocks(doc, results);
    write_results_file(gbench_out, doc);
  }
  const bool any_failed = std::any_of(results.benchmarks.begin(), results.benchmarks.end(),
                                      [](const BenchmarkRecord& r) { return r.status == BenchmarkStatus::failed; });
  return any_failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kgate_bench: " << e.what() << "\n";
    return 1;
  }
}
