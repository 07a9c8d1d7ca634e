// What a run may add to a stored baseline (gate/baseline.hpp) on synthetic runs: which benchmarks
// are unfit and why, a run that can never gate, what recording changes in the stored entries, and
// the timers a file would mix. kgate baseline's command line is tested in kgate_cli_test.cpp.
#include "kgate/gate/baseline.hpp"

#include <gtest/gtest.h>

#include "kgate/results/results_io.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;
using kgate::BenchmarkRecord;
using kgate::BenchmarkStatus;
using kgate::RunResults;

const std::string kA = "rmsnorm/vectorized/m:4096/n:4096/bf16";
const std::string kB = "gemv/tiled/m:4096/n:4096/bf16";
const std::string kC = "gemv/naive/m:4096/n:4096/bf16";

bool has(const std::vector<std::string>& lines, const std::string& start) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; });
}

TEST(Baseline, UnfitBenchmarksSayWhyAndWhatToDo) {
  RunResults run = syn::run({syn::benchmark(kA, {}), syn::benchmark(kB, {.seed = 2}), syn::benchmark(kC, {.samples = 1, .seed = 3})});
  run.benchmarks[1].status = BenchmarkStatus::failed;
  run.benchmarks[1].error = "illegal address";
  BenchmarkRecord peer = syn::benchmark("rmsnorm/torch/m:4096/n:4096/bf16", {.samples = 1});
  peer.role = "peer";
  run.benchmarks.push_back(peer);
  const std::vector<std::string> unfit = kgate::unfit_benchmarks(run, {});
  ASSERT_EQ(unfit.size(), 2u) << "a peer is never judged";
  EXPECT_TRUE(has(unfit, kB + ": failed (illegal address): fix the variant")) << unfit[0];
  EXPECT_TRUE(has(unfit, kC + ": one sample, so no comparison against it can be significant")) << unfit[1];
  EXPECT_EQ(kgate::never_a_baseline(run), "") << kA << " can gate";

  // A gated benchmark whose processes disagree by more than its threshold cannot see a regression of that size.
  RunResults scattered = syn::run({syn::benchmark(kA, {})});
  scattered.benchmarks[0].cold->repetition_medians_s = {10e-6, 11e-6, 12e-6};
  const std::vector<std::string> wide = kgate::unfit_benchmarks(scattered, {});
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_NE(wide[0].find("its processes' medians (10.0 µs, 11.0 µs, 12.0 µs) differ by that much"), std::string::npos) << wide[0];
}

TEST(Baseline, ARunOfOneSampleBenchmarksCanNeverGate) {
  const RunResults run = syn::run({syn::benchmark(kA, {.samples = 1}), syn::benchmark(kB, {.samples = 1, .seed = 2})});
  EXPECT_EQ(kgate::never_a_baseline(run).rfind("it can never gate: each of its 2 benchmark(s) has one sample", 0), 0u)
      << kgate::never_a_baseline(run);
}

TEST(Baseline, RecordingReplacesAddsKeepsAndPrunes) {
  RunResults baseline = syn::run({syn::benchmark(kA, {.median_s = 9e-6}), syn::benchmark(kC, {.seed = 4})});
  RunResults run = syn::run({syn::benchmark(kA, {.samples = 2500}), syn::benchmark(kB, {.seed = 2})});
  run.benchmarks.push_back(syn::benchmark("gemv/skipped/m:1/n:1/bf16", {}));
  run.benchmarks.back().status = BenchmarkStatus::skipped;
  run.context.date = "2026-12-24T00:00:00Z";
  const kgate::BaselineChanges kept = kgate::record_in_baseline(baseline, run, "run.json", {}, false);
  EXPECT_EQ(kept.updated, 1u);
  EXPECT_EQ(kept.added, 1u);
  EXPECT_EQ(kept.kept, 1u);
  EXPECT_EQ(kept.not_recorded, std::vector<std::string>{"gemv/skipped/m:1/n:1/bf16 (skipped)"});
  ASSERT_EQ(baseline.benchmarks.size(), 3u);
  EXPECT_EQ(baseline.benchmarks[0].cold->samples_s.size(), kgate::kMaxBaselineSamples) << "thinned";
  EXPECT_EQ(baseline.benchmarks[0].provenance.at("date"), "2026-12-24T00:00:00Z");
  EXPECT_EQ(baseline.benchmarks[0].provenance.at("source"), "run.json");
  EXPECT_EQ(baseline.benchmarks[0].provenance.at("sm_clock_mhz"), "1980");
  EXPECT_EQ(baseline.context.date, run.context.date);

  const kgate::BaselineChanges pruned = kgate::record_in_baseline(baseline, run, "run.json", {}, true);
  EXPECT_EQ(pruned.pruned, std::vector<std::string>{kC});
  EXPECT_EQ(pruned.kept, 0u);
  EXPECT_EQ(baseline.benchmarks.size(), 2u);

  RunResults nothing_fit = syn::run({syn::benchmark(kA, {.samples = 1})});
  EXPECT_THROW(kgate::record_in_baseline(baseline, nothing_fit, "one.json", {}, false), kgate::ResultsError);
}

TEST(Baseline, TimersOfTheEntries) {
  std::vector<BenchmarkRecord> entries = {syn::benchmark(kA, {}), syn::benchmark(kB, {.seed = 2})};
  entries[0].cold->timer = "cupti";
  entries[1].cold->timer = "events";
  EXPECT_EQ(kgate::timers_of(entries), (std::map<std::string, std::string>{{"cupti", kA}, {"events", kB}}));
}

}  // namespace
