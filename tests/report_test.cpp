// kgate report, rendered from the recorded H200 runs in tests/data and from a synthetic "new" run
// derived from them, and checked against that input: the sections, the figures in the tables,
// the executive summary (every number in it comes from the data), the observations, the history,
// well-formed SVG and self-contained HTML, and the command line. The assertions relate the output
// to whatever run is recorded, so a newer recording under the same name pattern keeps them valid.
#include "kgate/report/report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "kgate/base/escape.hpp"
#include "kgate/gate/compare.hpp"
#include "kgate/gate/comparison_output.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/report/format.hpp"
#include "src/kgate/report/report_model.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"
#include "tests/xml_check.hpp"

namespace {

using kgate::BenchmarkRecord;
using kgate::KernelRecord;
using kgate::RunResults;
using kgate::report::Document;
using kgate::report::Section;
using kgate::report::Table;
namespace fs = std::filesystem;
namespace syn = kgate::synthetic;
using kgate::testing::xml_problem;

// ---------------------------------------------------------------------------------------------
// Inputs

// Every recorded RMSNorm run: recorded-<gpu>-rmsnorm-<run>.json, gzipped or not.
std::vector<std::string> recorded_runs() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(KGATE_TEST_DATA_DIR)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("recorded-") && name.find("-rmsnorm-") != std::string::npos &&
        (name.ends_with(".json") || name.ends_with(".json.gz")))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const RunResults& recorded(const std::string& path) {
  static std::map<std::string, RunResults> cache;  // a recording is megabytes of samples: read once
  if (!cache.contains(path)) cache.emplace(path, kgate::read_results_file(path));
  return cache.at(path);
}

void scale_time(BenchmarkRecord& r, double factor) {
  for (auto* timing : {&r.cold, &r.hot})
    if (*timing) {
      for (double& s : (*timing)->samples_s) s *= factor;
      (*timing)->summary = kgate::summarize((*timing)->samples_s);
    }
  r.bytes_per_s /= factor;
  r.flops_per_s /= factor;
  r.pct_of_memory_ceiling /= factor;
  r.pct_of_compute_ceiling /= factor;
}

struct Planted {
  std::string slower, faster, wrong;
};

// A synthetic new run from a recorded one: its longest-running benchmark 25% slower with twice
// the DRAM reads, the next 25% faster, and one checked benchmark with a wrong result.
RunResults synthetic_new(const RunResults& base, Planted& planted) {
  RunResults next = base;
  next.context.git_commit = "5e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e";
  next.context.date = "2099-01-01T00:00:00Z";
  std::vector<BenchmarkRecord*> by_time;
  for (BenchmarkRecord& r : next.benchmarks)
    if (r.status == kgate::BenchmarkStatus::ok) by_time.push_back(&r);
  std::sort(by_time.begin(), by_time.end(), [](auto* a, auto* b) { return a->headline_median_s() > b->headline_median_s(); });
  scale_time(*by_time[0], 1.25);
  if (by_time[0]->metrics.contains("dram__bytes_read.sum")) by_time[0]->metrics["dram__bytes_read.sum"] *= 2;
  scale_time(*by_time[1], 0.8);
  planted.slower = by_time[0]->name;
  planted.faster = by_time[1]->name;
  for (BenchmarkRecord& r : next.benchmarks)
    if (r.correct == true && planted.wrong.empty()) {
      r.correct = false;
      r.correctness_detail = "y: rel_l2=0.5 (limit 0.01) max_abs=3 worst [7] got=1 ref=4 violations=100/4096 FAIL";
      planted.wrong = r.name;
    }
  return next;
}

// ---------------------------------------------------------------------------------------------
// Reading the document

const Section* find_section(const Document& doc, const std::string& title) {
  for (const Section& s : doc.sections)
    if (s.title == title) return &s;
  return nullptr;
}

// The tables of a section that follow the subheading `heading` (all of them when empty), up to
// the next subheading; or, where the section has a subsection titled `heading`, that subsection's.
std::vector<const Table*> tables(const Section& section, const std::string& heading = "") {
  std::vector<const Table*> out;
  for (const Section& sub : section.subsections)
    if (!heading.empty() && sub.title == heading) {
      for (const kgate::report::Block& block : sub.blocks)
        if (const auto* t = std::get_if<Table>(&block)) out.push_back(t);
      return out;
    }
  bool inside = heading.empty();
  for (const kgate::report::Block& block : section.blocks) {
    if (const auto* h = std::get_if<kgate::report::Subheading>(&block)) inside = heading.empty() || h->text == heading;
    if (const auto* t = std::get_if<Table>(&block); t && inside) out.push_back(t);
  }
  return out;
}

const Section* subsection(const Section& section, const std::string& title) {
  for (const Section& sub : section.subsections)
    if (sub.title == title) return &sub;
  return nullptr;
}

// A family's table of every benchmark, one row each: in its fold, under "Every benchmark".
std::vector<const Table*> every_benchmark_tables(const Section& families, const std::string& family) {
  const Section* fold = subsection(families, family);
  return fold ? tables(*fold, "Every benchmark") : std::vector<const Table*>{};
}

std::size_t column(const Table& t, const std::string& title) {
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].title == title) return i;
  ADD_FAILURE() << "no column " << title;
  return 0;
}

std::string cell(const Table& t, const std::vector<kgate::report::Cell>& row, const std::string& title) {
  return row[column(t, title)].text;
}

std::string unquoted(std::string text) {
  std::erase(text, '`');
  return text;
}

// A printed figure and half a unit of its last digit: the rounding it carries. Units scale both:
// "17.5 µs" -> 17.5e-6 ± 0.05e-6, "2712 GB/s" -> 2.712e12 ± 0.5e9, "0.80×" -> 0.8 ± 0.005.
struct Printed {
  double value = 0, tolerance = 0;
  bool matches(double actual) const { return std::fabs(value - actual) <= tolerance * 1.0001 + 1e-12 * std::fabs(actual); }
};

Printed printed(const std::string& text) {
  static const std::regex number(R"(([0-9]+)(?:\.([0-9]+))?(?:e([-+][0-9]+))?\s*(ns|µs|ms|s|GB/s|TFLOP/s|GFLOP/s|MFLOP/s|%|×)?)");
  std::smatch m;
  if (!std::regex_search(text, m, number)) {
    ADD_FAILURE() << "no figure in '" << text << "'";
    return {};
  }
  const double exponent = m[3].matched ? std::pow(10.0, std::stod(m[3].str())) : 1;
  static const std::map<std::string, double> units = {{"ns", 1e-9},  {"µs", 1e-6},      {"ms", 1e-3},     {"s", 1},
                                                      {"GB/s", 1e9}, {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9}, {"MFLOP/s", 1e6}};
  const double scale = exponent * (units.contains(m[4].str()) ? units.at(m[4].str()) : 1);
  return {std::stod(m[1].str() + (m[2].matched ? "." + m[2].str() : "")) * scale,
          0.5 * std::pow(10.0, -static_cast<double>(m[2].length())) * scale};
}

// The figures of a text outside its `code` spans (names hold digits that are not figures), and
// not glued to a letter ("L2", "H200", "fp64").
std::vector<std::string> figures_in(const std::string& text) {
  std::string plain;
  bool in_code = false;
  for (const char c : text) {
    if (c == '`') in_code = !in_code;
    else if (!in_code) plain += c;
  }
  static const std::regex number(R"((^|[^A-Za-z0-9_.:])([0-9]+(?:\.[0-9]+)?))");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(plain.begin(), plain.end(), number); it != std::sregex_iterator(); ++it) out.push_back((*it)[2]);
  return out;
}

// Everything in a run (and its comparison) that a summary may quote: counts, shares of the roof,
// error figures, speedups, and the numbers in compare's notes.
struct Quotable {
  std::vector<double> values;
  std::set<std::string> note_figures;
  bool contains(const std::string& figure) const {
    if (note_figures.contains(figure)) return true;
    const Printed p = printed(figure);
    return std::any_of(values.begin(), values.end(), [&](double v) { return p.matches(v); });
  }
};

Quotable quotable(const RunResults& run, const kgate::ComparisonReport* comparison) {
  Quotable q;
  std::set<std::string> families;
  std::map<std::string, double> counts;
  for (const BenchmarkRecord& r : run.benchmarks) {
    families.insert(r.family);
    q.values.push_back(r.pct_of_memory_ceiling);
    q.values.push_back(r.pct_of_compute_ceiling);
    counts[r.correct ? (*r.correct ? "passed" : "wrong") : "unchecked"] += 1;
    counts["status " + kgate::to_string(r.status)] += 1;
    counts[std::string(kgate::to_string(r.roofline))] += 1;
    for (const std::string& f : figures_in(r.correctness_detail)) q.note_figures.insert(f);  // a reason quoted as recorded
    for (const auto& check : kgate::report::parse_correctness_detail(r.correctness_detail)) {
      q.values.push_back(check.rel_l2);
      q.values.push_back(check.limit);
    }
  }
  q.values.push_back(static_cast<double>(run.benchmarks.size()));
  q.values.push_back(static_cast<double>(families.size()));
  for (const auto& [what, n] : counts) q.values.push_back(n);
  q.values.push_back(0);  // "0 gave a wrong result"
  if (comparison) {
    q.values.push_back(static_cast<double>(comparison->benchmarks.size()));
    q.values.push_back(comparison->geomean_speedup());
    for (const kgate::Verdict v : {kgate::Verdict::faster, kgate::Verdict::slower, kgate::Verdict::same, kgate::Verdict::noisy,
                                   kgate::Verdict::added, kgate::Verdict::missing, kgate::Verdict::failed})
      q.values.push_back(static_cast<double>(comparison->count(v)));
    for (const kgate::BenchmarkComparison& row : comparison->benchmarks) {
      q.values.push_back(row.speedup);
      for (const std::string& note : row.notes)
        for (const std::string& f : figures_in(note)) q.note_figures.insert(f);
    }
  }
  return q;
}

kgate::ReportInputs inputs_for(kgate::NamedRun current, std::optional<kgate::NamedRun> baseline = std::nullopt,
                               std::vector<kgate::NamedRun> previous = {}) {
  kgate::ReportInputs inputs;
  inputs.current = std::move(current);
  inputs.baseline = std::move(baseline);
  inputs.previous = std::move(previous);
  return inputs;
}

// The summary's sentences: its first paragraph.
std::string summary_text(const Document& doc) {
  const Section* s = find_section(doc, "Summary");
  if (!s) return "";
  for (const auto& block : s->blocks)
    if (const auto* p = std::get_if<kgate::report::Paragraph>(&block); p && !p->text.starts_with("**gate: ")) return p->text;
  return "";
}

// Every observation: those in view, then those folded under them.
std::vector<std::string> observation_items(const Document& doc) {
  const Section* s = find_section(doc, "Observations");
  if (!s) return {};
  std::vector<std::string> items;
  for (const Section* part : {s, s->subsections.empty() ? nullptr : &s->subsections.front()})
    if (part)
      if (const auto* bullets = std::get_if<kgate::report::Bullets>(&part->blocks.front()))
        items.insert(items.end(), bullets->items.begin(), bullets->items.end());
  return items;
}

// ---------------------------------------------------------------------------------------------
// Checks every report gets

void expect_sections(const Document& doc, const std::vector<std::string>& titles) {
  std::vector<std::string> got;
  for (const Section& s : doc.sections) got.push_back(s.title);
  EXPECT_EQ(got, titles);
}

void expect_charts_are_xml(const Document& doc) {
  EXPECT_FALSE(doc.charts.empty());
  for (const kgate::report::Chart& chart : doc.charts) {
    EXPECT_EQ(xml_problem(chart.svg), "") << chart.file;
    EXPECT_TRUE(chart.svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")) << chart.file;
    EXPECT_TRUE(chart.file.ends_with(".svg"));
  }
}

// Every benchmark's row of its family table carries its own figures, and its "vs" columns the
// ratio of the comparator's median to its own.
void expect_family_tables_match(const Document& doc, const RunResults& run, const kgate::ComparisonReport* comparison) {
  const Section* section = find_section(doc, "Kernel families");
  ASSERT_NE(section, nullptr);
  std::map<std::string, const BenchmarkRecord*> by_name;
  for (const BenchmarkRecord& r : run.benchmarks) by_name[r.name] = &r;
  std::map<std::string, const kgate::BenchmarkComparison*> compared;
  if (comparison)
    for (const auto& row : comparison->benchmarks) compared[row.name] = &row;
  std::set<std::string> families;
  for (const BenchmarkRecord& r : run.benchmarks) families.insert(r.family);
  std::size_t rows_seen = 0;
  for (const std::string& family : families) {
    const std::vector<const Table*> found = every_benchmark_tables(*section, family);
    ASSERT_EQ(found.size(), 1u) << family;
    const Table& t = *found.front();
    for (const auto& row : t.rows) {
      const std::string name = family + "/" + unquoted(cell(t, row, "Variant")) + "/" + unquoted(cell(t, row, "Shape"));
      ASSERT_TRUE(by_name.contains(name)) << name;
      const BenchmarkRecord& r = *by_name.at(name);
      ++rows_seen;
      if (r.status != kgate::BenchmarkStatus::ok) continue;
      const std::string time_column = comparison ? "New" : "Median";
      EXPECT_TRUE(printed(cell(t, row, time_column)).matches(r.headline_median_s())) << name << ": " << cell(t, row, time_column);
      const double roof = std::max(r.pct_of_memory_ceiling, r.pct_of_compute_ceiling);
      const std::string roof_cell = cell(t, row, "% of roof");
      EXPECT_TRUE(printed(roof_cell).matches(roof)) << name << ": " << roof_cell << " vs " << roof;
      EXPECT_TRUE(roof_cell.ends_with(r.pct_of_compute_ceiling > r.pct_of_memory_ceiling ? "compute" : r.memory_ceiling)) << roof_cell;
      EXPECT_EQ(cell(t, row, "Bound"), std::string(kgate::to_string(r.roofline))) << name;
      if (comparison) {
        const kgate::BenchmarkComparison& c = *compared.at(name);
        if (c.speedup > 0) EXPECT_TRUE(printed(cell(t, row, "Speedup")).matches(c.speedup)) << name;
        else EXPECT_EQ(cell(t, row, "Speedup"), "-") << name;
        EXPECT_TRUE(printed(cell(t, row, "Baseline")).matches(c.baseline_median_s)) << name;
        EXPECT_NE(cell(t, row, "Verdict").find(std::string(kgate::to_string(c.verdict))), std::string::npos) << name;
      }
      for (std::size_t i = 0; i < t.columns.size(); ++i) {
        static const std::regex versus(R"(vs (\S+) \((reference|vendor|peer)\))");
        std::smatch m;
        if (!std::regex_match(t.columns[i].title, m, versus)) continue;
        const std::string other_name = family + "/" + m[1].str() + "/" + r.shape;
        if (m[1].str() == r.variant) {
          EXPECT_EQ(row[i].text, "—");
        } else if (by_name.contains(other_name) && by_name.at(other_name)->status == kgate::BenchmarkStatus::ok) {
          const double expected = by_name.at(other_name)->headline_median_s() / r.headline_median_s();
          EXPECT_TRUE(printed(row[i].text).matches(expected))
              << name << " " << t.columns[i].title << ": " << row[i].text << " vs " << expected;
        }
      }
    }
  }
  EXPECT_EQ(rows_seen, run.benchmarks.size());
}

void expect_correctness_matches(const Document& doc, const RunResults& run) {
  const Section* section = find_section(doc, "Correctness");
  ASSERT_NE(section, nullptr);
  std::map<std::string, std::string> results;  // benchmark name -> result cell
  for (const BenchmarkRecord& r : run.benchmarks)
    for (const Table* t : tables(*section, r.family))
      for (const auto& row : t->rows)
        results[r.family + "/" + unquoted(cell(*t, row, "Variant")) + "/" + unquoted(cell(*t, row, "Shape"))] = cell(*t, row, "Result");
  for (const BenchmarkRecord& r : run.benchmarks) {
    if (r.status == kgate::BenchmarkStatus::failed) continue;
    EXPECT_EQ(results[r.name], !r.correct ? "not checked" : *r.correct ? "pass" : "**FAIL**") << r.name;
  }
}

void expect_summary_from_input(const Document& doc, const RunResults& run, const kgate::ComparisonReport* comparison) {
  const std::string summary = summary_text(doc);
  ASSERT_FALSE(summary.empty());
  const Quotable q = quotable(run, comparison);
  const std::vector<std::string> figures = figures_in(summary);
  EXPECT_GE(figures.size(), 4u) << summary;
  for (const std::string& f : figures) EXPECT_TRUE(q.contains(f)) << "'" << f << "' does not come from the input: " << summary;
}

// ---------------------------------------------------------------------------------------------

TEST(ReportXmlCheck, RejectsWhatIsNotWellFormed) {
  EXPECT_EQ(xml_problem(R"(<svg a="1"><g><text>x &amp; y</text><rect b='2'/></g></svg>)"), "");
  EXPECT_NE(xml_problem("<svg><g></svg></g>"), "");
  EXPECT_NE(xml_problem("<svg><text>a < b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg><text>a & b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg a=1></svg>"), "");
  EXPECT_NE(xml_problem("<svg a=\"1\" a=\"2\"></svg>"), "");
  EXPECT_NE(xml_problem("<svg></svg><svg></svg>"), "");
  EXPECT_NE(xml_problem("<svg>"), "");
}

TEST(Report, RecordedRunsAreFound) { EXPECT_FALSE(recorded_runs().empty()) << "no recorded-*-rmsnorm-*.json in " KGATE_TEST_DATA_DIR; }

TEST(Report, RecordedRunWithoutBaseline) {
  for (const std::string& path : recorded_runs()) {
    SCOPED_TRACE(path);
    const RunResults& run = recorded(path);
    const kgate::ReportInputs inputs = inputs_for({path, run});
    const kgate::report::Report report = kgate::report::build_report(inputs);
    const Document& doc = report.full;
    expect_sections(doc, {"Dashboard", "Summary", "Kernel families", "Correctness", "Environment", "Hardware behaviour", "Charts",
                          "Observations", "Reproduction", "Glossary", "Appendix: kernel names"});
    EXPECT_EQ(report.gate_line, "gate: not evaluated (no baseline)");
    EXPECT_FALSE(report.gate_failed);
    expect_family_tables_match(doc, run, nullptr);
    expect_correctness_matches(doc, run);
    expect_summary_from_input(doc, run, nullptr);
    expect_charts_are_xml(doc);
    for (const char* chart : {"roofline-rmsnorm.svg", "roof-share-rmsnorm.svg", "hist-memory-roof.svg"})
      EXPECT_NE(doc.chart(chart), nullptr) << chart;
    EXPECT_EQ(doc.chart("speedup.svg"), nullptr);  // no baseline: nothing to draw

    // The best share of a roof, and where, as the summary says.
    const BenchmarkRecord* best = nullptr;
    for (const BenchmarkRecord& r : run.benchmarks)
      if (r.status == kgate::BenchmarkStatus::ok && (!best || r.pct_of_memory_ceiling > best->pct_of_memory_ceiling)) best = &r;
    EXPECT_NE(summary_text(doc).find("`" + best->name + "`"), std::string::npos) << summary_text(doc);

    // Environment: the GPU, the measured ceilings and the command line of the run.
    const std::string markdown = kgate::report::render_markdown(doc);
    EXPECT_NE(markdown.find(run.context.gpu_name), std::string::npos);
    EXPECT_NE(markdown.find(kgate::report::format_bandwidth(run.context.calibration.copy_bytes_per_s) + " measured"), std::string::npos);
    EXPECT_NE(markdown.find(run.context.command_line), std::string::npos);
    for (const kgate::report::Chart& chart : doc.charts) EXPECT_NE(markdown.find("](" + chart.file + ")"), std::string::npos) << chart.file;
  }
}

TEST(Report, ObservationsQuoteTheRun) {
  const std::string path = recorded_runs().front();
  const RunResults& run = recorded(path);
  const kgate::ReportInputs inputs = inputs_for({path, run});
  const std::vector<std::string> items = observation_items(kgate::report::build_report(inputs).full);
  ASSERT_FALSE(items.empty());

  std::map<std::string, std::vector<const BenchmarkRecord*>> by_variant;  // "family/variant"
  std::map<std::string, const BenchmarkRecord*> by_name;
  for (const BenchmarkRecord& r : run.benchmarks) {
    by_variant[r.family + "/" + r.variant].push_back(&r);
    by_name[r.name] = &r;
  }
  std::size_t checked = 0;
  for (const std::string& item : items) {
    std::smatch m;
    static const std::regex latency(R"(^`([^`]+)` is latency-bound at ([0-9]+) of ([0-9]+) shapes)");
    static const std::regex faster(R"(^`([^`]+)` is up to ([0-9.]+)× as fast as `([^`]+)`)");
    static const std::regex few_blocks(R"(at most ([0-9]+) of ([0-9]+) SMs have work)");
    static const std::regex noise(R"(^([0-9]+) of ([0-9]+) benchmarks stopped before)");
    if (std::regex_search(item, m, latency)) {
      const auto& records = by_variant.at(m[1]);
      const auto n =
          std::count_if(records.begin(), records.end(), [](auto* r) { return r->roofline == kgate::RooflineClass::latency_bound; });
      EXPECT_EQ(std::stoul(m[2]), static_cast<unsigned long>(n)) << item;
      EXPECT_EQ(std::stoul(m[3]), records.size()) << item;
      ++checked;
    } else if (std::regex_search(item, m, faster)) {
      const std::string family = m[1].str().substr(0, m[1].str().find('/'));
      double best = 0;
      for (const BenchmarkRecord* r : by_variant.at(m[1])) {
        const BenchmarkRecord* ref = by_name.at(family + "/" + m[3].str() + "/" + r->shape);
        best = std::max(best, ref->headline_median_s() / r->headline_median_s());
      }
      EXPECT_TRUE(printed(m[2].str() + "×").matches(best)) << item << " vs " << best;
      ++checked;
    } else if (std::regex_search(item, m, few_blocks)) {
      EXPECT_EQ(std::stoi(m[2]), run.context.sm_count) << item;
      EXPECT_LT(std::stoi(m[1]), run.context.sm_count) << item;
      ++checked;
    } else if (std::regex_search(item, m, noise)) {
      const auto missed = std::count_if(run.benchmarks.begin(), run.benchmarks.end(),
                                        [](const BenchmarkRecord& r) { return r.headline() && !r.headline()->target_met; });
      EXPECT_EQ(std::stol(m[1]), missed) << item;
      ++checked;
    }
    EXPECT_EQ(item.find("nan"), std::string::npos) << item;
    EXPECT_EQ(item.find("inf"), std::string::npos) << item;
  }
  EXPECT_GT(checked, 0u);
}

TEST(Report, ObservationsCountTheTimingsThatRested) {
  // Synthetic: the recorded run with two timings marked as having rested.
  RunResults run = recorded(recorded_runs().front());
  int marked = 0;
  for (BenchmarkRecord& r : run.benchmarks)
    if (r.cold && marked < 2) {
      r.cold->rested = true;
      r.cold->power_limited_samples = 3 + marked++;
    }
  ASSERT_EQ(marked, 2);
  const auto items = observation_items(kgate::report::build_report(inputs_for({"synthetic-rested.json", run})).full);
  const auto said = std::find_if(items.begin(), items.end(),
                                 [](const std::string& item) { return item.rfind("2 timings rested between batches", 0) == 0; });
  ASSERT_NE(said, items.end());
  EXPECT_NE(said->find("; 7 samples taken before the rests began were dropped."), std::string::npos) << *said;
  for (BenchmarkRecord& r : run.benchmarks)
    if (r.cold) r.cold->rested = false;
  for (const std::string& item : observation_items(kgate::report::build_report(inputs_for({"synthetic-rested.json", run})).full))
    EXPECT_EQ(item.find("rested between batches"), std::string::npos) << item;
}

TEST(Report, SyntheticNewRunAgainstTheRecordedBaseline) {
  const std::string path = recorded_runs().front();
  const RunResults base = recorded(path);
  Planted planted;
  const RunResults next = synthetic_new(base, planted);
  const kgate::ReportInputs inputs = inputs_for({"synthetic-new.json", next}, kgate::NamedRun{path, base});
  const kgate::report::Report report = kgate::report::build_report(inputs);
  const kgate::ComparisonReport comparison = kgate::compare_runs(base, next, path, "synthetic-new.json", inputs.compare);
  const Document& doc = report.full;

  // The verdicts are compare's: the same gate, the same counts.
  EXPECT_TRUE(report.gate_failed);
  EXPECT_EQ(report.gate_line, "gate: FAIL (" + comparison.summary_line() + ")");
  expect_family_tables_match(doc, next, &comparison);
  expect_correctness_matches(doc, next);
  expect_summary_from_input(doc, next, &comparison);
  expect_charts_are_xml(doc);
  ASSERT_NE(doc.chart("speedup.svg"), nullptr);
  EXPECT_NE(doc.chart("speedup.svg")->svg.find(planted.slower), std::string::npos);

  // The report opens with the gate's badge and a table of what changed, each row linked to its
  // benchmark's panel, which its family's fold (open) holds.
  const Section& opening = doc.sections.front();
  const auto& badge = std::get<kgate::report::Badge>(opening.blocks.at(0));
  EXPECT_EQ(badge.word, "FAIL");
  EXPECT_EQ(badge.icon + " " + badge.text, kgate::report::literal(kgate::verdict_headline(comparison)));
  const auto& changes = std::get<kgate::report::Table>(opening.blocks.at(1));
  ASSERT_EQ(changes.rows.size(), 3u);  // the planted slowdown, failure and speedup
  // The anchors are slugs ([a-z0-9-] only): fused_add_rmsnorm -> family-fused-add-rmsnorm.
  const std::string family_anchor = "family-" + kgate::slug(planted.slower.substr(0, planted.slower.find('/')));
  EXPECT_EQ(changes.rows[0][0].text, "[`" + planted.slower + "`](#" + kgate::benchmark_anchor(planted.slower) + ")");
  EXPECT_EQ(changes.rows[0][1].text, "**slower**");
  EXPECT_EQ(changes.rows[1][1].text, "**failed**");
  EXPECT_EQ(changes.rows[2][1].text, "**faster**");
  const std::string html = kgate::report::render_html(doc);
  EXPECT_NE(html.find("<details class=\"fold\" id=\"" + family_anchor + "\" open>"), std::string::npos);
  EXPECT_NE(html.find("id=\"" + kgate::benchmark_anchor(planted.slower) + "\""), std::string::npos);
  EXPECT_LT(html.find(planted.slower), html.find("id=\"environment\""));

  // The summary names the slowdown and its cause from the counter deltas.
  const std::string summary = summary_text(doc);
  EXPECT_NE(summary.find("The largest slowdown, `" + planted.slower + "`"), std::string::npos) << summary;
  EXPECT_NE(summary.find("dram bytes +"), std::string::npos) << summary;
  EXPECT_NE(summary.find("**fails**"), std::string::npos) << summary;
  const auto items = observation_items(doc);
  EXPECT_TRUE(std::any_of(items.begin(), items.end(),
                          [&](const std::string& s) { return s.starts_with("`" + planted.slower + "` is slower than the baseline"); }));
  EXPECT_TRUE(
      std::any_of(items.begin(), items.end(), [&](const std::string& s) { return s.starts_with("`" + planted.wrong + "` failed"); }));

  // The short summary: the verdict first, then what changed and the failures, linked to the full
  // report.
  const std::string github = report.summary_markdown;
  EXPECT_TRUE(github.starts_with("❌ kgate: FAIL")) << github;
  EXPECT_NE(github.find("[`" + planted.slower + "`](report.html#" + kgate::benchmark_anchor(planted.slower) + ")"), std::string::npos)
      << github;
  EXPECT_NE(github.find("`" + planted.wrong + "`"), std::string::npos);
  EXPECT_NE(github.find("[report.html](report.html)"), std::string::npos);
}

TEST(Report, HistoryAndTrendFromEarlierRuns) {
  const std::string path = recorded_runs().front();
  const RunResults current = recorded(path);
  RunResults older = current;  // a synthetic earlier run: every non-reference variant 30% slower
  older.context.date = "2000-01-01T00:00:00Z";
  for (BenchmarkRecord& r : older.benchmarks)
    if (r.role != "reference") scale_time(r, 1.3);
  const kgate::ReportInputs inputs = inputs_for({path, current}, std::nullopt, {{"synthetic-older.json", older}});
  const Document doc = kgate::report::build_report(inputs).full;
  const Section* history = find_section(doc, "History");
  ASSERT_NE(history, nullptr);
  const Table& t = *tables(*history).front();
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(cell(t, t.rows[0], "Run"), "`synthetic-older.json`");  // oldest first
  const kgate::ComparisonReport comparison = kgate::compare_runs(older, current, "synthetic-older.json", path, inputs.compare);
  EXPECT_TRUE(printed(cell(t, t.rows[1], "Geomean speedup")).matches(comparison.geomean_speedup()));
  EXPECT_EQ(cell(t, t.rows[1], "Slower"), std::to_string(comparison.count(kgate::Verdict::slower)));
  std::set<std::string> families;
  for (const BenchmarkRecord& r : current.benchmarks) families.insert(r.family);
  for (const std::string& family : families) {
    const kgate::report::Chart* trend = doc.chart("trend-" + family + ".svg");
    ASSERT_NE(trend, nullptr) << family;
    EXPECT_EQ(xml_problem(trend->svg), "");
    EXPECT_NE(trend->svg.find("1.30×"), std::string::npos) << family;  // the candidates' planted 1.3× since then
  }
}

// A family's journey (synthetic run): its variants listed in the order their `follows` give (the
// file's order between variants at the same step), and each step's speedup over the variant
// before it, geomean over the shapes both ran; the roofline joins a shape's points in that order.
TEST(Report, JourneyMeasuresEachStepAgainstTheOneBefore) {
  RunResults run;
  run.context = syn::context();
  const auto add = [&](const std::string& variant, const std::string& role, const std::string& follows, double s1, double s2) {
    for (const auto& [shape, median] : {std::pair{"n:1", s1}, std::pair{"n:2", s2}}) {
      if (median <= 0) continue;
      BenchmarkRecord r = syn::benchmark("toy/" + variant + "/" + shape, {.median_s = median});
      r.role = role;
      r.follows = follows;
      run.benchmarks.push_back(r);
    }
  };
  // Written out of order on purpose: fast before slow, and before the variant it follows.
  add("fast", "candidate", "slow", 10e-6, 5e-6);
  add("slow", "candidate", "naive", 40e-6, 0);  // ran at one shape only
  add("naive", "reference", "", 80e-6, 60e-6);
  add("other", "candidate", "naive", 20e-6, 30e-6);
  const Document doc = kgate::report::build_report(inputs_for({"synthetic-journey.json", run})).full;
  const std::string markdown = kgate::report::render_markdown(doc);
  EXPECT_NE(markdown.find("**Journey**, each step's speedup over the variant before it (geomean over the shapes both "
                          "ran): `naive` → `slow` 2.00× (1 shape) → `fast` 4.00× (1 shape); `naive` → `other` 2.83× "
                          "(2 shapes)."),
            std::string::npos)
      << markdown;
  const Section* families = find_section(doc, "Kernel families");
  ASSERT_NE(families, nullptr);
  const std::vector<const Table*> found = every_benchmark_tables(*families, "toy");
  ASSERT_FALSE(found.empty());
  const Table& t = *found.front();
  std::vector<std::string> variants;
  for (const auto& row : t.rows)
    if (cell(t, row, "Shape") == "`n:1`") variants.push_back(cell(t, row, "Variant"));
  EXPECT_EQ(variants, (std::vector<std::string>{"`naive`", "`slow`", "`other`", "`fast`"}));
}

TEST(Report, PlainGoogleBenchmarkJson) {
  const std::string path = KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json";
  const kgate::ReportInputs inputs = inputs_for({path, kgate::read_results_file(path)});
  const kgate::report::Report report = kgate::report::build_report(inputs);
  EXPECT_EQ(report.full.chart("roofline-rmsnorm.svg"), nullptr);  // no ceilings recorded
  const std::string markdown = kgate::report::render_markdown(report.full);
  EXPECT_NE(markdown.find("not recorded (plain Google Benchmark JSON)"), std::string::npos) << markdown;
  for (const kgate::report::Chart& chart : report.full.charts) EXPECT_EQ(xml_problem(chart.svg), "") << chart.file;
}

// The appendix shows what a run recorded about itself: the harness's wall time per phase, in the
// report's time format, and the free-form extra entries.
TEST(Report, AppendixShowsTheWallTimePerPhaseAndTheExtraEntries) {
  RunResults run = syn::run({syn::benchmark("rmsnorm/vectorized/m:4096/n:4096/bf16", {})});
  run.context.wall_s = {{"timing", 94.277878}, {"timing.cold", 0.0125}};
  run.context.extra = {{"l2_flush", "read"}};
  const kgate::report::Report report = kgate::report::build_report(inputs_for({"synthetic-run.json", run}));
  const Section* appendix = find_section(report.full, "Appendix: run metadata");
  ASSERT_NE(appendix, nullptr);
  const std::vector<const Table*> found = tables(*appendix);
  ASSERT_EQ(found.size(), 1u);
  std::map<std::string, std::string> shown;
  for (const auto& row : found[0]->rows) shown[cell(*found[0], row, "Key")] = cell(*found[0], row, "Value");
  EXPECT_EQ(shown, (std::map<std::string, std::string>{{"`wall_s.timing`", "94.3 s"},
                                                       {"`wall_s.timing.cold`", "12.5 ms"},
                                                       {"`l2_flush`", "read"}}));
}

// The classification's SM-side mean is the counter the run recorded: instruction issue (kgate's
// default set), or SM throughput in runs recorded before it; synthetic runs.
TEST(Report, ClassificationMeansTheSmSideCounterTheRunRecorded) {
  const auto columns = [](const char* metric) {
    BenchmarkRecord record = syn::benchmark("rmsnorm/vectorized/m:4096/n:4096/bf16", {});
    record.metrics = {{metric, 41.0}, {kgate::report::kDramThroughputMetric, 88.0}};
    const kgate::report::Report report = kgate::report::build_report(inputs_for({"synthetic-run.json", syn::run({record})}));
    const Section* hardware = find_section(report.full, "Hardware behaviour");
    EXPECT_NE(hardware, nullptr);
    std::vector<std::string> titles;
    if (hardware && !tables(*hardware).empty())
      for (const auto& column : tables(*hardware).front()->columns) titles.push_back(column.title);
    return titles;
  };
  const auto has = [](const std::vector<std::string>& titles, const char* title) {
    return std::find(titles.begin(), titles.end(), title) != titles.end();
  };
  const std::vector<std::string> issue = columns(kgate::report::kIssueMetric);
  EXPECT_TRUE(has(issue, "Mean issue %") && !has(issue, "Mean SM %") && has(issue, "Mean DRAM %")) << testing::PrintToString(issue);
  const std::vector<std::string> older = columns(kgate::report::kSmThroughputMetric);
  EXPECT_TRUE(has(older, "Mean SM %") && !has(older, "Mean issue %") && has(older, "Mean DRAM %")) << testing::PrintToString(older);
}

// The wall time of the job that made the run (context.kgate.job_s) in the Environment, beside the
// baseline's; synthetic runs. A job's time is the run's, not its environment: not highlighted.
TEST(Report, EnvironmentShowsTheJobWallTimeOfTheRunAndTheBaseline) {
  RunResults run = syn::run({syn::benchmark("rmsnorm/vectorized/m:4096/n:4096/bf16", {})});
  run.context.job_s = {{"build", 61.2}, {"correctness", 21}};
  RunResults base = run;
  base.context.job_s = {{"build", 30}, {"suite", 12.5}};
  const auto job_row = [](const kgate::ReportInputs& inputs) {
    const Document doc = kgate::report::build_report(inputs).full;
    const Section* environment = find_section(doc, "Environment");
    const Table* t = environment ? tables(*environment).at(0) : nullptr;
    if (t)
      for (const auto& row : t->rows)
        if (row.front().text == "**Job wall time**") return row;
    ADD_FAILURE() << "no Job wall time row in the Environment";
    return std::vector<kgate::report::Cell>{};
  };
  auto row = job_row(inputs_for({"synthetic-run.json", run}, kgate::NamedRun{"synthetic-base.json", base}));
  ASSERT_EQ(row.size(), 3u);
  EXPECT_EQ(row[1].text, "82.2 s: build 61.2 s, correctness 21.0 s");
  EXPECT_EQ(row[2].text, "42.5 s: build 30.0 s, suite 12.5 s");
  EXPECT_EQ(row[2].tone, kgate::report::Tone::plain);
  base.context.job_s.clear();
  row = job_row(inputs_for({"synthetic-run.json", run}, kgate::NamedRun{"synthetic-base.json", base}));
  ASSERT_EQ(row.size(), 3u);
  EXPECT_EQ(row[2].text, "-");
  run.context.job_s.clear();
  row = job_row(inputs_for({"synthetic-run.json", run}));
  ASSERT_EQ(row.size(), 2u);
  EXPECT_EQ(row[1].text, "-");
}

// The history's runs with the wall time of the jobs that made them, oldest first, the new run last:
// a column per phase in order of first appearance, "-" where a run lacks one; synthetic runs.
TEST(Report, HistoryShowsTheJobWallTimeOfEachRun) {
  RunResults current = syn::run({syn::benchmark("rmsnorm/vectorized/m:4096/n:4096/bf16", {})});
  current.context.job_s = {{"build", 61.2}, {"suite", 105}};
  RunResults older = current, oldest = current;
  older.context.date = "2026-11-20T12:00:00Z";
  older.context.job_s = {{"suite", 98.5}, {"peers", 7}};
  oldest.context.date = "2026-11-19T12:00:00Z";
  oldest.context.job_s.clear();
  const kgate::ReportInputs inputs =
      inputs_for({"synthetic-new.json", current}, std::nullopt, {{"synthetic-older.json", older}, {"synthetic-oldest.json", oldest}});
  const Document doc = kgate::report::build_report(inputs).full;
  const Section* history = find_section(doc, "History");
  ASSERT_NE(history, nullptr);
  const std::vector<const Table*> found = tables(*history, "Job wall time");
  ASSERT_EQ(found.size(), 1u);
  const Table& t = *found.front();
  std::vector<std::string> titles;
  for (const kgate::report::Column& c : t.columns) titles.push_back(c.title);
  EXPECT_EQ(titles, (std::vector<std::string>{"Run", "Total", "suite", "peers", "build"}));
  std::vector<std::vector<std::string>> shown;
  for (const auto& row : t.rows) {
    shown.emplace_back();
    for (const kgate::report::Cell& c : row) shown.back().push_back(c.text);
  }
  EXPECT_EQ(shown, (std::vector<std::vector<std::string>>{{"`synthetic-oldest.json`", "-", "-", "-", "-"},
                                                          {"`synthetic-older.json`", "106 s", "98.5 s", "7.00 s", "-"},
                                                          {"`synthetic-new.json`", "166 s", "105 s", "-", "61.2 s"}}));

  // No run records its job's phases: no such table, the history's own still there.
  current.context.job_s.clear();
  older.context.job_s.clear();
  const Document without = kgate::report::build_report(inputs_for({"synthetic-new.json", current}, std::nullopt,
                                                                  {{"synthetic-older.json", older}, {"synthetic-oldest.json", oldest}}))
                               .full;
  history = find_section(without, "History");
  ASSERT_NE(history, nullptr);
  EXPECT_TRUE(tables(*history, "Job wall time").empty());
  EXPECT_EQ(tables(*history).size(), 1u);
}

TEST(ReportPieces, CorrectnessDetailAndKernelNames) {
  const auto checks = kgate::report::parse_correctness_detail(
      "x: rel_l2=0.00161 (limit 0.01) max_abs=0.0141 worst [2419] got=-0.0942 ref=-0.0945 violations=0/4096 PASS\n"
      "residual: rel_l2=0 (limit 0.01) max_abs=0 worst [0] violations=0/4096 PASS");
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].tensor, "x");
  EXPECT_DOUBLE_EQ(checks[0].rel_l2, 0.00161);
  EXPECT_DOUBLE_EQ(checks[0].limit, 0.01);
  EXPECT_EQ(checks[1].violations, "0/4096");
  EXPECT_TRUE(kgate::report::parse_correctness_detail("not checked: too large").empty());

  kgate::KernelRecord k;
  k.demangled = "void kgate::kernels::(anonymous namespace)::rmsnorm_vectorized_kernel<8, 1>(kgate::kernels::RmsNormArgs)";
  EXPECT_EQ(kgate::report::short_kernel_name(k), "rmsnorm_vectorized_kernel<8, 1>");
  k.demangled = "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, float>(T13)";
  EXPECT_EQ(kgate::report::short_kernel_name(k), "kernel<…>");
  k.demangled.clear();
  k.name = "_Z6kernelv";
  EXPECT_EQ(kgate::report::short_kernel_name(k), "_Z6kernelv");
}

// ---------------------------------------------------------------------------------------------
// The command line

using kgate::cli_test::kgate_cli;
using kgate::cli_test::Outcome;

Outcome kgate_report(std::vector<std::string> args) {
  args.insert(args.begin(), "report");
  return kgate_cli(std::move(args));
}

TEST(ReportCli, WritesEveryFormatAndDoesNotGate) {
  const syn::TempDir dir;
  const RunResults base = recorded(recorded_runs().front());
  Planted planted;
  const std::string base_file = dir.file("base.json"), new_file = dir.file("new.json");
  kgate::write_results_file(base_file, kgate::to_json(base));
  kgate::write_results_file(new_file, kgate::to_json(synthetic_new(base, planted)));

  const Outcome all = kgate_report({new_file, "--baseline", base_file, "--previous", base_file, "--out", dir.file("all")});
  EXPECT_EQ(all.status, 0) << all.err;  // a regression is reported, not gated on
  EXPECT_NE(all.out.find("gate: FAIL ("), std::string::npos) << all.out;
  for (const char* file : {"report.md", "report.html", "summary.md", "roofline-rmsnorm.svg", "speedup.svg", "roof-share-rmsnorm.svg"})
    EXPECT_TRUE(fs::exists(dir.file("all") + "/" + file)) << file;

  // Markdown links its charts by relative path; every one is there and is well-formed XML.
  const std::string markdown = syn::read_text(dir.file("all") + "/report.md");
  static const std::regex image(R"(!\[[^\]]*\]\(([^)]+)\))");
  std::vector<std::string> svgs;
  for (auto it = std::sregex_iterator(markdown.begin(), markdown.end(), image); it != std::sregex_iterator(); ++it) {
    const std::string file = dir.file("all") + "/" + (*it)[1].str();
    ASSERT_TRUE(fs::exists(file)) << file;
    EXPECT_EQ(xml_problem(syn::read_text(file)), "") << file;
    svgs.push_back(file);
  }
  EXPECT_GE(svgs.size(), 5u);
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") == 0) {
    std::string check = "python3 -c 'import sys, xml.etree.ElementTree as E; [E.parse(f) for f in sys.argv[1:]]'";
    for (const std::string& f : svgs) check += " " + f;
    EXPECT_EQ(std::system(check.c_str()), 0);
  }

  // The HTML stands alone: every chart inline, one inline script (table sorting), nothing fetched.
  const std::string html = syn::read_text(dir.file("all") + "/report.html");
  std::size_t inline_svgs = 0, sparklines = 0;
  for (std::size_t at = html.find("<svg xmlns"); at != std::string::npos; at = html.find("<svg xmlns", at + 1)) ++inline_svgs;
  for (std::size_t at = html.find("<svg class=\"spark\""); at != std::string::npos; at = html.find("<svg class=\"spark\"", at + 1))
    ++sparklines;
  EXPECT_EQ(inline_svgs, svgs.size());
  EXPECT_EQ(sparklines, 3u);  // --previous gives a history: each changed row of the dashboard has its line
  EXPECT_EQ(html.find("<script"), html.rfind("<script"));
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(std::regex_search(html, std::regex(R"((src|href)=["']?(https?:)?//)")), false);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(html.ends_with("</html>\n"));

  const Outcome github = kgate_report({new_file, "--baseline", base_file, "--format", "github", "--out", dir.file("gh")});
  EXPECT_EQ(github.status, 0) << github.err;
  EXPECT_TRUE(fs::exists(dir.file("gh") + "/summary.md"));
  EXPECT_FALSE(fs::exists(dir.file("gh") + "/report.html"));

  const Outcome text = kgate_report({new_file, "--baseline", base_file, "--format", "text"});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("DASHBOARD"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(planted.slower), std::string::npos);
  EXPECT_NE(text.out.find("#|"), std::string::npos) << text.out;  // the slowdown's ASCII bar ends at 1
  EXPECT_EQ(text.out.find('`'), std::string::npos);
}

TEST(ReportCli, BadInputExitsTwoWithOneLine) {
  const syn::TempDir dir;
  const std::string good = recorded_runs().front();
  struct Case {
    std::vector<std::string> args;
    std::string expected;  // stderr starts with this
  };
  const std::vector<Case> cases = {
      {{dir.file("missing.json"), "--out", dir.file("o")}, "kgate report: " + dir.file("missing.json") + ": cannot open"},
      {{good, "--baseline", dir.write("empty.json", ""), "--out", dir.file("o")},
       "kgate report: " + dir.file("empty.json") + ": file is empty"},
      {{good, "--previous", dir.write("list.json", "[]"), "--out", dir.file("o")},
       "kgate report: " + dir.file("list.json") + ": $: expected a JSON object"},
      {{good}, "kgate report: missing --out DIR"},
      {{good, "--out", dir.file("o"), "--format", "pdf"},
       "kgate report: --format: expected all, markdown, html, text or github, got 'pdf'"},
      {{good, "--baseline", good, "--baseline-dir", dir.path().string(), "--out", dir.file("o")},
       "kgate report: give --baseline FILE or --baseline-dir DIR, not both"},
      {{good, "--previous", "--out", dir.file("o")}, "kgate report: --previous needs at least one file"},
      {{"--out", dir.file("o")}, "kgate report: expected one results file (NEW.json), got 0"},
      {{"--out", dir.file("o"), "--previous", good, good}, "kgate report: expected NEW.json; --previous takes every file"},
      {{dir.file("missing.json"), "--out", good + "/o"}, "kgate report: --out " + good + "/o: " + good + " is not a directory"},
      {{good, "--baseline-dir", dir.file("baselines"), "--out", dir.file("o")},
       "kgate report: " + dir.file("baselines") + "/nvidia-h200/kgate.json: no baseline for NVIDIA H200"},
  };
  for (const Case& c : cases) {
    const Outcome r = kgate_report(c.args);
    EXPECT_EQ(r.status, 2) << c.expected << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(c.expected, 0), 0u) << "got:      " << r.err << "expected: " << c.expected;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.file("o")));
}

// ctest's JUnit of a correctness run, in the shape ctest 3.25 writes it: a pass, a failure, a
// GoogleTest skip (status notrun after SKIP_REGULAR_EXPRESSION, the reason in the output).
constexpr const char* kSyntheticJunit = R"junit(<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="3" failures="1" disabled="0" skipped="1" hostname="" time="3" timestamp="2026-11-25T21:08:16">
	<testcase name="rmsnorm/vectorized.m=4096/n=4096/bf16" classname="rmsnorm/vectorized.m=4096/n=4096/bf16" time="0.5" status="run">
		<system-out>[ RUN      ] rmsnorm/vectorized.m=4096/n=4096/bf16
[       OK ] rmsnorm/vectorized.m=4096/n=4096/bf16 (12 ms)
</system-out>
	</testcase>
	<testcase name="gemv/vectorized.m=1/n=4096/k=4096/bf16" classname="gemv/vectorized.m=1/n=4096/k=4096/bf16" time="0.4" status="fail">
		<failure message="Failed"/>
		<system-out>correctness/main.cpp:52: Failure
Value of check.passed() is false</system-out>
	</testcase>
	<testcase name="prefill_attention/fa3_wgmma.b=1/s=512/bf16" classname="prefill_attention/fa3_wgmma.b=1/s=512/bf16" time="0.1" status="notrun">
		<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
		<system-out>[ RUN      ] prefill_attention/fa3_wgmma.b=1/s=512/bf16
correctness/main.cpp:25: Skipped
prefill_attention/fa3_wgmma needs compute capability 90, NVIDIA A100 has 80

[  SKIPPED ] prefill_attention/fa3_wgmma.b=1/s=512/bf16 (0 ms)
</system-out>
	</testcase>
</testsuite>
)junit";

TEST(ReportCorrectness, TheSuiteAsCtestRanIt) {
  const syn::TempDir dir;
  const std::string junit = dir.write("synthetic-correctness-junit.xml", kSyntheticJunit);
  const std::vector<kgate::SuiteCase> cases = kgate::read_ctest_junit(junit);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].variant, "rmsnorm/vectorized");
  EXPECT_EQ(cases[0].shape, "m=4096/n=4096/bf16");
  EXPECT_EQ(cases[0].result, kgate::SuiteCase::Result::passed);
  EXPECT_EQ(cases[1].result, kgate::SuiteCase::Result::failed);
  EXPECT_EQ(cases[2].result, kgate::SuiteCase::Result::skipped);
  EXPECT_EQ(cases[2].reason, "prefill_attention/fa3_wgmma needs compute capability 90, NVIDIA A100 has 80");
  EXPECT_THROW(kgate::read_ctest_junit(dir.write("empty.xml", "<testsuite></testsuite>")), kgate::ResultsError);
  EXPECT_THROW(kgate::read_ctest_junit(dir.file("absent.xml")), kgate::ResultsError);

  // The report: the suite's counts (adding up to its cases), apart from the bench-time checks.
  const Outcome r = kgate_report({recorded_runs().front(), "--correctness", junit, "--format", "text"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string one_line = std::regex_replace(r.out, std::regex("\\s+"), " ");  // the terminal wraps paragraphs
  EXPECT_NE(one_line.find("3 cases (variant × test shape), 1 passed, 1 failed, 1 skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 skipped: prefill_attention/fa3_wgmma needs compute capability 90"), std::string::npos) << r.out;
  EXPECT_NE(one_line.find("The correctness suite: 1 of 3 cases passed, 1 failed and 1 were skipped. At bench time, "), std::string::npos)
      << r.out;
  const Outcome bad = kgate_report({recorded_runs().front(), "--correctness", dir.file("absent.xml"), "--format", "text"});
  EXPECT_EQ(bad.status, 2);
}

TEST(ReportRender, LongCellsCollapseInsteadOfWideningTheTable) {
  // A peer's ~1,000-character error in a cell: a footnote in the terminal, <details> in HTML.
  std::string error;
  for (int i = 0; i < 100; ++i) error += "frame" + std::to_string(i) + " ";
  Document doc;
  doc.title = "t";
  kgate::report::Table table;
  table.compact = true;
  table.columns = {{"Benchmark"}, {"Median"}};
  table.rows = {{{"`a/peer/s`"}, {"torch error: " + error}}, {{"`a/b/s`"}, {"1.00 µs"}}};
  doc.sections.push_back({"S", {table}});
  const std::string text = kgate::report::render_text(doc);
  std::size_t widest = 0;
  for (std::size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (text.compare(start, 4, "  [1") != 0 && text.compare(start, 6, "      ") != 0) widest = std::max(widest, end - start);
  }
  EXPECT_LT(widest, 100u) << text;
  EXPECT_NE(text.find("torch error: frame0 frame1 frame2 frame3 frame4 … [1]"), std::string::npos) << text;
  EXPECT_NE(text.find("[1] torch error: frame0"), std::string::npos) << text;
  EXPECT_NE(text.find("frame99"), std::string::npos) << "the footnote holds the whole text";
  const std::string html = kgate::report::render_html(doc);
  EXPECT_NE(html.find("<td class=\"long\"><details><summary>torch error: frame0 "), std::string::npos) << html;
  EXPECT_NE(html.find(" …</summary>torch error: frame0 "), std::string::npos) << html;
}

TEST(ReportCli, Help) {
  const Outcome r = kgate_report({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: kgate report", 0), 0u) << r.out;
}

// ---------------------------------------------------------------------------------------------
// Peers (docs/peers.md): a peers file merged into a recorded kgate run by `kgate merge`, and the
// report's peer rows, per-shape speedups and summary checked against what the merged file holds.

// The peers file the tests read: scripts/peers/torch_peers.py run on an H200 (PyTorch 2.11,
// CUDA 13.0, cuDNN 9.19), every family's bench shapes, with a short sample budget.
const std::string kPeersFile = KGATE_TEST_DATA_DIR "/recorded-h200-torch-peers.json";
const std::string kPeersKgateRun = KGATE_TEST_DATA_DIR "/recorded-h200-run-a.json.gz";

struct ExpectedMatch {
  std::string peer, kgate;  // the fastest of each side; empty when none ran
  double speedup = 0;       // peer median / kgate median
};

// Per family and shape, from the run alone: the fastest peer and kgate's fastest own variant
// (reference or candidate) among those that ran, leaving out wrong results and peers found wrong.
std::map<std::string, std::map<std::string, ExpectedMatch>> expected_peer_matches(const RunResults& run) {
  std::set<std::string> wrong_peers, peer_shapes;
  for (const BenchmarkRecord& r : run.benchmarks)
    if (r.role == "peer") {
      if (r.correct == false) wrong_peers.insert(r.family + "/" + r.variant);
      peer_shapes.insert(r.family + "/" + r.shape);
    }
  std::map<std::string, std::map<std::string, std::pair<const BenchmarkRecord*, const BenchmarkRecord*>>> best;
  for (const BenchmarkRecord& r : run.benchmarks) {
    if (!peer_shapes.contains(r.family + "/" + r.shape)) continue;
    auto& [fastest_peer, fastest_kgate] = best[r.family][r.shape];
    if (r.status != kgate::BenchmarkStatus::ok || r.correct == false) continue;
    const BenchmarkRecord** side = nullptr;
    if (r.role == "peer" && !wrong_peers.contains(r.family + "/" + r.variant)) side = &fastest_peer;
    if (r.role == "reference" || r.role == "candidate") side = &fastest_kgate;
    if (side && (!*side || r.headline_median_s() < (*side)->headline_median_s())) *side = &r;
  }
  std::map<std::string, std::map<std::string, ExpectedMatch>> out;
  for (const auto& [family, shapes] : best)
    for (const auto& [shape, sides] : shapes) {
      ExpectedMatch& m = out[family][shape];
      if (sides.first) m.peer = sides.first->variant;
      if (sides.second) m.kgate = sides.second->variant;
      if (sides.first && sides.second) m.speedup = sides.first->headline_median_s() / sides.second->headline_median_s();
    }
  return out;
}

TEST(ReportPeers, MergedPeersAppearWithTheirSpeedups) {
  const syn::TempDir dir;
  const std::string merged_file = dir.file("merged.json");
  const Outcome merge = kgate_cli({"merge", kPeersKgateRun, kPeersFile, "-o", merged_file});
  ASSERT_EQ(merge.status, 0) << merge.err;
  const RunResults peers = kgate::read_results_file(kPeersFile);
  const RunResults run = kgate::read_results_file(merged_file);

  // The merged run is the kgate run's, with every peer benchmark in it: role, provenance and the
  // peers' library versions kept, and each placed on the kgate run's measured ceilings.
  EXPECT_EQ(run.context.date, recorded(kPeersKgateRun).context.date);
  for (const auto& [key, value] : peers.context.extra) EXPECT_EQ(run.context.extra.at(key), value) << key;
  std::map<std::string, const BenchmarkRecord*> by_name;
  for (const BenchmarkRecord& r : run.benchmarks) by_name[r.name] = &r;
  for (const BenchmarkRecord& p : peers.benchmarks) {
    ASSERT_TRUE(by_name.contains(p.name)) << p.name;
    const BenchmarkRecord& r = *by_name.at(p.name);
    EXPECT_EQ(r.role, "peer") << p.name;
    EXPECT_EQ(r.provenance, p.provenance) << p.name;
    if (r.status != kgate::BenchmarkStatus::ok) continue;
    const kgate::Calibration& c = run.context.calibration;
    const double ceiling = r.memory_ceiling == "read" ? c.read_bytes_per_s : c.copy_bytes_per_s;
    EXPECT_NEAR(r.pct_of_memory_ceiling, 100 * r.min_bytes / r.headline_median_s() / ceiling, 1e-6 * r.pct_of_memory_ceiling) << p.name;
  }

  const kgate::report::Report report = kgate::report::build_report(inputs_for({merged_file, run}));
  const Document& doc = report.full;
  const auto expected = expected_peer_matches(run);
  ASSERT_FALSE(expected.empty());

  // Per family: the peers' rows in its table of every benchmark, and in its matrix per shape the
  // fastest peer and kgate's standing against it (the time of kgate's fastest own variant over the
  // peer's): bad where kgate is slower, a tie within 1% or where the interval holds 1.
  const Section* families = find_section(doc, "Kernel families");
  ASSERT_NE(families, nullptr);
  std::size_t shapes_checked = 0, kgate_slower = 0, ties = 0;
  std::map<std::string, std::pair<double, std::size_t>> family_totals;  // family -> (sum of log speedups, compared)
  std::map<std::string, std::size_t> family_slower;
  for (const auto& [family, shapes] : expected) {
    SCOPED_TRACE(family);
    const std::vector<const Table*> every = every_benchmark_tables(*families, family);
    ASSERT_EQ(every.size(), 1u);
    const Table& main = *every.front();
    for (const BenchmarkRecord& p : peers.benchmarks) {
      if (p.family != family) continue;
      EXPECT_TRUE(std::any_of(main.rows.begin(), main.rows.end(), [&](const auto& row) {
        return unquoted(cell(main, row, "Variant")) == p.variant && unquoted(cell(main, row, "Shape")) == p.shape;
      })) << p.name;
    }
    const Section* fold = subsection(*families, family);
    ASSERT_NE(fold, nullptr);
    const std::vector<const Table*> matrices = tables(*fold);
    ASSERT_EQ(matrices.size(), 1u);
    const Table& matrix = *matrices.front();
    std::size_t rows_with_a_peer = 0;
    for (const auto& row : matrix.rows) {
      const std::string shape = row.front().tip;  // each axis cell names the whole shape on hover
      if (!shapes.contains(shape)) continue;
      ++rows_with_a_peer;
      const ExpectedMatch& e = shapes.at(shape);
      const kgate::report::Cell& peer = row[column(matrix, "Best peer")];
      EXPECT_EQ(peer.chips.empty() ? std::string("no peer ran") : unquoted(peer.chips.front()), e.peer.empty() ? "no peer ran" : e.peer)
          << shape;
      const kgate::report::Cell& standing = row[column(matrix, "kgate vs peer")];
      if (e.speedup <= 0 || e.kgate.empty()) {
        EXPECT_EQ(standing.text, "-") << shape;
        continue;
      }
      EXPECT_TRUE(printed(standing.text).matches(e.speedup)) << shape << ": " << standing.text << " vs " << e.speedup;
      const bool tie = standing.text.ends_with(" tie");
      if (std::fabs(e.speedup - 1) < kgate::report::kPeerTieFraction) {
        EXPECT_TRUE(tie) << shape;
      }
      EXPECT_EQ(standing.tone == kgate::report::Tone::bad, e.speedup < 1 && !tie) << shape << ": " << standing.text;
      ++shapes_checked;
      kgate_slower += e.speedup < 1 && !tie;
      ties += tie;
      family_totals[family].first += std::log(e.speedup);
      family_totals[family].second += 1;
      family_slower[family] += e.speedup < 1 && !tie;
    }
    EXPECT_EQ(rows_with_a_peer, shapes.size());
  }
  EXPECT_GT(shapes_checked, 0u);

  // The summary: one line per family, the geometric mean over its shapes, the shapes where kgate
  // is slower counted; and the sentence with the totals.
  const Section* summary = find_section(doc, "Summary");
  ASSERT_NE(summary, nullptr);
  const std::vector<const Table*> summary_tables = tables(*summary);
  ASSERT_EQ(summary_tables.size(), 1u);
  const Table& lines = *summary_tables.front();
  EXPECT_EQ(lines.rows.size(), expected.size());
  for (const auto& row : lines.rows) {
    const std::string family = unquoted(cell(lines, row, "Family"));
    ASSERT_TRUE(expected.contains(family)) << family;
    if (!family_totals.contains(family)) {  // peers, but no shape where a kgate variant ran too
      EXPECT_EQ(cell(lines, row, "Shapes"), "0") << family;
      EXPECT_EQ(cell(lines, row, "Where kgate is slower"), "no shape where both ran") << family;
      continue;
    }
    const auto [log_sum, n] = family_totals.at(family);
    EXPECT_TRUE(printed(cell(lines, row, "kgate speedup")).matches(std::exp(log_sum / static_cast<double>(n)))) << family;
    EXPECT_EQ(cell(lines, row, "Shapes"), std::to_string(n)) << family;
    const std::string where = cell(lines, row, "Where kgate is slower");
    const std::string said =
        family_slower[family] ? "**slower at " + std::to_string(family_slower[family]) + " of " + std::to_string(n) + "**" : "nowhere";
    EXPECT_EQ(where.rfind(said, 0), 0u) << family << ": " << where;
  }
  EXPECT_NE(summary_text(doc).find("faster at " + std::to_string(shapes_checked - kgate_slower - ties) + " of " +
                                   std::to_string(shapes_checked) + " shapes, " +
                                   (ties ? "tied at " + std::to_string(ties) + " (within 1%)" : std::string("tied at none")) + " and " +
                                   (kgate_slower ? "**slower at " + std::to_string(kgate_slower) + "**" : "slower at none")),
            std::string::npos)
      << summary_text(doc);

  // A peer whose output fails its check is compared with nothing, and its note says why.
  RunResults wrong = run;
  const auto checked = std::find_if(wrong.benchmarks.begin(), wrong.benchmarks.end(),
                                    [](const BenchmarkRecord& r) { return r.role == "peer" && r.correct == true; });
  ASSERT_NE(checked, wrong.benchmarks.end());
  checked->correct = false;
  checked->correctness_detail = "out: rel_l2=0.5 (limit 0.01) max_abs=3 violations=100/4096 nan/inf=0 FAIL";
  const Document wrong_doc = kgate::report::build_report(inputs_for({merged_file, wrong})).full;
  const Section* wrong_fold = subsection(*find_section(wrong_doc, "Kernel families"), checked->family);
  ASSERT_NE(wrong_fold, nullptr);
  const Table& wrong_matrix = *tables(*wrong_fold).front();
  for (const auto& row : wrong_matrix.rows)
    for (const std::string& chip : row[column(wrong_matrix, "Best peer")].chips) EXPECT_NE(unquoted(chip), checked->variant);
  const std::string markdown = kgate::report::render_markdown(wrong_doc);
  EXPECT_NE(markdown.find("`" + checked->variant + "` (peer)"), std::string::npos);
  EXPECT_NE(markdown.find("Left out of the comparison: its output failed the check"), std::string::npos);

  // Where a peer wins, the note names the kernel it ran (synthetic kernel records here: this
  // recorded peers file has none); a compiled peer's one-time compile is given as its range.
  EXPECT_EQ(kgate::report::render_markdown(doc).find("Where a peer is faster"), std::string::npos);
  RunResults annotated = run;
  std::size_t compiled_shapes = 0;
  std::string compiled_peer;
  for (BenchmarkRecord& r : annotated.benchmarks) {
    if (r.role != "peer") continue;
    KernelRecord k;
    k.name = "synthetic_peer_kernel";
    k.grid[0] = 132, k.block[0] = 256, k.grid[1] = k.grid[2] = k.block[1] = k.block[2] = 1;
    k.duration_s = 1e-6, k.launches = 1;
    r.kernels = {k};
    if (!compiled_peer.empty() && r.family + "/" + r.variant != compiled_peer) continue;
    compiled_peer = r.family + "/" + r.variant;
    r.provenance["compile_s"] = compiled_shapes++ ? "7.25" : "2.5";
  }
  ASSERT_GT(compiled_shapes, 1u);
  const std::string annotated_markdown =
      kgate::report::render_markdown(kgate::report::build_report(inputs_for({merged_file, annotated})).full);
  EXPECT_EQ(annotated_markdown.find("ran `synthetic_peer_kernel` at ") != std::string::npos, kgate_slower > 0);
  EXPECT_EQ(annotated_markdown.find("(grid 132×1×1, block 256×1×1)") != std::string::npos, kgate_slower > 0);
  EXPECT_NE(annotated_markdown.find("compiled in 2.50–7.25 s per shape (before timing, not in its time)"), std::string::npos);

  // Each peer's note says where its figures came from: this run, or a stored file (kgate peers reuse).
  EXPECT_NE(annotated_markdown.find(". Measured in this run"), std::string::npos);
  EXPECT_EQ(annotated_markdown.find("Figures reused from"), std::string::npos);
  RunResults reused = run;
  for (BenchmarkRecord& r : reused.benchmarks)
    if (r.role == "peer")
      r.provenance.insert(
          {{"figures", "reused from baselines/nvidia-h200/peers.json"}, {"date", "2026-11-27T18:00:00Z"}, {"host", "gpu-7"}});
  const std::string reused_markdown = kgate::report::render_markdown(kgate::report::build_report(inputs_for({merged_file, reused})).full);
  EXPECT_NE(reused_markdown.find("Figures reused from baselines/nvidia-h200/peers.json, measured 2026-11-27T18:00:00Z on gpu-7."),
            std::string::npos);
  EXPECT_EQ(reused_markdown.find(". Measured in this run"), std::string::npos);
}

// The main command's run on an H100 with torch.compile and Liger-Kernel among the peers (recorded,
// untouched): the report names the kernel a winning peer ran and each compiled peer's compile time,
// and tells the prefill family's journey in its steps' order.
TEST(ReportPeers, RecordedH100RunNamesWinningPeerKernels) {
  const std::string path = KGATE_TEST_DATA_DIR "/recorded-h100-main-peers.json.gz";
  const RunResults run = kgate::read_results_file(path);
  std::size_t compiled = 0, peers_with_kernels = 0;
  for (const BenchmarkRecord& r : run.benchmarks) {
    if (r.role != "peer" || r.status != kgate::BenchmarkStatus::ok) continue;
    compiled += r.provenance.contains("compile_s");
    peers_with_kernels += !r.kernels.empty();
  }
  EXPECT_EQ(compiled, 48u);  // torch.compile of the four memory-bound families at their 12 shapes each
  EXPECT_GT(peers_with_kernels, 0u);
  const std::string markdown = kgate::report::render_markdown(kgate::report::build_report(inputs_for({path, run})).full);
  EXPECT_NE(markdown.find("`torch-compile` (peer)"), std::string::npos);
  EXPECT_NE(markdown.find("s per shape (before timing, not in its time)"), std::string::npos);
  // RMSNorm: Liger's Triton kernel is the faster at 5 shapes, one block per row as kgate's.
  EXPECT_NE(markdown.find("`liger` ran `_rms_norm_forward_kernel` at 5 shapes (grids 1×1×1 to 256×1×1, blocks 512×1×1 and 256×1×1)"),
            std::string::npos);
  // The prefill family's journey, each step against the one before it (the run records `follows`).
  const std::size_t journey = markdown.find("`naive` → `fa1_seqkv` ");
  ASSERT_NE(journey, std::string::npos);
  const std::string line = markdown.substr(journey, markdown.find('\n', journey) - journey);
  std::size_t at = 0;
  for (const char* step : {"`fa1_seqkv` ", "`fa2_splitkv` ", "`fa2_mma` ", "`fa3_wgmma` ", "`fa3_pingpong` "}) {
    const std::size_t found = line.find(step, at);
    EXPECT_NE(found, std::string::npos) << step << " in " << line;
    at = found == std::string::npos ? at : found;
  }
  EXPECT_NE(markdown.find("torch 2.11.0+cu130, triton 3.6.0 and liger-kernel 0.8.5"), std::string::npos);
}

}  // namespace
