// summary.md as a pull-request comment, on issue 35's case: the H100 whole-suite run of f697667
// (649 benchmarks with their PyTorch peers) against a synthetic copy of itself with three benchmarks
// of three families 6% slower.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include "kgate/base/escape.hpp"
#include "kgate/gate/comparison_output.hpp"
#include "kgate/report/report.hpp"
#include "kgate/results/results_io.hpp"
#include "src/kgate/report/report_inline.hpp"

namespace {

const std::vector<std::string> kSlowed = {"decode_attention/splitk/b:16/hq:32/hkv:8/d:128/l:4096/bf16",
                                          "rmsnorm/vectorized/m:256/n:4096/bf16", "gemv/vectorized/m:4/n:6144/k:4096/bf16"};

// Every timing of `names` multiplied by `factor`: a synthetic slowdown of the same shape as the run's own samples.
kgate::RunResults slowed_copy(kgate::RunResults run, const std::vector<std::string>& names, double factor) {
  std::size_t slowed = 0;
  for (kgate::BenchmarkRecord& r : run.benchmarks) {
    if (std::find(names.begin(), names.end(), r.name) == names.end()) continue;
    ++slowed;
    for (std::optional<kgate::TimingRecord>* mode : {&r.cold, &r.hot})
      if (*mode) {
        for (double& s : (*mode)->samples_s) s *= factor;
        for (double& m : (*mode)->repetition_medians_s) m *= factor;
        (*mode)->summary = kgate::summarize((*mode)->samples_s);
      }
  }
  EXPECT_EQ(slowed, names.size());
  return run;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ReportSummary, APullRequestCommentOfTheWholeH100SuiteWithThreeSlowed) {
  const std::string original = KGATE_TEST_DATA_DIR "/recorded-h100-f697667-peers.json.gz";
  const kgate::RunResults base = kgate::read_results_file(original);
  kgate::ReportInputs inputs;
  inputs.current = {"synthetic-h100-f697667-3-slower-6pct.json", slowed_copy(base, kSlowed, 1.06)};
  inputs.baseline = kgate::NamedRun{"recorded-h100-f697667-peers.json.gz", base};
  const kgate::report::Report report = kgate::report::build_report(inputs);
  const std::string& summary = report.summary_markdown;
  ASSERT_TRUE(report.gate_failed);

  EXPECT_LT(summary.size(), 60000u);
  const std::vector<std::string> lines = lines_of(summary);
  ASSERT_FALSE(lines.empty());
  // The first line says the gate failed and names the worst row.
  const kgate::ComparisonReport comparison =
      kgate::compare_runs(base, inputs.current.run, inputs.baseline->source, inputs.current.source, inputs.compare);
  const kgate::BenchmarkComparison& worst = *kgate::rows_by_impact(comparison, false).front();
  EXPECT_TRUE(lines.front().starts_with("❌ kgate: FAIL, 3 slower")) << lines.front();
  EXPECT_NE(lines.front().find(kgate::report::literal(worst.name)), std::string::npos) << lines.front();
  // The three slowed benchmarks are in its first 30 lines, each linked to its panel in the report.
  std::string head;
  for (std::size_t i = 0; i < std::min<std::size_t>(30, lines.size()); ++i) head += lines[i] + "\n";
  for (const std::string& name : kSlowed)
    EXPECT_NE(head.find("[`" + name + "`](report.html#" + kgate::benchmark_anchor(name) + ")"), std::string::npos) << name;
  // No path of the machine that wrote it: links are relative (or under --link-base), inputs by name.
  EXPECT_EQ(summary.find(KGATE_TEST_DATA_DIR), std::string::npos);
  static const std::regex absolute_path(R"((^|[\s(`'"])/(work|tmp|root|home|usr|opt)/)");
  EXPECT_FALSE(std::regex_search(summary, absolute_path));

  // With --link-base every link is absolute, and the comment stays under the limit.
  inputs.link_base = "https://ci.example/artifacts/report";
  const std::string linked = kgate::report::build_report(inputs).summary_markdown;
  EXPECT_LT(linked.size(), 60000u);
  static const std::regex link(R"(\]\(([^)]*)\))");
  std::size_t links = 0;
  for (auto it = std::sregex_iterator(linked.begin(), linked.end(), link); it != std::sregex_iterator(); ++it, ++links)
    EXPECT_TRUE((*it)[1].str().starts_with("https://ci.example/artifacts/report/")) << (*it)[1].str();
  EXPECT_GT(links, 3u);
}

// Thousands of changed benchmarks: the comment keeps the worst rows that fit and says how many more.
TEST(ReportSummary, StaysUnderTheCommentLimitWhenEverythingChanged) {
  const std::string original = KGATE_TEST_DATA_DIR "/recorded-h100-f697667-peers.json.gz";
  const kgate::RunResults base = kgate::read_results_file(original);
  std::vector<std::string> all;
  for (const kgate::BenchmarkRecord& r : base.benchmarks)
    if (r.role != "peer" && r.status == kgate::BenchmarkStatus::ok) all.push_back(r.name);
  kgate::RunResults current = slowed_copy(base, all, 1.25);
  kgate::ReportInputs inputs;
  inputs.current = {"synthetic-all-slower.json", std::move(current)};
  inputs.baseline = kgate::NamedRun{"recorded-h100-f697667-peers.json.gz", base};
  const std::string summary = kgate::report::build_report(inputs).summary_markdown;
  EXPECT_LT(summary.size(), 60000u);
  EXPECT_TRUE(summary.starts_with("❌ kgate: FAIL")) << summary.substr(0, 200);
  EXPECT_NE(summary.find(" more changed benchmarks: [the full report](report.html#dashboard)"), std::string::npos);
}

}  // namespace
