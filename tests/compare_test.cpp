// The comparator's verdicts on planted changes, its thresholds, environment checks, the counter
// notes that explain a change, and its four renderings.
#include "kgate/gate/compare.hpp"
#include "kgate/gate/comparison_output.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>

#include "kgate/results/repetitions.hpp"
#include "kgate/results/results_io.hpp"
#include "tests/synthetic_results.hpp"

namespace {

using kgate::BenchmarkRecord;
using kgate::CompareOptions;
using kgate::Verdict;
namespace syn = kgate::synthetic;

const std::string kName = "rmsnorm/vectorized/m:4096/n:4096/bf16";

// These fixtures time ~10 us kernels, where a planted 10% change is exactly the default 1 us
// minimum change; the tests of the relative rules switch that floor off (MinimumChange tests it).
CompareOptions relative_only() {
  CompareOptions options;
  options.thresholds.min_change_s = 0;
  return options;
}

kgate::ComparisonReport compare(const BenchmarkRecord& baseline, const BenchmarkRecord& current,
                                const CompareOptions& options = relative_only()) {
  return kgate::compare_runs(syn::run({baseline}), syn::run({current}), "base.json", "new.json", options);
}

struct Scenario {
  const char* label;
  syn::Timing baseline, current;
  std::vector<Verdict> allowed;
  bool regression;
};

TEST(Compare, VerdictsOnPlantedChanges) {
  const std::vector<Scenario> scenarios = {
      {"identical distributions", {.seed = 1}, {.seed = 2}, {Verdict::same}, false},
      {"10% slower, low noise", {.seed = 1}, {.median_s = 11e-6, .seed = 2}, {Verdict::slower}, true},
      {"10% faster, low noise", {.seed = 1}, {.median_s = 9e-6, .seed = 2}, {Verdict::faster}, false},
      {"2% change inside 3% noise",
       {.rel_noise = 0.03, .seed = 1},
       {.median_s = 10.2e-6, .rel_noise = 0.03, .seed = 2},
       {Verdict::same, Verdict::noisy},
       false},
      {"20% spread, no change", {.rel_noise = 0.2, .seed = 1}, {.rel_noise = 0.2, .seed = 2}, {Verdict::noisy}, false},
      {"6% slower but too few samples to be significant",
       {.rel_noise = 0.05, .samples = 4, .seed = 1},
       {.median_s = 10.6e-6, .rel_noise = 0.05, .samples = 4, .seed = 2},
       {Verdict::noisy},
       false},
      {"clock drop, cycles unchanged",
       {.clock_mhz = 1980, .seed = 1},
       {.median_s = 10e-6 * 1980 / 1600, .clock_mhz = 1600, .seed = 2},
       {Verdict::same},
       false},
      {"clock drop and a real slowdown in cycles",
       {.clock_mhz = 1980, .seed = 1},
       {.median_s = 10e-6 * 1980 / 1600 * 1.10, .clock_mhz = 1600, .seed = 2},
       {Verdict::slower},
       true},
      {"clocks unknown: judged on time",
       {.clock_mhz = 0, .seed = 1},
       {.median_s = 11e-6, .clock_mhz = 0, .seed = 2},
       {Verdict::slower},
       true},
  };
  for (const Scenario& s : scenarios) {
    const auto report = compare(syn::benchmark(kName, s.baseline), syn::benchmark(kName, s.current));
    ASSERT_EQ(report.benchmarks.size(), 1u) << s.label;
    const Verdict v = report.benchmarks[0].verdict;
    EXPECT_NE(std::find(s.allowed.begin(), s.allowed.end(), v), s.allowed.end()) << s.label << ": got " << kgate::to_string(v) << "\n"
                                                                                 << kgate::format_table(report, false);
    EXPECT_EQ(report.regression(), s.regression) << s.label;
  }
}

// Three processes pooled into one record, as kgate_bench --kgate_processes=3 writes it.
BenchmarkRecord pooled_processes(const std::vector<double>& medians_s) {
  BenchmarkRecord pooled = syn::benchmark(kName, {.median_s = medians_s.front(), .seed = 10});
  for (std::size_t i = 1; i < medians_s.size(); ++i)
    kgate::pool_repetition(pooled, syn::benchmark(kName, {.median_s = medians_s[i], .seed = 10 + i}), syn::context().calibration);
  return pooled;
}

TEST(Compare, AChangeMustShowInEveryRepetition) {
  const BenchmarkRecord baseline = pooled_processes({10e-6, 10e-6, 10e-6});
  // Every process 10% slower: a regression.
  auto report = compare(baseline, pooled_processes({11e-6, 11e-6, 11e-6}));
  EXPECT_EQ(report.benchmarks[0].verdict, Verdict::slower);
  // Two processes of three in a slow mode carry the pooled median, but the third ran at the
  // baseline's speed: not believed.
  report = compare(baseline, pooled_processes({11e-6, 11e-6, 10e-6}));
  const kgate::BenchmarkComparison& row = report.benchmarks[0];
  EXPECT_LT(row.speedup, 1 / 1.05) << "the pooled median is in the slow mode";
  EXPECT_EQ(row.verdict, Verdict::noisy);
  ASSERT_FALSE(row.notes.empty());
  EXPECT_TRUE(std::regex_search(
      row.notes.back(),
      std::regex(
          R"(^2 of 3 repetitions slower by more than 5\.00% \(medians 1\d\.\d µs, 1\d\.\d µs, 1\d\.\d µs\): the change is not in every one$)")))
      << row.notes.back();
  EXPECT_FALSE(report.regression());
  // The same for a speedup.
  EXPECT_EQ(compare(baseline, pooled_processes({9e-6, 9e-6, 9e-6})).benchmarks[0].verdict, Verdict::faster);
  EXPECT_EQ(compare(baseline, pooled_processes({9e-6, 10e-6, 9e-6})).benchmarks[0].verdict, Verdict::noisy);
}

TEST(Compare, AVendorSlowdownIsShownButDoesNotFailTheGate) {
  BenchmarkRecord baseline = syn::benchmark("gemv/cublas/m:8/n:28672/k:4096/bf16", {.seed = 1});
  BenchmarkRecord current = syn::benchmark("gemv/cublas/m:8/n:28672/k:4096/bf16", {.median_s = 11e-6, .seed = 2});
  baseline.role = current.role = "vendor";
  auto report = compare(baseline, current);
  const kgate::BenchmarkComparison& row = report.benchmarks[0];
  EXPECT_EQ(row.verdict, Verdict::slower);
  EXPECT_FALSE(row.gated);
  EXPECT_FALSE(row.fails_gate());
  EXPECT_FALSE(report.regression());
  ASSERT_FALSE(row.notes.empty());
  EXPECT_EQ(row.notes.front(), "vendor variant: another library's slowdown is shown, not gated");
  EXPECT_EQ(report.summary_line().rfind("1 slower (1 vendor, not gated), 0 faster", 0), 0u) << report.summary_line();
  EXPECT_EQ(kgate::report_to_junit(report).find("<failure"), std::string::npos);
  EXPECT_EQ(kgate::report_to_json(report)["benchmarks"][0]["gated"], false);
  // A vendor variant that fails still fails the gate, and a candidate's slowdown always does.
  current.status = kgate::BenchmarkStatus::failed;
  current.error = "cuBLAS cublasGemmEx failed";
  EXPECT_TRUE(compare(baseline, current).regression());
  baseline.role = "candidate";
  current = syn::benchmark("gemv/cublas/m:8/n:28672/k:4096/bf16", {.median_s = 11e-6, .seed = 2});
  EXPECT_TRUE(compare(baseline, current).regression());
}

TEST(Compare, ClockDifferenceIsReportedNotBlamedOnTheCode) {
  const auto report = compare(syn::benchmark(kName, {.clock_mhz = 1980, .seed = 1}),
                              syn::benchmark(kName, {.median_s = 10e-6 * 1.12, .clock_mhz = 1980 / 1.12, .seed = 2}));
  const auto& row = report.benchmarks[0];
  EXPECT_EQ(row.verdict, Verdict::same);
  ASSERT_FALSE(row.notes.empty());
  EXPECT_TRUE(std::regex_search(row.notes[0], std::regex(R"(^clock 1980 MHz → 1768 MHz: time \+1[12]\.\d%, cycles (\+|−)[01]\.\d+%$)")))
      << row.notes[0];
  EXPECT_NEAR(row.cycle_speedup, 1.0, 0.01);
}

TEST(Compare, SingleSamplePerSideIsLowConfidence) {
  const syn::Timing one{.samples = 1, .seed = 1};
  auto slower = compare(syn::benchmark(kName, one), syn::benchmark(kName, {.median_s = 12e-6, .samples = 1, .seed = 2}));
  EXPECT_EQ(slower.benchmarks[0].verdict, Verdict::noisy);
  EXPECT_TRUE(slower.benchmarks[0].low_confidence);
  EXPECT_FALSE(slower.regression());
  auto same = compare(syn::benchmark(kName, one), syn::benchmark(kName, {.median_s = 10.1e-6, .samples = 1, .seed = 2}));
  EXPECT_EQ(same.benchmarks[0].verdict, Verdict::same);
  EXPECT_TRUE(same.benchmarks[0].low_confidence);
  EXPECT_NE(kgate::format_table(same, false, true).find("same (low confidence)"), std::string::npos);
}

TEST(Compare, FailedNewMissingAndSkipped) {
  BenchmarkRecord crashed = syn::benchmark("rmsnorm/a/m:1/bf16", {});
  crashed.status = kgate::BenchmarkStatus::failed;
  crashed.error = "illegal address";
  crashed.cold.reset();
  BenchmarkRecord wrong = syn::benchmark("rmsnorm/b/m:1/bf16", {});
  wrong.correct = false;
  wrong.correctness_detail = "rel_l2 0.3";
  BenchmarkRecord skipped = syn::benchmark("rmsnorm/c/m:1/bf16", {});
  skipped.status = kgate::BenchmarkStatus::skipped;
  skipped.error = "needs compute capability 100";
  const auto baseline = syn::run({syn::benchmark("rmsnorm/a/m:1/bf16", {}), syn::benchmark("rmsnorm/b/m:1/bf16", {}),
                                  syn::benchmark("rmsnorm/c/m:1/bf16", {}), syn::benchmark("rmsnorm/gone/m:1/bf16", {})});
  const auto current = syn::run({crashed, wrong, skipped, syn::benchmark("rmsnorm/added/m:1/bf16", {})});
  const auto report = kgate::compare_runs(baseline, current, "b.json", "n.json", {});
  ASSERT_EQ(report.benchmarks.size(), 5u);
  EXPECT_EQ(report.benchmarks[0].verdict, Verdict::failed);
  EXPECT_EQ(report.benchmarks[0].notes[0], "error: illegal address");
  EXPECT_EQ(report.benchmarks[1].verdict, Verdict::failed);
  EXPECT_EQ(report.benchmarks[1].notes[0], "wrong result: rel_l2 0.3");
  EXPECT_EQ(report.benchmarks[2].verdict, Verdict::missing);
  EXPECT_EQ(report.benchmarks[3].verdict, Verdict::added);
  EXPECT_EQ(report.benchmarks[4].name, "rmsnorm/gone/m:1/bf16");
  EXPECT_EQ(report.benchmarks[4].verdict, Verdict::missing);
  EXPECT_TRUE(report.regression());
  EXPECT_EQ(report.summary_line(), "0 slower, 0 faster, 0 same, 0 noisy, 1 new, 2 missing, 2 failed; no benchmark compared");
}

TEST(Compare, SkippedInBothRunsIsNotMissing) {
  // Skipped by design (a shape the GPU cannot run): nothing was lost between the runs.
  BenchmarkRecord skipped = syn::benchmark("rmsnorm/c/m:1/bf16", {});
  skipped.status = kgate::BenchmarkStatus::skipped;
  skipped.error = "needs compute capability 100";
  skipped.cold.reset();
  BenchmarkRecord only_in_baseline = skipped;
  only_in_baseline.name = "rmsnorm/d/m:1/bf16";
  const auto run = syn::run({syn::benchmark(kName, {.seed = 1}), skipped, only_in_baseline});
  auto current = run;
  current.benchmarks.pop_back();
  const auto report = kgate::compare_runs(run, current, "b.json", "n.json", {});
  ASSERT_EQ(report.benchmarks.size(), 1u);
  EXPECT_EQ(report.count(Verdict::missing), 0u);
  EXPECT_NE(std::find_if(report.notices.begin(), report.notices.end(),
                         [](const std::string& n) { return n.starts_with("1 benchmark(s) skipped in the new run"); }),
            report.notices.end());
}

TEST(Compare, TableListsTheChangesFirstLargestFirst) {
  std::vector<BenchmarkRecord> base, next;
  const std::vector<std::pair<std::string, double>> new_medians = {{"f/same/s", 10e-6},
                                                                   {"f/faster/s", 8e-6},
                                                                   {"f/slower10/s", 11e-6},
                                                                   {"f/slower30/s", 13e-6}};
  for (std::size_t i = 0; i < new_medians.size(); ++i) {
    base.push_back(syn::benchmark(new_medians[i].first, {.rel_noise = 0.002, .seed = 1 + i}));
    next.push_back(syn::benchmark(new_medians[i].first, {.median_s = new_medians[i].second, .rel_noise = 0.002, .seed = 11 + i}));
  }
  BenchmarkRecord broken = syn::benchmark("f/broken/s", {});
  broken.status = kgate::BenchmarkStatus::failed;
  broken.error = "illegal address";
  base.push_back(syn::benchmark("f/broken/s", {}));
  next.push_back(broken);
  const auto report = kgate::compare_runs(syn::run(base), syn::run(next), "b.json", "n.json", relative_only());
  std::vector<std::string> order;
  for (const auto* row : kgate::rows_by_impact(report, true)) order.push_back(row->name);
  EXPECT_EQ(order, (std::vector<std::string>{"f/slower30/s", "f/slower10/s", "f/broken/s", "f/faster/s", "f/same/s"}));

  const std::string table = kgate::format_table(report, false);
  EXPECT_LT(table.find("f/slower30/s"), table.find("f/slower10/s"));
  EXPECT_EQ(table.find("f/same/s"), std::string::npos) << table;
  EXPECT_NE(table.find("1 unchanged benchmark(s) not listed (--all lists them)\n" + report.summary_line() + "\n"), std::string::npos)
      << table;
  EXPECT_NE(kgate::format_table(report, false, true).find("f/same/s"), std::string::npos);
}

TEST(Compare, MarkdownOfTheRecordedWholeSuitePairIsShort) {
  // Two recorded H200 runs of the whole suite (188 benchmarks, about 940,000 samples): a clean
  // comparison, whose pull-request comment shows the verdict and the warnings above the fold in
  // under 2 KB; the unchanged rows are folded.
  const auto a = kgate::read_results_file(KGATE_TEST_DATA_DIR "/recorded-h200-run-a.json.gz");
  const auto b = kgate::read_results_file(KGATE_TEST_DATA_DIR "/recorded-h200-run-b.json.gz");
  const auto report = kgate::compare_runs(a, b, "a.json", "b.json", {});
  EXPECT_FALSE(report.regression());
  EXPECT_GT(report.count(Verdict::same), 150u);
  const std::string md = kgate::report_to_markdown(report);
  EXPECT_EQ(md.rfind("✅ kgate: pass, 0 slower, 0 faster", 0), 0u) << md;
  EXPECT_LT(md.find("<details><summary>"), 2'000u) << md;
  EXPECT_LT(md.size(), kgate::kMarkdownCommentLimit);
}

TEST(Compare, SummaryLineAndGeometricMean) {
  const auto baseline = syn::run({syn::benchmark("f/a/s", {.seed = 1}), syn::benchmark("f/b/s", {.seed = 3})});
  const auto current = syn::run({syn::benchmark("f/a/s", {.median_s = 12.5e-6, .rel_noise = 0, .seed = 2}),
                                 syn::benchmark("f/b/s", {.median_s = 8e-6, .rel_noise = 0, .seed = 4})});
  const auto report = kgate::compare_runs(baseline, current, "b", "n", {});
  const double expected = std::sqrt(report.benchmarks[0].speedup * report.benchmarks[1].speedup);
  EXPECT_DOUBLE_EQ(report.geomean_speedup(), expected);
  const std::string line = "1 slower, 1 faster, 0 same, 0 noisy; geomean speedup " + kgate::format_ratio(expected);
  EXPECT_EQ(report.summary_line(), line);
  // The table ends with the summary line and the verdict in words.
  const std::string table = kgate::format_table(report, false);
  EXPECT_TRUE(table.ends_with(line + "\n❌ kgate: FAIL, 1 slower, 1 faster — f/a/s +25.0%\n")) << table;
}

TEST(Compare, IsDeterministic) {
  const auto b = syn::benchmark(kName, {.rel_noise = 0.03, .seed = 1});
  const auto n = syn::benchmark(kName, {.median_s = 10.4e-6, .rel_noise = 0.03, .seed = 2});
  const auto first = compare(b, n).benchmarks[0];
  const auto second = compare(b, n).benchmarks[0];
  EXPECT_EQ(first.ci_low, second.ci_low);
  EXPECT_EQ(first.ci_high, second.ci_high);
  EXPECT_EQ(first.p_value, second.p_value);
}

TEST(Compare, ThresholdPrecedence) {
  const auto t = kgate::parse_thresholds(nlohmann::json::parse(R"({"schema_version": 1, "default": 0.05, "families": {"rmsnorm": 0.03},
                                "benchmarks": {"rmsnorm/naive/m:1/bf16": 0.2}})"),
                                         "thresholds.json");
  EXPECT_DOUBLE_EQ(t.for_benchmark("rmsnorm/naive/m:1/bf16", "rmsnorm"), 0.2);
  EXPECT_DOUBLE_EQ(t.for_benchmark("rmsnorm/fast/m:1/bf16", "rmsnorm"), 0.03);
  EXPECT_DOUBLE_EQ(t.for_benchmark("gemm/x/m:1/bf16", "gemm"), 0.05);

  // A 7% slowdown: slower under the 5% default, same under a 10% per-benchmark threshold.
  CompareOptions options = relative_only();
  const auto b = syn::benchmark(kName, {.rel_noise = 0.005, .seed = 1});
  const auto n = syn::benchmark(kName, {.median_s = 10.7e-6, .rel_noise = 0.005, .seed = 2});
  EXPECT_EQ(compare(b, n, options).benchmarks[0].verdict, Verdict::slower);
  options.thresholds.benchmarks[kName] = 0.10;
  EXPECT_EQ(compare(b, n, options).benchmarks[0].verdict, Verdict::same);
  EXPECT_DOUBLE_EQ(compare(b, n, options).benchmarks[0].threshold, 0.10);
}

TEST(Compare, ThresholdFileErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([0.05])", "t.json: $: expected an object, got array"},
      {R"({"defualt": 0.05})", "t.json: $.defualt: unknown field"},
      {R"({"default": 0})", "t.json: $.default: threshold must be a fraction in (0, 1]"},
      {R"({"default": 5})", "t.json: $.default: threshold must be a fraction in (0, 1]"},
      {R"({"families": {"rmsnorm": "3%"}})", "t.json: $.families[\"rmsnorm\"]: threshold must be a fraction"},
      {R"({"benchmarks": []})", "t.json: $.benchmarks: expected an object"},
      {R"({"schema_version": 2})", "t.json: $.schema_version: unsupported thresholds schema version 2"},
  };
  for (const auto& [text, expected] : cases) {
    try {
      (void)kgate::parse_thresholds(nlohmann::json::parse(text), "t.json");
      ADD_FAILURE() << text << " accepted";
    } catch (const kgate::ResultsError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << e.what();
    }
  }
}

TEST(Compare, EnvironmentChecks) {
  const auto h200 = syn::run({syn::benchmark(kName, {})});
  auto h100 = syn::run({syn::benchmark(kName, {})}, "NVIDIA H100 80GB HBM3");
  try {
    (void)kgate::compare_runs(h200, h100, "b.json", "n.json", {});
    ADD_FAILURE() << "different GPUs compared";
  } catch (const kgate::EnvironmentMismatch& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("NVIDIA H200"), std::string::npos) << message;
    EXPECT_NE(message.find("NVIDIA H100 80GB HBM3"), std::string::npos) << message;
  }
  CompareOptions allow = relative_only();
  allow.allow_env_mismatch = true;
  EXPECT_EQ(kgate::compare_runs(h200, h100, "b", "n", allow).warnings.size(), 1u);

  auto other = h200;
  other.context.driver_version = 13010;
  other.context.runtime_version = 12080;
  other.context.sm_clock_mhz_default = 1755;
  other.context.calibration.copy_bytes_per_s *= 0.95;  // beyond 3%
  other.context.calibration.read_bytes_per_s *= 0.98;  // within 3%
  const auto warnings = kgate::compare_runs(h200, other, "b", "n", {}).warnings;
  const std::vector<std::string> expected = {"CUDA driver 13.0 → 13.1", "CUDA runtime 13.0 → 12.8", "default SM clock 1980 MHz → 1755 MHz",
                                             "calibration: copy bandwidth 4000 GB/s → 3800 GB/s (−5.00%)"};
  EXPECT_EQ(warnings, expected);
}

TEST(Compare, TimeOnlyWhenAFileHasNoKgateBlock) {
  auto plain = syn::run({syn::benchmark(kName, {.clock_mhz = 0, .seed = 2})}, "");
  plain.has_kgate_block = false;
  const auto report = kgate::compare_runs(syn::run({syn::benchmark(kName, {.seed = 1})}), plain, "b.json", "gbench.json", {});
  ASSERT_EQ(report.notices.size(), 1u);
  EXPECT_EQ(report.notices[0].rfind("time-only comparison: gbench.json has no kgate block", 0), 0u) << report.notices[0];
  EXPECT_TRUE(report.warnings.empty());  // no environment to check, and not refused for its missing GPU name
  EXPECT_EQ(report.benchmarks[0].verdict, Verdict::same);
}

TEST(Compare, CounterDeltasExplainTheChange) {
  BenchmarkRecord before = syn::benchmark(kName, {.seed = 1});
  BenchmarkRecord after = syn::benchmark(kName, {.median_s = 15e-6, .seed = 2});
  before.metrics = {
      {"dram__bytes_read.sum", 60e6},     {"dram__bytes_write.sum", 40e6},  {"sm__warps_active.avg.pct_of_peak_sustained_active", 62},
      {"lts__t_sector_hit_rate.pct", 50}, {"smsp__inst_executed.sum", 1e6}, {"gpu__time_duration.sum", 10e-6}};
  after.metrics = {
      {"dram__bytes_read.sum", 157e6},    {"dram__bytes_write.sum", 40e6},    {"sm__warps_active.avg.pct_of_peak_sustained_active", 31},
      {"lts__t_sector_hit_rate.pct", 52}, {"smsp__inst_executed.sum", 1.5e6}, {"gpu__time_duration.sum", 15e-6}};
  kgate::KernelRecord k{.name = "k",
                        .demangled = "void rmsnorm_kernel<256>(float const*, float*)",
                        .grid = {4096, 1, 1},
                        .block = {256, 1, 1},
                        .registers_per_thread = 64,
                        .static_shared_bytes = 1024,
                        .dynamic_shared_bytes = 0,
                        .duration_s = 10e-6,
                        .launches = 1};
  before.kernels = {k};
  k.registers_per_thread = 128;
  k.static_shared_bytes = 2048;
  after.kernels = {k};
  const auto notes = compare(before, after).benchmarks[0].notes;
  const std::vector<std::string> expected = {"registers 64 → 128", "shared memory per block 1 KiB → 2 KiB",
                                             "dram bytes +97.0% (more memory traffic)", "achieved occupancy 62.0% → 31.0%",
                                             "smsp__inst_executed.sum +50.0%"};
  EXPECT_EQ(notes, expected);

  BenchmarkRecord other = after;
  other.kernels[0].demangled = "void rmsnorm_slow<128>(float const*, float*)";
  other.metrics.clear();  // no counters on one side: nothing said about them
  const auto different = compare(before, other).benchmarks[0].notes;
  ASSERT_EQ(different.size(), 1u);
  EXPECT_EQ(different[0], "a different kernel ran: rmsnorm_slow<128> instead of rmsnorm_kernel<256>");
}

// A tag-balance check of the XML kgate writes (no attributes with '>' in them, no CDATA).
bool balanced_xml(const std::string& xml) {
  std::vector<std::string> open;
  for (std::size_t i = xml.find('<'); i != std::string::npos; i = xml.find('<', i + 1)) {
    const std::size_t end = xml.find('>', i);
    if (end == std::string::npos) return false;
    const std::string tag = xml.substr(i + 1, end - i - 1);
    if (tag.starts_with("?")) continue;
    if (tag.starts_with("/")) {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else if (!tag.ends_with("/")) {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return open.empty();
}

TEST(Compare, Renderings) {
  BenchmarkRecord slow = syn::benchmark("f/slow<&>/s", {.median_s = 11e-6, .seed = 2});
  BenchmarkRecord broken = syn::benchmark("f/broken|pipe/s", {});
  broken.status = kgate::BenchmarkStatus::failed;
  broken.error = "bad \"quote\" <tag>";
  const auto report = kgate::compare_runs(syn::run({syn::benchmark("f/slow<&>/s", {.seed = 1}), syn::benchmark("f/same/s", {.seed = 3}),
                                                    syn::benchmark("f/broken|pipe/s", {})}),
                                          syn::run({slow, syn::benchmark("f/same/s", {.seed = 4}), broken}), "base.json", "new.json",
                                          relative_only());

  const nlohmann::json doc = nlohmann::json::parse(kgate::report_to_json(report).dump());
  EXPECT_EQ(doc["regression"], true);
  EXPECT_EQ(doc["summary"]["slower"], 1);
  EXPECT_EQ(doc["summary"]["failed"], 1);
  EXPECT_EQ(doc["benchmarks"][0]["verdict"], "slower");
  EXPECT_TRUE(doc["benchmarks"][0]["p_value"].is_number());
  EXPECT_TRUE(doc["benchmarks"][2]["speedup"].is_null());

  const std::string junit = kgate::report_to_junit(report);
  EXPECT_TRUE(balanced_xml(junit)) << junit;
  EXPECT_NE(junit.find("tests=\"3\" failures=\"2\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("name=\"f/slow&lt;&amp;&gt;/s\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<failure type=\"regression\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("bad &quot;quote&quot; &lt;tag&gt;"), std::string::npos) << junit;

  const std::string md = kgate::report_to_markdown(report);
  EXPECT_EQ(md.rfind("❌ kgate: FAIL, 1 slower, 1 failed, 0 faster — f/slow&lt;&amp;&gt;/s +", 0), 0u) << md;
  EXPECT_NE(md.find("| Benchmark | Verdict | Change | Δ time | Baseline | New | Speedup | Interval | Detectable | Notes |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("`f/broken\\|pipe/s`"), std::string::npos) << md;
  // The unchanged row is folded, after the changes.
  EXPECT_LT(md.find("`f/broken\\|pipe/s`"), md.find("<details><summary>1 unchanged</summary>")) << md;
  EXPECT_LT(md.find("<details><summary>1 unchanged</summary>"), md.find("`f/same/s`")) << md;

  EXPECT_EQ(kgate::format_table(report, false).find('\033'), std::string::npos);
  EXPECT_NE(kgate::format_table(report, true).find("\033[31mslower"), std::string::npos);
}

}  // namespace

TEST(Compare, MinimumChangeKeepsSubMicrosecondShiftsSame) {
  // 0.8 us on a 5 us kernel: 16%, significant, but under the 1 us floor that separate runs of
  // identical code were seen to move (0.87 us on an H200).
  const auto base = syn::benchmark(kName, {.median_s = 5e-6, .seed = 1});
  const auto shifted = syn::benchmark(kName, {.median_s = 5.8e-6, .seed = 2});
  const auto floored = compare(base, shifted, CompareOptions{});
  EXPECT_EQ(floored.benchmarks.at(0).verdict, Verdict::same) << floored.benchmarks.at(0).notes.front();
  EXPECT_FALSE(floored.regression());
  EXPECT_NE(floored.benchmarks.at(0).notes.front().find("minimum change"), std::string::npos);
  EXPECT_EQ(compare(base, shifted).benchmarks.at(0).verdict, Verdict::slower);  // without the floor
  // 2 us on the same kernel is past the floor: a regression.
  EXPECT_EQ(compare(base, syn::benchmark(kName, {.median_s = 7e-6, .seed = 2}), CompareOptions{}).benchmarks.at(0).verdict,
            Verdict::slower);
}

TEST(Compare, MinimumChangeGrowsByTheLaunchFloorDifference) {
  // The same kernels on a host whose launch floor is 1.1 us higher (as two H200 hosts measured
  // 3.1 and 4.2 us): every event-timed median carries the difference.
  const auto base = syn::benchmark(kName, {.median_s = 5e-6, .seed = 1});
  const auto other_host = syn::benchmark(kName, {.median_s = 6.1e-6, .seed = 2});
  kgate::RunResults before = syn::run({base}), after = syn::run({other_host});
  EXPECT_EQ(kgate::compare_runs(before, after, "base.json", "new.json", CompareOptions{}).benchmarks.at(0).verdict,
            Verdict::slower);  // same host: 1.1 us is past the 1 us floor
  after.context.calibration.launch_floor_s = before.context.calibration.launch_floor_s + 1.1e-6;
  const auto report = kgate::compare_runs(before, after, "base.json", "new.json", CompareOptions{});
  EXPECT_EQ(report.benchmarks.at(0).verdict, Verdict::same);
  ASSERT_FALSE(report.notices.empty());
  EXPECT_NE(report.notices.back().find("launch-floor difference"), std::string::npos) << report.notices.back();
  // A slowdown beyond the host's share is still one.
  const auto slower = syn::run({syn::benchmark(kName, {.median_s = 8e-6, .seed = 2})});
  kgate::RunResults slower_after = slower;
  slower_after.context.calibration.launch_floor_s = after.context.calibration.launch_floor_s;
  EXPECT_EQ(kgate::compare_runs(before, slower_after, "base.json", "new.json", CompareOptions{}).benchmarks.at(0).verdict, Verdict::slower);
}

// A CUPTI-timed benchmark as kgate_bench records it (named synthetic: drawn, not measured): three
// processes' samples pooled, each process's median kept.
BenchmarkRecord cupti_timed(double median_s, double rel_noise, std::uint64_t seed) {
  BenchmarkRecord pooled = syn::benchmark(kName, {.median_s = median_s, .rel_noise = rel_noise, .samples = 40, .seed = seed});
  for (std::uint64_t process = 1; process < 3; ++process)
    kgate::pool_repetition(pooled,
                           syn::benchmark(kName,
                                          {.median_s = median_s, .rel_noise = rel_noise, .samples = 40, .seed = seed + 100 * process}),
                           syn::context().calibration);
  pooled.cold->timer = "cupti";
  return pooled;
}

TEST(Compare, CuptiTimedShortKernelChangesAreSeen) {
  // A 4.9 us kernel with 0.3% spread in each of three processes: a 5% slowdown clears a 3% band
  // (its minimum detectable change is well under 1%), identical distributions stay same.
  CompareOptions options;  // the default 1 us minimum change applies to event-timed medians only
  options.thresholds.default_fraction = 0.03;
  kgate::RunResults base = syn::run({cupti_timed(4.9e-6, 0.003, 1)});
  base.context.calibration.timer_resolution_s = 1e-9;
  kgate::RunResults same = syn::run({cupti_timed(4.9e-6, 0.003, 2)});
  kgate::RunResults slower = syn::run({cupti_timed(4.9e-6 * 1.05, 0.003, 3)});
  const auto aa = kgate::compare_runs(base, same, "base.json", "new.json", options).benchmarks.at(0);
  EXPECT_EQ(aa.verdict, Verdict::same);
  EXPECT_EQ(aa.timer, "cupti");
  EXPECT_GT(aa.min_detectable_change, 0);
  EXPECT_LT(aa.min_detectable_change, 0.01);
  EXPECT_DOUBLE_EQ(aa.threshold, 0.03);
  const auto planted = kgate::compare_runs(base, slower, "base.json", "new.json", options);
  EXPECT_EQ(planted.benchmarks.at(0).verdict, Verdict::slower);
  EXPECT_TRUE(planted.regression());
  EXPECT_EQ(report_to_json(planted)["benchmarks"][0]["min_detectable_change"], planted.benchmarks.at(0).min_detectable_change);

  // Event-timed, the same samples fall inside the 1 us minimum change: the blind spot CUPTI closes.
  for (kgate::RunResults* run : {&base, &slower}) run->benchmarks[0].cold->timer = "events";
  const auto blind = kgate::compare_runs(base, slower, "base.json", "new.json", options).benchmarks.at(0);
  EXPECT_EQ(blind.verdict, Verdict::same);
  EXPECT_EQ(blind.min_detectable_change, 0);
  EXPECT_GT(blind.threshold, 0.2);
}

TEST(Compare, CuptiBandWidensToTheSpreadBetweenProcesses) {
  // One process of three ran 8% slow (another library's second mode): a 5% change is no longer
  // detectable, and the band says why.
  kgate::RunResults base = syn::run({cupti_timed(10e-6, 0.003, 1)});
  kgate::RunResults next = syn::run({cupti_timed(10.5e-6, 0.003, 2)});
  std::vector<double>& medians = next.benchmarks[0].cold->repetition_medians_s;
  medians.back() = medians.front() * 1.08;
  const auto row = kgate::compare_runs(base, next, "base.json", "new.json", CompareOptions{}).benchmarks.at(0);
  EXPECT_GT(row.min_detectable_change, 0.07);
  EXPECT_DOUBLE_EQ(row.threshold, row.min_detectable_change);
  EXPECT_NE(row.verdict, Verdict::slower);
  ASSERT_FALSE(row.notes.empty());
  EXPECT_NE(row.notes.front().find("the spread between its repetitions' medians"), std::string::npos) << row.notes.front();
}

TEST(Compare, CuptiAndEventTimedAreNotComparedUnlessAllowed) {
  kgate::RunResults base = syn::run({cupti_timed(5e-6, 0.003, 1)});
  kgate::RunResults next = syn::run({syn::benchmark(kName, {.median_s = 7e-6, .seed = 2})});  // event-timed
  try {
    kgate::compare_runs(base, next, "base.json", "new.json", CompareOptions{});
    FAIL() << "a timer mismatch was compared";
  } catch (const kgate::TimerMismatch& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(kName), std::string::npos) << what;
    EXPECT_NE(what.find("cupti-timed in base.json and events-timed in new.json"), std::string::npos) << what;
    EXPECT_NE(what.find("--allow-timer-mismatch"), std::string::npos) << what;
  }
  CompareOptions allowed;
  allowed.allow_timer_mismatch = true;
  const auto row = kgate::compare_runs(base, next, "base.json", "new.json", allowed).benchmarks.at(0);
  EXPECT_EQ(row.timer, "events");
  EXPECT_NE(row.notes.at(0).find("timers differ (cupti → events)"), std::string::npos) << row.notes.at(0);
}

// The issue's case (synthetic: drawn, not measured): CUPTI-timed pairs of three processes, 0.3%
// spread, clocks known, whose change equals the 5% threshold. The interval is a few hundredths of a
// percent wide and holds the threshold, and two of three processes fall either side of it: the
// change is precise and as large as the threshold. It read noisy in 11 of 12 such pairs.
TEST(Compare, AChangeEqualToTheThresholdIsAtThresholdNeverNoisy) {
  const CompareOptions options;  // 5%
  std::map<Verdict, int> verdicts;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const kgate::RunResults base = syn::run({cupti_timed(10e-6, 0.003, 1000 + seed)});
    const kgate::RunResults next = syn::run({cupti_timed(10e-6 * 1.05, 0.003, 2000 + seed)});
    const auto report = kgate::compare_runs(base, next, "base.json", "new.json", options);
    const kgate::BenchmarkComparison& row = report.benchmarks.at(0);
    ++verdicts[row.verdict];
    EXPECT_EQ(row.verdict, Verdict::at_threshold) << "seed " << seed << "\n" << kgate::format_table(report, false);
    EXPECT_FALSE(report.regression()) << "seed " << seed;
    ASSERT_FALSE(row.notes.empty());
    EXPECT_TRUE(std::regex_search(
        row.notes.front(),
        std::regex(R"(^at the threshold: \+[45]\.\d\d% ± 0\.\d+% against a 5\.00% threshold \(repetitions (\+[45]\.\d\d%(, )?){3}\)$)")))
        << row.notes.front();
  }
  EXPECT_EQ(verdicts[Verdict::at_threshold], 12);
  // Counted in the summary line and the JSON, and listed after the slower and failed rows.
  const auto report = kgate::compare_runs(syn::run({cupti_timed(10e-6, 0.003, 1001)}), syn::run({cupti_timed(10.5e-6, 0.003, 2001)}),
                                          "base.json", "new.json", options);
  EXPECT_NE(report.summary_line().find(", 1 at threshold;"), std::string::npos) << report.summary_line();
  EXPECT_EQ(kgate::report_to_json(report)["benchmarks"][0]["verdict"], "at_threshold");
  EXPECT_EQ(kgate::report_to_json(report)["summary"]["at_threshold"], 1);
}

TEST(Compare, SpreadTooWideToDecideIsStillNoisyAndAClearSlowdownSlower) {
  const CompareOptions options;
  // 5% spread in each process: the interval of the same 5% change is several percent wide, too
  // wide to say whether the change is beyond the threshold or inside it.
  std::map<Verdict, int> verdicts;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const auto spread = kgate::compare_runs(syn::run({cupti_timed(10e-6, 0.05, 1000 + seed)}),
                                            syn::run({cupti_timed(10.5e-6, 0.05, 2000 + seed)}), "base.json", "new.json", options);
    ++verdicts[spread.benchmarks.at(0).verdict];
    EXPECT_NE(spread.benchmarks.at(0).verdict, Verdict::at_threshold) << kgate::format_table(spread, false);
  }
  // 11 of the 12 draws; in the twelfth the median and every process land beyond the band: slower.
  EXPECT_GE(verdicts[Verdict::noisy], 11);
  // 8% slower at 0.3% spread: beyond the threshold's margin, a regression.
  const auto slower = kgate::compare_runs(syn::run({cupti_timed(10e-6, 0.003, 21)}), syn::run({cupti_timed(10.8e-6, 0.003, 22)}),
                                          "base.json", "new.json", options);
  EXPECT_EQ(slower.benchmarks.at(0).verdict, Verdict::slower) << kgate::format_table(slower, false);
  EXPECT_TRUE(slower.regression());
  // A change at the threshold in two processes of three, the third at the baseline's speed: not
  // at the threshold in every process, so noisy (another mode, not the code).
  kgate::RunResults mixed = syn::run({cupti_timed(10.5e-6, 0.003, 32)});
  mixed.benchmarks[0].cold->repetition_medians_s.back() = 10e-6;
  const auto modes = kgate::compare_runs(syn::run({cupti_timed(10e-6, 0.003, 31)}), mixed, "base.json", "new.json", options);
  EXPECT_EQ(modes.benchmarks.at(0).verdict, Verdict::noisy) << kgate::format_table(modes, false);
}

// A side's spread decides nothing the interval of the median ratio decides: a few slow outliers
// raise the relative stddev far above the noise limit and move neither median.
TEST(Compare, OutliersFarFromTheMedianDoNotMakeARowNoisy) {
  BenchmarkRecord base = syn::benchmark(kName, {.rel_noise = 0.003, .samples = 200, .seed = 1});
  BenchmarkRecord next = syn::benchmark(kName, {.rel_noise = 0.003, .samples = 200, .seed = 2});
  for (BenchmarkRecord* r : {&base, &next}) {
    for (int i = 0; i < 10; ++i) r->cold->samples_s[static_cast<std::size_t>(i) * 20] *= 3;  // 5% of the samples 3x slower
    r->cold->summary = kgate::summarize(r->cold->samples_s);
    EXPECT_GT(r->cold->summary.rel_stddev(), 0.3);
  }
  const auto report = compare(base, next);
  const kgate::BenchmarkComparison& row = report.benchmarks.at(0);
  EXPECT_EQ(row.verdict, Verdict::same) << kgate::format_table(report, false);
  ASSERT_FALSE(row.notes.empty());
  EXPECT_TRUE(std::regex_search(
      row.notes.back(),
      std::regex(
          R"(^relative stddev \d\d\.\d% → \d\d\.\d%, above the 10\.0% noise limit: spread far from the medians, whose interval 0\.9\d+–1\.0\d+ decides$)")))
      << row.notes.back();
  // The identical pair: a run compared with a copy of itself is never noisy.
  const auto copy = compare(base, base);
  EXPECT_EQ(copy.benchmarks.at(0).verdict, Verdict::same);
  EXPECT_EQ(copy.benchmarks.at(0).speedup, 1.0);
}

TEST(Compare, TheRecordedTritonRunIsComparedAsAnyRun) {
  // The Triton example's run on an H100 (examples/python-triton, Python variants timed by the suite
  // through kgate._engine): CUPTI-timed candidates, checked, with their journey, and against itself
  // every row the same.
  const auto run = kgate::read_results_file(KGATE_TEST_DATA_DIR "/recorded-h100-triton.json.gz");
  ASSERT_EQ(run.benchmarks.size(), 16u);
  for (const kgate::BenchmarkRecord& r : run.benchmarks) {
    EXPECT_EQ(r.role, "candidate") << r.name;
    EXPECT_EQ(r.follows, r.variant == "tuned" ? "naive" : "") << r.name;
    ASSERT_TRUE(r.headline()) << r.name;
    EXPECT_EQ(r.headline()->timer, "cupti") << r.name;
    EXPECT_TRUE(!r.correct || *r.correct) << r.name;
  }
  const auto report = kgate::compare_runs(run, run, "run.json", "copy.json", {});
  EXPECT_EQ(report.count(Verdict::same), run.benchmarks.size()) << kgate::format_table(report, false);
  EXPECT_FALSE(report.regression());
}

TEST(Compare, TheRecordedWholeSuiteRunAgainstItselfHasNoNoisyRow) {
  // The recorded H100 whole-suite run of f697667 with its PyTorch peers, against itself: two of
  // its rope/naive rows (16% relative stddev, interval 0.989–1.011 inside the band) read noisy.
  const auto run = kgate::read_results_file(KGATE_TEST_DATA_DIR "/recorded-h100-f697667-peers.json.gz");
  const auto report = kgate::compare_runs(run, run, "run.json", "copy.json", {});
  EXPECT_EQ(report.count(Verdict::noisy), 0u) << kgate::format_table(report, false);
  EXPECT_EQ(report.count(Verdict::same), report.benchmarks.size());
  EXPECT_FALSE(report.regression());
}
