// What kgate compare writes for people: the verdict in one line, the pull-request comment (its
// first line, its changed rows, its fold, its size cap and its links), the terminal table in plain
// ASCII, and inputs named without the writing machine's layout.
#include "kgate/gate/comparison_output.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <regex>

#include "kgate/base/escape.hpp"
#include "kgate/results/results_io.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"

namespace {

using kgate::BenchmarkRecord;
using kgate::ComparisonReport;
using kgate::Glyphs;
using kgate::MarkdownOptions;
using kgate::RunResults;
namespace syn = kgate::synthetic;

const std::string kLinkBase = "https://ci.example.org/runs/42/kgate-report";

// A synthetic whole suite of `count` benchmarks, every `slow_every`-th of them 20% slower in the
// new run (0: none), the first `fast` of the others 20% faster. Low noise: every verdict is clear.
std::pair<RunResults, RunResults> synthetic_suite(std::size_t count, std::size_t slow_every, std::size_t fast = 0) {
  std::vector<BenchmarkRecord> base, next;
  std::size_t faster = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string name = "family_" + std::to_string(i % 7) + "/variant_" + std::to_string(i % 5) + "/m:" + std::to_string(i) + "/bf16";
    double change = 1;
    if (slow_every && i % slow_every == 0) change = 1.2;
    else if (faster < fast && ++faster) change = 1 / 1.2;
    base.push_back(syn::benchmark(name, {.median_s = 20e-6, .rel_noise = 0.002, .samples = 20, .seed = 1 + i}));
    next.push_back(syn::benchmark(name, {.median_s = 20e-6 * change, .rel_noise = 0.002, .samples = 20, .seed = 100000 + i}));
  }
  return {syn::run(base), syn::run(next)};
}

ComparisonReport compare_suite(std::size_t count, std::size_t slow_every, std::size_t fast = 0) {
  const auto [base, next] = synthetic_suite(count, slow_every, fast);
  return kgate::compare_runs(base, next, "base.json", "new.json", {});
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST(ComparisonOutput, TheHeadlineSaysTheVerdictAndNamesTheWorstRows) {
  const ComparisonReport pass = compare_suite(20, 0, 2);
  EXPECT_EQ(kgate::verdict_headline(pass), "✅ kgate: pass, 0 slower, 2 faster");
  EXPECT_EQ(kgate::verdict_headline(pass, Glyphs::ascii), "kgate: pass, 0 slower, 2 faster");

  ComparisonReport fail = compare_suite(20, 4);  // 5 slower, by 20%
  fail.benchmarks[1].verdict = kgate::Verdict::failed;
  const std::string headline = kgate::verdict_headline(fail);
  EXPECT_TRUE(std::regex_match(headline, std::regex("❌ kgate: FAIL, 5 slower, 1 failed, 0 faster — "
                                                    "(family_\\d/variant_\\d/m:\\d+/bf16 \\+2\\d\\.\\d%, ){2}"
                                                    "family_\\d/variant_\\d/m:\\d+/bf16 \\+2\\d\\.\\d% and 3 more")))
      << headline;
  EXPECT_EQ(kgate::verdict_headline(fail, Glyphs::ascii).find("FAIL, 5 slower, 1 failed, 0 faster - family_"), 7u);
  // The Markdown and the table say it too.
  EXPECT_EQ(first_line(kgate::report_to_markdown(fail)), kgate::markdown_text(headline, true));
  const std::string table = kgate::format_table(fail, false);
  EXPECT_TRUE(table.ends_with("\n" + headline + "\n")) << table;
}

TEST(ComparisonOutput, TheCommentListsTheChangesThenFoldsTheRest) {
  const ComparisonReport report = compare_suite(40, 10, 3);  // 4 slower, 3 faster, 33 same
  const std::string md = kgate::report_to_markdown(report);
  const std::size_t fold = md.find("<details><summary>33 unchanged</summary>");
  ASSERT_NE(fold, std::string::npos) << md;
  EXPECT_NE(md.find("</details>", fold), std::string::npos);
  std::size_t slower_rows = 0, faster_rows = 0, same_rows = 0;
  for (std::size_t at = md.find("\n| `"); at != std::string::npos; at = md.find("\n| `", at + 1)) {
    const std::string row = md.substr(at + 1, md.find('\n', at + 1) - at - 1);
    const bool slower = row.find("| **slower** |") != std::string::npos, faster = row.find("| faster |") != std::string::npos;
    const bool same = row.find("| same |") != std::string::npos;
    slower_rows += slower;
    faster_rows += faster;
    same_rows += same;
    EXPECT_EQ(at < fold, slower || faster) << row;
  }
  EXPECT_EQ(slower_rows, 4u);
  EXPECT_EQ(faster_rows, 3u);
  EXPECT_EQ(same_rows, 33u);
  // A slower row: its change in time, Δ time (new − baseline), speedup, interval and detectable change.
  EXPECT_TRUE(std::regex_search(
      md, std::regex(
              R"(\| \*\*slower\*\* \| \+20\.\d% \| \+[34]\.\d\d µs \| 20\.0 µs \| 2[34]\.\d µs \| 0\.8\d\d× \| 0\.8\d+–0\.8\d+ \| - \|)")))
      << md;
}

TEST(ComparisonOutput, TheCommentStaysUnderTheLimitForThousandsOfBenchmarks) {
  // 6000 benchmarks, every third slower: 2000 changed rows of about 200 bytes each do not fit.
  const ComparisonReport report = compare_suite(6000, 3);
  for (const std::string& link_base : {std::string(), kLinkBase}) {
    const std::string md = kgate::report_to_markdown(report, {.link_base = link_base});
    EXPECT_LT(md.size(), kgate::kMarkdownCommentLimit) << "link base '" << link_base << "'";
    EXPECT_GT(md.size(), kgate::kMarkdownCommentLimit - 5'000) << "the space is used";
    EXPECT_EQ(md.rfind("❌ kgate: FAIL, 2000 slower, 0 faster — ", 0), 0u);
    const std::regex more(R"(\n… and (\d+) more changed benchmarks: )");
    std::smatch match;
    ASSERT_TRUE(std::regex_search(md, match, more)) << md.substr(md.size() - 2000);
    EXPECT_GT(std::stoul(match[1]), 1000u);
    EXPECT_LT(std::stoul(match[1]), 1900u) << "a few hundred rows listed";
    EXPECT_NE(md.find("<details><summary>4000 unchanged</summary>"), std::string::npos);
    EXPECT_NE(md.find("… and 4000 more unchanged benchmarks: "), std::string::npos) << "no room left for the fold's rows";
    if (link_base.empty()) {
      EXPECT_NE(md.find("`kgate compare --all` and `--json` list every one"), std::string::npos);
    } else {
      EXPECT_NE(md.find("[the full report](" + kLinkBase + "/report.html) lists every one"), std::string::npos);
    }
  }
  // Even a comment whose every row is long: notes from the inputs are shortened, and a row that
  // does not fit is counted.
  ComparisonReport wordy = compare_suite(300, 2);
  for (auto& row : wordy.benchmarks) row.notes.push_back(std::string(5'000, 'n'));
  EXPECT_LT(kgate::report_to_markdown(wordy).size(), kgate::kMarkdownCommentLimit);
  EXPECT_LT(kgate::report_to_markdown(wordy, {.max_bytes = 3'000}).size(), 3'000u);
}

TEST(ComparisonOutput, WithALinkBaseEveryLinkIsAbsolute) {
  const ComparisonReport report = compare_suite(30, 10);
  const std::string md = kgate::report_to_markdown(report, {.link_base = kLinkBase + "/"});
  std::size_t links = 0;
  for (std::size_t at = md.find("]("); at != std::string::npos; at = md.find("](", at + 1), ++links)
    EXPECT_EQ(md.compare(at + 2, kLinkBase.size() + 12, kLinkBase + "/report.html"), 0) << md.substr(at, 120);
  EXPECT_EQ(links, 31u) << "each benchmark and the full report";
  const std::string name = report.benchmarks[0].name;
  EXPECT_NE(md.find("[`" + name + "`](" + kLinkBase + "/report.html#" + kgate::benchmark_anchor(name) + ")"), std::string::npos) << md;
  EXPECT_NE(md.find("[Full report](" + kLinkBase + "/report.html)"), std::string::npos);
  EXPECT_EQ(kgate::report_to_markdown(report).find("]("), std::string::npos) << "no link without a link base";
}

TEST(ComparisonOutput, TheCommandLineNamesItsInputsWithoutTheirFolder) {
  const syn::TempDir dir;
  const auto [base, next] = synthetic_suite(12, 4);
  kgate::write_results_file(dir.file("base.json"), kgate::to_json(base));
  kgate::write_results_file(dir.file("new.json"), kgate::to_json(next));
  const std::string markdown = dir.file("comment.md");
  auto r = kgate::cli_test::kgate_cli(
      {"compare", dir.file("base.json"), dir.file("new.json"), "--markdown", markdown, "--link-base", kLinkBase});
  EXPECT_EQ(r.status, 1) << r.err;
  const std::string md = syn::read_text(markdown);
  EXPECT_EQ(md.rfind("❌ kgate: FAIL, 3 slower, 0 faster — ", 0), 0u) << md;
  EXPECT_NE(md.find("**kgate compare** of `new.json` against `base.json`: 3 slower"), std::string::npos) << md;
  EXPECT_EQ(md.find(dir.path().string()), std::string::npos) << md;
  EXPECT_EQ(r.out.find(dir.path().string()), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with(kgate::verdict_headline(kgate::compare_runs(base, next, "base.json", "new.json", {})) + "\n")) << r.out;
  EXPECT_EQ(std::regex_search(md, std::regex(R"(\]\((?!https://))")), false) << md;

  // A link base that is not an absolute URL, or one a link cannot hold, is refused before any work.
  for (const std::string bad : {"ci.example.org/report", "/srv/www/report", "https://x.org/a b", "https://x.org/a)b"}) {
    r = kgate::cli_test::kgate_cli({"compare", dir.file("base.json"), dir.file("new.json"), "--link-base", bad});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("--link-base"), std::string::npos) << r.err;
  }
}

TEST(ComparisonOutput, TheTableInPlainAscii) {
  const syn::TempDir dir;
  const auto [base, next] = synthetic_suite(12, 4);
  kgate::write_results_file(dir.file("base.json"), kgate::to_json(base));
  kgate::write_results_file(dir.file("new.json"), kgate::to_json(next));
  const auto is_ascii = [](const std::string& text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  };
  const auto unicode = kgate::cli_test::kgate_cli({"compare", dir.file("base.json"), dir.file("new.json")});
  EXPECT_NE(unicode.out.find("×"), std::string::npos) << unicode.out;
  EXPECT_NE(unicode.out.find(" µs"), std::string::npos) << unicode.out;
  const auto ascii = kgate::cli_test::kgate_cli({"compare", dir.file("base.json"), dir.file("new.json"), "--ascii"});
  EXPECT_EQ(ascii.status, 1);
  EXPECT_TRUE(is_ascii(ascii.out)) << ascii.out;
  EXPECT_NE(ascii.out.find(" us  "), std::string::npos) << ascii.out;
  EXPECT_NE(ascii.out.find("x  "), std::string::npos) << ascii.out;
  EXPECT_NE(ascii.out.find("\nkgate: FAIL, 3 slower, 0 faster - family_"), std::string::npos) << "no emoji: " << ascii.out;
  ::setenv("KGATE_ASCII", "1", 1);
  const auto environment = kgate::cli_test::kgate_cli({"compare", dir.file("base.json"), dir.file("new.json")});
  ::unsetenv("KGATE_ASCII");
  EXPECT_EQ(environment.out, ascii.out);
}

}  // namespace
