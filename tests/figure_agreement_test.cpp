// One figure, one spelling: the speedup, its interval, the detectable change and the times of a
// comparison read the same in `kgate compare`'s table, its Markdown, and the report's Markdown and
// HTML (base/figures.hpp formats them for all four).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kgate/base/figures.hpp"
#include "kgate/gate/comparison_output.hpp"
#include "kgate/report/report.hpp"
#include "kgate/results/repetitions.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;

const std::string kName = "rmsnorm/vectorized/m:4096/n:4096/bf16";

// A CUPTI-timed benchmark of three processes (synthetic: drawn, not measured), so that the
// comparison has a minimum detectable change to show.
kgate::BenchmarkRecord cupti_timed(double median_s, std::uint64_t seed) {
  kgate::BenchmarkRecord pooled = syn::benchmark(kName, {.median_s = median_s, .rel_noise = 0.004, .samples = 40, .seed = seed});
  for (std::uint64_t process = 1; process < 3; ++process)
    kgate::pool_repetition(pooled,
                           syn::benchmark(kName, {.median_s = median_s, .rel_noise = 0.004, .samples = 40, .seed = seed + 100 * process}),
                           syn::context().calibration);
  pooled.cold->timer = "cupti";
  return pooled;
}

TEST(FigureAgreement, CompareAndTheReportPrintTheSameFigureTheSameWay) {
  // synthetic: a 6% slowdown of a 93 µs kernel.
  const kgate::RunResults base = syn::run({cupti_timed(93.1e-6, 1)});
  const kgate::RunResults next = syn::run({cupti_timed(93.1e-6 * 1.06, 2)});
  const kgate::ComparisonReport comparison = kgate::compare_runs(base, next, "base.json", "new.json", {});
  const kgate::BenchmarkComparison& row = comparison.benchmarks.at(0);
  ASSERT_EQ(row.verdict, kgate::Verdict::slower);
  ASSERT_GT(row.min_detectable_change, 0);

  kgate::ReportInputs inputs;
  inputs.current = {"new.json", next};
  inputs.baseline = kgate::NamedRun{"base.json", base};
  const kgate::report::Report report = kgate::report::build_report(inputs);
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {"kgate compare's table", kgate::format_table(comparison, false)},
      {"kgate compare --markdown", kgate::report_to_markdown(comparison)},
      {"report.md", kgate::report::render_markdown(report.full)},
      {"report.html", kgate::report::render_html(report.full)},
  };
  const std::vector<std::pair<std::string, std::string>> figures = {
      {"speedup", kgate::format_ratio(row.speedup)},
      {"interval", kgate::format_interval(row.ci_low, row.ci_high)},
      {"detectable change", kgate::format_detectable(row.min_detectable_change)},
      {"baseline time", kgate::format_time(row.baseline_median_s)},
      {"new time", kgate::format_time(row.new_median_s)},
  };
  for (const auto& [figure, spelling] : figures)
    for (const auto& [output, text] : outputs)
      EXPECT_NE(text.find(spelling), std::string::npos) << figure << " " << spelling << " is not in " << output;
  // The figures' spellings themselves: three significant digits, × and µs.
  EXPECT_EQ(kgate::format_ratio(row.speedup), kgate::sig3(row.speedup) + "×");
  EXPECT_EQ(kgate::format_time(row.baseline_median_s), "93.1 µs");
}

}  // namespace
