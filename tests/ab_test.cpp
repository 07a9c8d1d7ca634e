// kgate ab's statistics: the round schedule, list differences, pooling rounds, and verdicts on
// recorded H200 samples (two real A/A runs of one build) and on planted changes.
#include "kgate/gate/ab.hpp"
#include "kgate/gate/comparison_output.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "kgate/results/results_io.hpp"
#include "tests/synthetic_results.hpp"

namespace {

using kgate::BenchmarkRecord;
using kgate::RunResults;
using kgate::Verdict;
namespace syn = kgate::synthetic;

// The recorded runs' rmsnorm benchmarks at m = 4096 and 32768: 8 benchmarks from 25 us to 650 us
// with 150 to 4200 samples each, a handful of benchmarks for a quick test.
RunResults recorded(const char* file) {
  RunResults run = kgate::read_results_file(std::string(KGATE_TEST_DATA_DIR "/") + file);
  std::erase_if(run.benchmarks, [](const BenchmarkRecord& r) {
    return !r.name.starts_with("rmsnorm/") ||
           (r.shape.find("m:4096/") == std::string::npos && r.shape.find("m:32768/") == std::string::npos);
  });
  return run;
}

const RunResults& run_a() {
  static const RunResults run = recorded("recorded-h200-run-a.json.gz");
  return run;
}
const RunResults& run_b() {
  static const RunResults run = recorded("recorded-h200-run-b.json.gz");
  return run;
}

// One recorded run cut into `rounds` runs of consecutive samples, as if measured in rounds.
std::vector<RunResults> as_rounds(const RunResults& run, int rounds) {
  std::vector<RunResults> out(static_cast<std::size_t>(rounds), run);
  for (std::size_t b = 0; b < run.benchmarks.size(); ++b) {
    const std::vector<double>& all = run.benchmarks[b].cold->samples_s;
    for (std::size_t k = 0; k < out.size(); ++k) {
      kgate::TimingRecord& t = *out[k].benchmarks[b].cold;
      t.samples_s.assign(all.begin() + static_cast<std::ptrdiff_t>(all.size() * k / out.size()),
                         all.begin() + static_cast<std::ptrdiff_t>(all.size() * (k + 1) / out.size()));
      t.summary = kgate::summarize(t.samples_s);
    }
  }
  return out;
}

void slow_down(std::vector<RunResults>& rounds, const std::string& prefix, double factor) {
  for (RunResults& round : rounds)
    for (BenchmarkRecord& r : round.benchmarks)
      if (r.name.starts_with(prefix)) {
        for (double& s : r.cold->samples_s) s *= factor;
        r.cold->summary = kgate::summarize(r.cold->samples_s);
      }
}

bool has_note(const kgate::BenchmarkComparison& r, const std::string& text) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(AbSchedule, SeededAndMixed) {
  const std::vector<bool> a = kgate::head_first_schedule(64, 1);
  EXPECT_EQ(a, kgate::head_first_schedule(64, 1));
  EXPECT_NE(a, kgate::head_first_schedule(64, 2));
  const auto head_first = std::count(a.begin(), a.end(), true);
  EXPECT_GT(head_first, 16);  // both orders, in about equal measure
  EXPECT_LT(head_first, 48);
  EXPECT_TRUE(kgate::head_first_schedule(0, 1).empty());
}

TEST(AbLists, DifferencesBothWays) {
  const kgate::ListDifference d = kgate::diff_benchmark_lists({"b", "a", "c"}, {"c", "d", "a"});
  EXPECT_EQ(d.common, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(d.base_only, (std::vector<std::string>{"b"}));
  EXPECT_EQ(d.head_only, (std::vector<std::string>{"d"}));
  EXPECT_FALSE(d.same());
  EXPECT_TRUE(kgate::diff_benchmark_lists({"a", "b"}, {"b", "a"}).same());
}

TEST(AbPooling, RoundsAddUpAndAFailureInAnyRoundFails) {
  const std::string a = "rmsnorm/vectorized/m:4096/n:4096/bf16", b = "rmsnorm/naive/m:4096/n:4096/bf16";
  RunResults r1 = syn::run({syn::benchmark(a, {.samples = 20, .seed = 1}), syn::benchmark(b, {.samples = 20, .seed = 2})});
  RunResults r2 = syn::run({syn::benchmark(a, {.samples = 30, .seed = 3}), syn::benchmark(b, {.samples = 30, .seed = 4})});
  r2.benchmarks[1].status = kgate::BenchmarkStatus::failed;
  r2.benchmarks[1].error = "illegal memory access";
  r2.benchmarks[1].cold.reset();
  r1.benchmarks[0].wall_time_s = 1;
  r2.benchmarks[0].wall_time_s = 2;
  const RunResults pooled = kgate::pool_rounds({r1, r2}, {"r1.json", "r2.json"});
  ASSERT_EQ(pooled.benchmarks.size(), 2u);
  EXPECT_EQ(pooled.benchmarks[0].cold->samples_s.size(), 50u);
  EXPECT_EQ(pooled.benchmarks[0].cold->summary.count, 50u);
  EXPECT_DOUBLE_EQ(pooled.benchmarks[0].wall_time_s, 3);
  EXPECT_EQ(pooled.benchmarks[1].status, kgate::BenchmarkStatus::failed);
  EXPECT_EQ(pooled.benchmarks[1].error, "illegal memory access");

  RunResults elsewhere = syn::run({syn::benchmark(a, {})}, "NVIDIA H100 80GB HBM3");
  try {
    kgate::pool_rounds({r1, elsewhere}, {"r1.json", "h100.json"});
    FAIL();
  } catch (const kgate::ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("h100.json: $.context.kgate.gpu.name"), std::string::npos) << e.what();
  }
}

TEST(AbRecorded, AaRunsInRoundsShowNoChange) {
  const kgate::ComparisonReport report =
      kgate::compare_rounds(as_rounds(run_a(), 3), as_rounds(run_b(), 3), "base", "head", kgate::CompareOptions{});
  ASSERT_EQ(report.benchmarks.size(), 8u);
  EXPECT_FALSE(report.regression()) << kgate::format_table(report, false);
  EXPECT_EQ(report.count(Verdict::slower) + report.count(Verdict::faster), 0u) << kgate::format_table(report, false);
  EXPECT_GE(report.count(Verdict::same), 6u) << kgate::format_table(report, false);
}

TEST(AbRecorded, PlantedSlowdownIsSlowerInEveryRound) {
  std::vector<RunResults> head = as_rounds(run_b(), 3);
  slow_down(head, "rmsnorm/vectorized/", 1.08);
  const kgate::ComparisonReport report = kgate::compare_rounds(as_rounds(run_a(), 3), head, "base", "head", kgate::CompareOptions{});
  EXPECT_TRUE(report.regression());
  for (const auto& r : report.benchmarks) {
    if (r.name.starts_with("rmsnorm/vectorized/")) {
      EXPECT_EQ(r.verdict, Verdict::slower) << r.name << "\n" << kgate::format_table(report, false);
      EXPECT_TRUE(has_note(r, "per round: 0.9")) << r.name;
    } else {
      EXPECT_NE(r.verdict, Verdict::slower) << r.name;
    }
  }
}

TEST(AbRounds, ASlowdownInOneRoundOfThreeIsNoisy) {
  const std::string name = "rmsnorm/vectorized/m:4096/n:4096/bf16";
  std::vector<RunResults> base, head;
  for (std::uint64_t k = 0; k < 3; ++k) {
    // Base ran its first round at 100 us with most of its samples, then drifted to 160 us; head
    // ran every round at 150 us. Against the pooled base every head round is slower, but round
    // by round head was slower only in the first.
    base.push_back(syn::run({syn::benchmark(name, {.median_s = k == 0 ? 100e-6 : 160e-6, .samples = k == 0 ? 200 : 50, .seed = 10 + k})}));
    head.push_back(syn::run({syn::benchmark(name, {.median_s = 150e-6, .samples = 50, .seed = 20 + k})}));
  }
  const kgate::ComparisonReport report = kgate::compare_rounds(base, head, "base", "head", kgate::CompareOptions{});
  EXPECT_EQ(report.benchmarks[0].verdict, Verdict::noisy) << kgate::format_table(report, false);
  EXPECT_TRUE(has_note(report.benchmarks[0], "head slower in only 1 of 3 rounds")) << kgate::format_table(report, false);
  EXPECT_FALSE(report.regression());
  EXPECT_THROW(kgate::compare_rounds(base, {}, "base", "head", {}), std::invalid_argument);
}

}  // namespace
