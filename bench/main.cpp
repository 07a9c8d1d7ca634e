// kgate_bench: the suite (src/kgate/suite) behind Google Benchmark's front door. Every registered
// variant x benchmark shape, and every workload benchmark, is a Google Benchmark benchmark whose
// body asks the suite to measure it (manual time = the headline mode's median). The timing runs in
// --kgate_processes fresh processes one after another, each with its share of the sampling
// budget: each process starts the next when its timing begins, so that the next one's start
// overlaps it (next_process.hpp), and hands it the results so far (--kgate_resume) when its timing
// ends; the last one runs the CUPTI counter pass and writes the results. A variant that poisons the
// CUDA context is recorded as failed and the process replaces itself with a fresh one on the
// remaining benchmarks (execv), so one fault never loses a suite. This file holds the flags, the
// adapter, the process chaining and the output; what is measured and how is the suite's.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "flags.hpp"
#include "kgate/base/text.hpp"
#include "kgate/core/ctest_gpu.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/suite/listing.hpp"
#include "kgate/suite/next_process.hpp"
#include "kgate/suite/suite_process.hpp"

namespace {

using namespace kgate;
using namespace kgate::bench;

// A Google Benchmark flag's value as given ("true" for a bare flag), or empty.
std::string gbench_flag(const std::vector<std::string>& args, const std::string& flag) {
  for (const std::string& a : args) {
    if (a == flag) return "true";
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  }
  return {};
}

// Earlier timing processes print nothing: their samples are part of the pooled figures that the
// last one prints.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// What a process measures, as it goes, on a terminal. `total` is 0 where it is not known ahead (a
// shard that claims its benchmarks as it runs).
class Progress {
 public:
  Progress(std::size_t total, const TimingProcess& process)
      : total_(total),
        enabled_(isatty(STDERR_FILENO)),
        prefix_(process.count > 1 ? "process " + std::to_string(process.index + 1) + "/" + std::to_string(process.count) + " " : "") {}
  void starting(const std::string& name) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    ++done_;
    if (total_ == 0) std::fprintf(stderr, "%s[%zu] %s  (%.0f s elapsed", prefix_.c_str(), done_, name.c_str(), elapsed);
    else std::fprintf(stderr, "%s[%zu/%zu] %s  (%.0f s elapsed", prefix_.c_str(), done_, total_, name.c_str(), elapsed);
    if (total_ > 0 && done_ > 1) std::fprintf(stderr, ", ~%.0f s left", elapsed / double(done_ - 1) * double(total_ - done_ + 1));
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
  std::vector<std::string> args = continuation_args(original_args, write_handover(results));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execv("/proc/self/exe", argv.data());
  std::perror("kgate_bench: execv");
  std::exit(1);
}

[[noreturn]] void restart_on_remaining(const RunResults& results, const std::vector<std::string>& original_args) {
  if (!count_restart()) {
    std::cerr << "kgate_bench: " << kMaxRestarts << " restarts after faults; giving up\n";
    std::exit(1);
  }
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
  if (seconds > 0) {  // the rates from the median, also where the ceilings come later (claim_calibration)
    state.counters["GB/s"] = r.min_bytes / seconds / 1e9;
    state.counters["TFLOP/s"] = r.flops / seconds / 1e12;
  }
  if (r.pct_of_memory_ceiling > 0) state.counters["%mem_roof"] = r.pct_of_memory_ceiling;
  if (const TimingRecord* t = r.headline()) {
    state.counters["rsd%"] = t->summary.rel_stddev() * 100;
    state.counters["MHz"] = t->sm_clock_mhz;
  }
}

// One Google Benchmark benchmark per suite benchmark. Its body measures the benchmark when this
// process takes it (due here, and this shard's) and reports the record pooled so far (so the last
// process reports the whole run), and restarts on the remaining benchmarks when a fault lost the
// context.
void register_suite(SuiteProcess& suite, Progress& progress, const std::vector<std::string>& original_args) {
  for (const std::string& name : suite.names()) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [&suite, &progress, &original_args, name](benchmark::State& state) {
                                   if (!suite.take(name)) {
                                     if (const BenchmarkRecord* done = suite.record(name)) report_to_google_benchmark(state, *done);
                                     else state.SkipWithError("skipped: measured by another shard");
                                     return;
                                   }
                                   progress.starting(name);
                                   const SuiteProcess::Measured measured = suite.measure(name);
                                   report_to_google_benchmark(state, measured.record);
                                   if (measured.context_lost) restart_on_remaining(suite.results(), original_args);
                                 })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
}

// The results file(s) the flags ask for: --kgate_out or --kgate_out_dir, and the kgate blocks
// added to Google Benchmark's own --benchmark_out JSON.
void write_outputs(const RunResults& results, const BenchFlags& flags, const std::vector<std::string>& original_args) {
  std::cerr << "kgate_bench: wall time (s):";
  for (const auto& [phase, seconds] : results.context.wall_s) std::cerr << " " << phase << " " << printf_string("%.1f", seconds);
  std::cerr << "\n";
  if (const std::string path = results_path(flags, results.context); !path.empty()) {
    write_results_file(path, to_json(results));
    std::cerr << "kgate_bench: wrote " << results.benchmarks.size() << " benchmarks to " << path << "\n";
  }
  const std::string gbench_out = gbench_flag(original_args, "--benchmark_out");
  const std::string gbench_format = gbench_flag(original_args, "--benchmark_out_format");
  if (!gbench_out.empty() && (gbench_format.empty() || gbench_format == "json")) {
    nlohmann::json doc = read_json_file(gbench_out);
    attach_kgate_blocks(doc, results);
    write_results_file(gbench_out, doc);
  }
}

// The process's share of the run, from nothing or from what the process before handed over.
SuiteProcess start_suite(const DeviceInfo& device, const BenchFlags& flags, const std::vector<std::string>& original_args,
                         std::chrono::steady_clock::time_point started) {
  if (flags.resume.empty()) return SuiteProcess(device, flags.suite, kThisSuite, join(original_args, " "), started);
  RunResults handed_over = read_results_file_may_be_empty(flags.resume);  // a claiming shard's first process may claim none
  std::remove(flags.resume.c_str());
  return SuiteProcess(device, flags.suite, std::move(handed_over), started);
}

int run(int argc, char** argv) {
  auto started = std::chrono::steady_clock::now();
  const std::vector<std::string> original_args(argv, argv + argc);
  BenchFlags flags;
  try {
    flags = parse_bench_flags(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "kgate_bench: " << e.what() << "\n";
    return 2;
  }
  const std::string repetitions = gbench_flag(original_args, "--benchmark_repetitions");
  flags.suite.repetitions = repetitions.empty() ? 1 : std::max(1, std::atoi(repetitions.c_str()));
  if (flags.help) std::cout << bench_usage() << "\nGoogle Benchmark flags:\n";
  if (!flags.list_json.empty() && !flags.help) return write_registry_listing(flags.list_json, flags.suite.timing);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  std::vector<std::string> names;
  try {
    names = suite_benchmark_names(flags.suite);
  } catch (const std::invalid_argument& e) {
    std::cerr << "kgate_bench: --kgate_workloads: " << e.what() << "\n";
    return 2;
  } catch (const ResultsError& e) {
    std::cerr << "kgate_bench: --kgate_shard_durations: " << e.what() << "\n";
    return 2;
  }
  const std::string list_tests = gbench_flag(original_args, "--benchmark_list_tests");
  if (!list_tests.empty() && list_tests != "false") {  // listing needs no GPU: names come from the registry alone
    for (const std::string& name : names) benchmark::RegisterBenchmark(name.c_str(), [](benchmark::State&) {});
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }
  const DeviceProbe& probe = probe_device();
  if (!probe.device) {
    const std::string unmet = unmet_gpu_requirement(probe.reason);  // KGATE_REQUIRE_GPU=1: the words every GPU program uses
    std::cerr << "kgate_bench: " << (unmet.empty() ? probe.reason + "; nothing to measure" : unmet) << "\n";
    return 1;
  }
  if (flags.handover_fd >= 0) {
    // Started ahead of its turn (next_process.hpp): its context now, while the process before
    // still times; its startup phase is what remains once the results are handed over.
    if (!await_handover(flags.handover_fd, create_context)) {
      std::remove(flags.resume.c_str());
      return 0;  // the process before restarted after a fault, or ended: it measures on without this one
    }
    started = std::chrono::steady_clock::now();
  }

  SuiteProcess suite = start_suite(*probe.device, flags, original_args, started);
  if (suite.needs_calibration()) suite.calibrate();
  std::size_t due = 0;
  for (const std::string& name : suite.names()) due += suite.due(name);
  Progress progress(suite.claims_as_it_runs() ? 0 : due, suite.process());
  register_suite(suite, progress, original_args);
  if (suite.counts_first()) suite.count();
  std::optional<NextProcess> next;
  if (!suite.process().last()) next.emplace(NextProcess::start("/proc/self/exe", original_args));
  SilentReporter silent;
  if (suite.process().last()) benchmark::RunSpecifiedBenchmarks();
  else benchmark::RunSpecifiedBenchmarks(&silent);
  benchmark::Shutdown();
  // Other shards' benchmarks, once this shard's are timed (a claiming shard's last process), outside
  // Google Benchmark's table of this shard's.
  for (const std::string& name : suite.others()) {
    if (!suite.take(name)) continue;
    progress.starting(name);
    if (suite.measure(name).context_lost) restart_on_remaining(suite.results(), original_args);
  }
  suite.finish_timing();
  if (next) {
    std::cout.flush();
    std::_Exit(next->hand_over(suite.results(), release_device));  // no exit handlers: the device is released
  }

  if (!suite.counts_first()) suite.count();
  write_outputs(suite.results(), flags, original_args);
  const auto failed = [](const BenchmarkRecord& r) { return r.status == BenchmarkStatus::failed; };
  return std::ranges::any_of(suite.results().benchmarks, failed) ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UnknownMetrics& e) {  // --kgate_metrics names one this chip does not know
    std::cerr << "kgate_bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "kgate_bench: " << e.what() << "\n";
    return 1;
  }
}
