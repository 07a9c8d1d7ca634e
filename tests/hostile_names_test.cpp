// Hostile names through every output (issue 34: "Escape by destination"): a synthetic run made
// from a small recorded one, with every name, GPU, host, kernel and error string replaced by text
// that would add markup, close a code block, drive a terminal or break UTF-8, rendered as each of
// kgate's outputs: report.md, summary.md, report.html and its SVG charts, the terminal report,
// story.md/html, compare's table, Markdown and JUnit, and history show/changes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/base/statistics.hpp"
#include "kgate/gate/compare.hpp"
#include "kgate/gate/comparison_output.hpp"
#include "kgate/report/report.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/story/story.hpp"
#include "tests/cli_runner.hpp"
#include "tests/xml_check.hpp"

namespace {

namespace fs = std::filesystem;
using kgate::BenchmarkRecord;
using kgate::NamedRun;
using kgate::RunResults;

// Everything the issue names: markup, an <img onerror>, backticks and a code fence on a line of its
// own followed by a heading and a script (a code span or block fenced too short ends early and
// lets them out), the table and link punctuation, newlines, an SGR and an OSC sequence, BEL, a C1
// CSI, a right-to-left override. Valid UTF-8, so that a results file can hold it.
const std::string kHostile =
    " `<b>tick</b>` ``` <img src=x onerror=alert(1)>\n```\n# injected heading\n<script>alert(1)</script>\n``` a|b ] ) "
    "[x](javascript:alert(1)) **b** _i_ \x1b[31mred\x1b]0;title\x07 \xc2\x9b"
    "2J \xe2\x80\xae"
    "fed";
// And bytes that are not UTF-8 at all, which only names made in memory or on a command line hold.
const std::string kNotUtf8 = " \xff\xfe\xc0\xaf";

std::string hostile(const std::string& name, bool utf8_only) { return name + kHostile + (utf8_only ? "" : kNotUtf8); }

// The first character of `text` a reader would not see as it is: a control character other than
// newline (and tab), DEL, a C1 control, a bidirectional override, or a byte outside UTF-8; npos
// when there is none. Written apart from base/escape.cpp, which it checks.
std::size_t first_hidden(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return i;
      ++i;
      continue;
    }
    const std::size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (length == 0 || i + length > text.size()) return i;
    for (std::size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return i;
    const std::string_view seq = text.substr(i, length);
    if (seq >= "\xc2\x80" && seq <= "\xc2\x9f") return i;                      // C1
    if (seq >= "\xe2\x80\xaa" && seq <= "\xe2\x80\xae") return i;              // embeddings and overrides
    if (seq >= "\xe2\x81\xa6" && seq <= "\xe2\x81\xa9") return i;              // isolates
    if (seq.starts_with("\xed\xa0") || seq.starts_with("\xed\xb0")) return i;  // surrogates
    i += length;
  }
  return std::string_view::npos;
}

void expect_all_visible(const std::string& text, const std::string& what) {
  const std::size_t at = first_hidden(text);
  EXPECT_EQ(at, std::string::npos) << what << ": a hidden character at byte " << at << ": "
                                   << text.substr(at == std::string::npos ? 0 : (at > 40 ? at - 40 : 0), 80);
}

// GitHub-flavoured Markdown, read as GitHub does for what matters here: which text is code, which
// lines are HTML blocks, how table rows split into cells, where links point. Problems found: raw
// HTML outside code other than kgate's own blocks, a code block left open, a table row with more or
// fewer cells than its header, a link to anything but an anchor or a file beside the report.
std::vector<std::string> markdown_problems(const std::string& markdown) {
  // kgate's own folds: a folded table, and a folded section (its title and one line, escaped, on one line).
  static const std::regex own_html(R"(<details><summary>[^<>]*</summary>|</details>|<a id="[a-z0-9-]+"></a>|)"
                                   R"(<details( open)?( id="[a-z0-9-]+")?><summary><b>[^<>]*</b>( — [^<>]*)?</summary>)");
  static const std::regex fence_open(R"( {0,3}(`{3,})[^`]*)");
  std::vector<std::string> problems;
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < markdown.size();) {
    const std::size_t end = std::min(markdown.find('\n', start), markdown.size());
    lines.push_back(markdown.substr(start, end - start));
    start = end + 1;
  }
  // The number of backticks in the run at line[i].
  const auto backticks_at = [](const std::string& line, std::size_t i) {
    const std::size_t end = line.find_first_not_of('`', i);
    return (end == std::string::npos ? line.size() : end) - i;
  };
  std::size_t fence = 0;  // the open code block's fence length; 0 outside one
  std::size_t table_cells = 0;
  for (const std::string& line : lines) {
    std::smatch m;
    if (fence > 0) {  // closed by a line of at least as many backticks, indented 3 spaces at most
      const std::size_t indent = line.find_first_not_of(' ');
      const std::size_t ticks = indent == std::string::npos ? 0 : backticks_at(line, indent);
      if (indent <= 3 && ticks >= fence && line.find_first_not_of(' ', indent + ticks) == std::string::npos) fence = 0;
      continue;
    }
    if (std::regex_match(line, m, fence_open)) {
      fence = static_cast<std::size_t>(m[1].length());
      continue;
    }
    if (std::regex_match(line, own_html)) continue;
    // Table rows: GitHub splits cells at each '|' without a backslash right before it.
    if (line.starts_with("|")) {
      std::size_t cells = 0;
      for (std::size_t i = 0; i < line.size(); ++i) cells += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
      if (table_cells == 0) table_cells = cells;
      else if (cells != table_cells)
        problems.push_back("a table row of " + std::to_string(cells) + " pipes, not " + std::to_string(table_cells) + ": " +
                           line.substr(0, 120));
    } else {
      table_cells = 0;
    }
    // The text outside code spans: a run of N backticks opens one that the next run of exactly N closes.
    std::string outside;
    for (std::size_t i = 0; i < line.size();) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        outside += line.substr(i, 2);
        i += 2;
      } else if (line[i] != '`') {
        outside += line[i++];
      } else {
        const std::size_t run = backticks_at(line, i);
        std::size_t close = line.find('`', i + run);
        while (close != std::string::npos && backticks_at(line, close) != run) close = line.find('`', close + backticks_at(line, close));
        if (close == std::string::npos) outside += line.substr(i, run);
        i = close == std::string::npos ? i + run : close + run;
      }
    }
    // Raw HTML (and autolinks) start with '<' and a letter, '/', '!' or '?'; "<0.001" is text.
    static const std::regex raw_html("<[A-Za-z/!?]");
    if (std::smatch tag; std::regex_search(outside, tag, raw_html))
      problems.push_back("raw HTML outside code: " + outside.substr(static_cast<std::size_t>(tag.position()), 120));
    static const std::regex link(R"(\]\(([^)]*)\))");
    static const std::regex target(R"(#[a-z0-9_-]+|[A-Za-z0-9_-][A-Za-z0-9._-]*(#[a-z0-9_-]+)?)");
    for (auto it = std::sregex_iterator(outside.begin(), outside.end(), link); it != std::sregex_iterator(); ++it)
      if (const std::size_t at = static_cast<std::size_t>(it->position());
          (at == 0 || outside[at - 1] != '\\') && !std::regex_match((*it)[1].str(), target))
        problems.push_back("a link to " + (*it)[1].str());
    if (outside.find("# injected") == 0) problems.push_back("a heading from a name: " + line);
  }
  if (fence > 0) problems.push_back("a code block left open at the end");
  return problems;
}

void expect_safe_markdown(const std::string& markdown, const std::string& what) {
  expect_all_visible(markdown, what);
  for (const std::string& problem : markdown_problems(markdown)) ADD_FAILURE() << what << ": " << problem;
}

// HTML: kgate's one script (the table sorting), no element or event handler from a name.
void expect_safe_html(const std::string& html, const std::string& what) {
  expect_all_visible(html, what);
  EXPECT_EQ(html.find("<script"), html.rfind("<script")) << what;
  EXPECT_EQ(html.find("<img"), std::string::npos) << what;
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(<[^>]*\son[a-z]+=)"))) << what << ": an event handler in a tag";
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos) << what << ": the name, shown as text";
}

void expect_safe_terminal(const std::string& text, const std::string& what) {
  expect_all_visible(text, what);
  EXPECT_NE(text.find("\\x1b[31mred"), std::string::npos) << what << ": ESC shown as \\x1b";
}

// A small synthetic run from a recorded one: two benchmarks of each kernel family, every name and
// string from the input replaced by a hostile one (the same replacement in a baseline made from
// the second recorded run, so that they match), one benchmark slower with another kernel, one
// failed, one wrong, a 10 kB variant name.
RunResults synthetic_hostile_run(const std::string& recorded, bool utf8_only, bool slower) {
  RunResults run = kgate::read_results_file(std::string(KGATE_TEST_DATA_DIR) + "/" + recorded);
  std::vector<BenchmarkRecord> kept;
  std::map<std::string, int> per_family;
  for (BenchmarkRecord& r : run.benchmarks)
    if (r.family != "workload" && r.status == kgate::BenchmarkStatus::ok && per_family[r.family]++ < 2) kept.push_back(std::move(r));
  run.benchmarks = std::move(kept);
  for (std::size_t i = 0; i < run.benchmarks.size(); ++i) {
    BenchmarkRecord& r = run.benchmarks[i];
    r.family = hostile(r.family, utf8_only);
    r.variant = i == 1 ? std::string(10000, 'v') + kHostile : hostile(r.variant, utf8_only);
    r.shape = hostile(r.shape, utf8_only);
    r.name = r.family + "/" + r.variant + "/" + r.shape;
    for (kgate::KernelRecord& k : r.kernels) {
      k.name = hostile(k.name, utf8_only);
      k.demangled = hostile(k.demangled, utf8_only);
    }
    if (!r.metrics.empty()) r.metrics[hostile("metric", utf8_only)] = 1;
  }
  BenchmarkRecord& failed = run.benchmarks.at(2);
  failed.status = kgate::BenchmarkStatus::failed;
  failed.error = hostile("error", utf8_only);
  BenchmarkRecord& wrong = run.benchmarks.at(4);
  wrong.correct = false;
  wrong.correctness_detail = hostile("detail", utf8_only);
  if (slower) {
    BenchmarkRecord& slow = run.benchmarks.at(0);
    for (std::optional<kgate::TimingRecord>* timing : {&slow.cold, &slow.hot}) {
      if (!*timing) continue;
      for (double& s : (*timing)->samples_s) s *= 1.5;
      for (double& s : (*timing)->repetition_medians_s) s *= 1.5;
      (*timing)->summary = kgate::summarize((*timing)->samples_s);
    }
    if (!slow.kernels.empty()) slow.kernels.front().name = hostile("another_kernel", utf8_only);
  }
  kgate::RunContext& c = run.context;
  c.gpu_name = hostile("NVIDIA H100", utf8_only);
  c.host = hostile("host", utf8_only);
  c.git_commit = hostile(slower ? "c0ffee" : "decade", utf8_only);
  c.build_type = hostile("Release", utf8_only);
  c.cuda_architectures = hostile("90a", utf8_only);
  c.command_line = hostile("kgate_bench", utf8_only);
  c.calibration.cached_from = hostile("calibration.json", utf8_only);
  c.extra[hostile("key", utf8_only)] = hostile("value", utf8_only);
  return run;
}

struct Runs {
  NamedRun baseline{"synthetic-hostile-baseline" + kHostile + kNotUtf8 + ".json",
                    synthetic_hostile_run("recorded-h100-run-b.json.gz", false, false)};
  NamedRun current{"synthetic-hostile-new" + kHostile + kNotUtf8 + ".json",
                   synthetic_hostile_run("recorded-h100-run-a.json.gz", false, true)};
};

const Runs& runs() {
  static const Runs made;
  return made;
}

TEST(HostileNames, TheSyntheticRunHoldsThem) {
  const RunResults& run = runs().current.run;
  ASSERT_GE(run.benchmarks.size(), 10u);
  EXPECT_GT(run.benchmarks[1].variant.size(), 10000u);
  EXPECT_NE(run.context.gpu_name.find("<img"), std::string::npos);
  EXPECT_NE(run.benchmarks[0].name.find('\x1b'), std::string::npos);
}

TEST(HostileNames, ReportOutputs) {
  kgate::ReportInputs inputs;
  inputs.current = runs().current;
  inputs.baseline = runs().baseline;
  inputs.invocation = "kgate report" + kHostile;
  inputs.correctness_source = "ctest" + kHostile + ".xml";
  inputs.correctness = {{hostile("variant", false), hostile("shape", false), kgate::SuiteCase::Result::skipped, hostile("reason", false)},
                        {hostile("other", false), "", kgate::SuiteCase::Result::failed, ""}};
  const kgate::report::Report report = kgate::report::build_report(inputs);
  ASSERT_TRUE(report.gate_failed);  // the planted slowdown
  expect_safe_markdown(kgate::report::render_markdown(report.full), "report.md");
  expect_safe_markdown(report.summary_markdown, "summary.md");
  expect_safe_html(kgate::report::render_html(report.full), "report.html");
  expect_safe_terminal(kgate::report::render_text(report.full), "report --format text");
  for (const kgate::report::Chart& chart : report.full.charts) {
    EXPECT_EQ(kgate::testing::xml_problem(chart.svg), "") << chart.file;
    expect_all_visible(chart.svg, chart.file);
    EXPECT_EQ(chart.file.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."), std::string::npos)
        << chart.file;
  }
}

TEST(HostileNames, CompareOutputs) {
  const kgate::ComparisonReport report =
      kgate::compare_runs(runs().baseline.run, runs().current.run, runs().baseline.source, runs().current.source, {});
  ASSERT_TRUE(report.regression());
  expect_safe_terminal(kgate::format_table(report, false, true), "compare's table");
  expect_all_visible(kgate::format_warnings(report, false), "compare's warnings");
  expect_safe_markdown(kgate::report_to_markdown(report), "compare --markdown");
  const std::string junit = kgate::report_to_junit(report);
  EXPECT_EQ(kgate::testing::xml_problem(junit), "");
  expect_all_visible(junit, "compare --junit");
}

TEST(HostileNames, StoryOutputs) {
  NamedRun named{"synthetic-hostile-story" + kHostile + ".json",
                 kgate::read_results_file(std::string(KGATE_TEST_DATA_DIR) + "/synthetic-story-llama3-8b.json")};
  named.run.context.gpu_name = hostile("NVIDIA H200", false);
  std::string told;
  for (BenchmarkRecord& r : named.run.benchmarks) {
    if (!r.workload) continue;
    r.workload->model.display_name = hostile("Llama", false);
    for (kgate::WorkloadStepRecord& s : r.workload->steps) {
      s.label = hostile(s.label, false);
      s.family = hostile(s.family, false);
      s.variant = hostile(s.variant, false);
    }
    for (kgate::TimelineKernel& k : r.workload->timeline) k.kernel.demangled = hostile(k.kernel.demangled, false);
    if (told.empty() && !r.workload->timeline.empty()) told = r.name;
  }
  ASSERT_FALSE(told.empty());
  const kgate::report::Document story = kgate::story::build_story({named, told, "kgate story" + kHostile});
  expect_safe_markdown(kgate::report::render_markdown(story), "story.md");
  expect_safe_html(kgate::report::render_html(story), "story.html");
  expect_safe_terminal(kgate::report::render_text(story), "story --format text");
  for (const kgate::report::Chart& chart : story.charts) {
    EXPECT_EQ(kgate::testing::xml_problem(chart.svg), "") << chart.file;
    expect_all_visible(chart.svg, chart.file);
  }
}

// Through the command line, from results files (which hold UTF-8 only): compare's table and error
// messages, history show and changes.
TEST(HostileNames, CommandLineOutputs) {
  const fs::path dir = fs::temp_directory_path() / ("kgate-hostile-names-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string base = (dir / "base.json").string(), next = (dir / "new.json").string(), db = (dir / "h.sqlite").string();
  kgate::write_results_file(base, kgate::to_json(synthetic_hostile_run("recorded-h100-run-b.json.gz", true, false)));
  kgate::write_results_file(next, kgate::to_json(synthetic_hostile_run("recorded-h100-run-a.json.gz", true, true)));
  using kgate::cli_test::kgate_cli;
  const auto compare = kgate_cli({"compare", base, next, "--all"});
  EXPECT_EQ(compare.status, 1) << compare.err;
  expect_safe_terminal(compare.out, "kgate compare");
  expect_all_visible(compare.err, "kgate compare's warnings");
  for (const std::string& file : {base, next}) {
    const auto add = kgate_cli({"history", "add", "--db", db, file});
    EXPECT_EQ(add.status, 0) << add.err;
    expect_all_visible(add.out, "kgate history add");
  }
  const auto show = kgate_cli({"history", "show", "--db", db, "."});
  EXPECT_EQ(show.status, 0) << show.err;
  expect_safe_terminal(show.out, "kgate history show");
  const auto changes = kgate_cli({"history", "changes", "--db", db});
  expect_all_visible(changes.out + changes.err, "kgate history changes");
  // An error message that quotes a name: the name's escapes shown, not sent.
  const auto refused = kgate_cli({"compare", base, (dir / ("missing\x1b[31m.json")).string()});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("missing\\x1b[31m.json"), std::string::npos) << refused.err;
  expect_all_visible(refused.err, "an error naming a file");
  fs::remove_all(dir);
}

}  // namespace
