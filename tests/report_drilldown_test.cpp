// The drill-down panel of a changed benchmark (report_drilldown.hpp) and its parts: the shape of
// the shift from the samples' quantiles, the strip plot, the launch and counter differences, the
// minimum detectable change and the line that measures it again. Synthetic pairs with a planted
// change of known shape (the same draws moved, so the shift is exact), and the recorded H100 run
// with a delay planted in one kernel against the original.
#include "src/kgate/report/report_drilldown.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <regex>

#include "kgate/base/escape.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/report/format.hpp"
#include "src/kgate/report/report_shift.hpp"
#include "src/kgate/report/report_strip_plot.hpp"
#include "tests/synthetic_results.hpp"
#include "tests/xml_check.hpp"

namespace {

using kgate::BenchmarkRecord;
using kgate::KernelRecord;
using kgate::RunResults;
using namespace kgate::report;
namespace syn = kgate::synthetic;

constexpr double kCuptiTick = 32e-9;  // an H100's CUPTI timestamps
const std::string kConstant = "synthetic_shift/constant/m:1";
const std::string kProportional = "synthetic_shift/proportional/m:1";
const std::string kLaunch = "synthetic_launch/fused+rope/m:1.5/(bf16)";
const std::string kFailed = "synthetic_fail/naive/m:1";
const std::string kAdded = "synthetic_added/naive/m:1";

BenchmarkRecord cupti_benchmark(const std::string& name, double median_s, double rel_noise, int samples, std::uint64_t seed) {
  BenchmarkRecord r = syn::benchmark(name, {.median_s = median_s, .rel_noise = rel_noise, .samples = samples, .seed = seed});
  r.cold->timer = "cupti";
  return r;
}

// The same draws, each moved by `change`: a shift whose shape is known exactly.
BenchmarkRecord moved(BenchmarkRecord r, const std::function<double(double)>& change) {
  for (double& s : r.cold->samples_s) s = static_cast<float>(change(s));
  r.cold->summary = kgate::summarize(r.cold->samples_s);
  r.cold->repetition_medians_s = {r.cold->summary.median};
  return r;
}

KernelRecord kernel(int grid_x, int registers) {
  KernelRecord k;
  k.name = k.demangled = "synthetic_fused_rope_kernel";
  k.grid[0] = grid_x;
  k.block[0] = 256;
  k.block[1] = k.block[2] = k.grid[1] = k.grid[2] = 1;
  k.registers_per_thread = registers;
  k.duration_s = 20e-6;
  k.launches = 1;
  return k;
}

RunResults with_tick(std::vector<BenchmarkRecord> benchmarks) {
  RunResults run = syn::run(std::move(benchmarks));
  run.context.calibration.timer_resolution_s = kCuptiTick;
  return run;
}

// A baseline and a new run of five synthetic benchmarks: a constant +0.3 µs shift, a proportional
// 6% slowdown, a 10% slowdown with fewer registers and a larger grid, a failure and a new one.
class SyntheticPair {
 public:
  SyntheticPair() : inputs_(make_inputs()), model_(build_model(inputs_)) {}
  const ReportModel& model() const { return model_; }
  const BenchmarkView& view(const std::string& name) const {
    for (const BenchmarkView& v : model_.views)
      if (v.record->name == name) return v;
    throw std::runtime_error("no view " + name);
  }

 private:
  static kgate::ReportInputs make_inputs() {
    const BenchmarkRecord constant = cupti_benchmark(kConstant, 2e-6, 0.15, 4000, 1);
    const BenchmarkRecord proportional = cupti_benchmark(kProportional, 10e-6, 0.1, 8000, 2);
    BenchmarkRecord launch_before = cupti_benchmark(kLaunch, 20e-6, 0.01, 60, 3);
    BenchmarkRecord launch_after = cupti_benchmark(kLaunch, 22e-6, 0.01, 60, 4);
    launch_before.kernels = {kernel(224, 128)};
    launch_after.kernels = {kernel(1792, 106)};
    launch_before.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 79.0},
                             {"lts__t_sector_hit_rate.pct", 90.0},
                             {"dram__bytes_read.sum", 1.0e6}};
    launch_after.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 87.0},
                            {"lts__t_sector_hit_rate.pct", 91.0},
                            {"dram__bytes_read.sum", 1.05e6}};
    const BenchmarkRecord failed_before = cupti_benchmark(kFailed, 5e-6, 0.01, 60, 5);
    BenchmarkRecord failed_after = failed_before;
    failed_after.status = kgate::BenchmarkStatus::failed;
    failed_after.error = "synthetic: an illegal memory access";
    failed_after.cold.reset();
    kgate::ReportInputs inputs;
    inputs.baseline = kgate::NamedRun{"synthetic-base.json", with_tick({constant, proportional, launch_before, failed_before})};
    inputs.current = {"synthetic-new.json", with_tick({moved(constant, [](double s) { return s + 0.3e-6; }),
                                                       moved(proportional, [](double s) { return s * 1.06; }), launch_after, failed_after,
                                                       cupti_benchmark(kAdded, 5e-6, 0.01, 60, 6)})};
    return inputs;
  }

  kgate::ReportInputs inputs_;
  ReportModel model_;
};

template <typename T>
std::vector<const T*> blocks_of(const Section& section) {
  std::vector<const T*> found;
  for (const Block& b : section.blocks)
    if (const auto* t = std::get_if<T>(&b)) found.push_back(t);
  return found;
}

// The table under the subheading `heading`.
const Table* table_under(const Section& section, const std::string& heading) {
  bool after = false;
  for (const Block& b : section.blocks) {
    if (const auto* s = std::get_if<Subheading>(&b)) after = s->text == heading;
    if (const auto* t = std::get_if<Table>(&b); t && after) return t;
  }
  return nullptr;
}

const std::vector<Cell>* row_named(const Table& table, const std::string& first_cell) {
  for (const std::vector<Cell>& row : table.rows)
    if (row[0].text == first_cell) return &row;
  return nullptr;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

TEST(SampleShift, TellsConstantFromProportionalWhereTheSpreadAllows) {
  std::vector<double> base;
  for (int i = 0; i < 4000; ++i) base.push_back(10e-6 * (0.7 + 0.6 * i / 4000.0));  // 7 to 13 µs, evenly
  const auto shifted = [&](const std::function<double(double)>& change) {
    std::vector<double> out;
    for (const double s : base) out.push_back(change(s));
    return out;
  };
  EXPECT_EQ(sample_shift(base, shifted([](double s) { return s + 0.3e-6; }), 0)->kind, ShiftKind::constant);
  EXPECT_EQ(sample_shift(base, shifted([](double s) { return s * 1.06; }), 0)->kind, ShiftKind::proportional);
  EXPECT_EQ(sample_shift(base, base, 0)->kind, ShiftKind::none);
  // The slow half stretched, the fast half kept: the spread changed.
  EXPECT_EQ(sample_shift(base, shifted([](double s) { return s < 10e-6 ? s : 10e-6 + (s - 10e-6) * 1.5; }), 0)->kind, ShiftKind::uneven);
  // A 1% spread cannot tell a 6% slowdown from a constant shift of the same size: both fit.
  std::vector<double> narrow;
  for (int i = 0; i < 1000; ++i) narrow.push_back(10e-6 * (0.995 + 0.01 * i / 1000.0));
  std::vector<double> slower;
  for (const double s : narrow) slower.push_back(s * 1.06);
  const std::optional<SampleShift> alike = sample_shift(narrow, slower, kCuptiTick);
  ASSERT_TRUE(alike);
  EXPECT_EQ(alike->kind, ShiftKind::uniform);
  EXPECT_NE(describe_shift(*alike).find("too narrow to tell"), std::string::npos) << describe_shift(*alike);
  EXPECT_EQ(shift_chip(*alike), "uniform shift");
  EXPECT_FALSE(sample_shift(std::vector<double>(kMinShiftSamples - 1, 1e-6), narrow, 0));
}

TEST(Drilldown, ConstantShiftIsNamedUnderTheStripPlot) {
  const SyntheticPair pair;
  const BenchmarkView& view = pair.view(kConstant);
  std::vector<Chart> charts;
  const Section panel = benchmark_panel(pair.model(), view, charts);
  EXPECT_EQ(panel.title, code(kConstant));
  ASSERT_EQ(charts.size(), 1u);
  EXPECT_EQ(charts[0].file, "strip-" + kgate::slug(kConstant) + ".svg");
  const auto figures = blocks_of<Figure>(panel);
  ASSERT_EQ(figures.size(), 1u);
  EXPECT_EQ(figures[0]->file, charts[0].file);
  EXPECT_TRUE(figures[0]->caption.starts_with("A constant shift: +300 ns at p10, +300 ns at p50, +300 ns at p90")) << figures[0]->caption;
  const std::string verdict = blocks_of<Paragraph>(panel).front()->text;
  EXPECT_TRUE(verdict.starts_with("**slower**: speedup ")) << verdict;
  EXPECT_NE(verdict.find("Δ +300 ns"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("99% interval"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("cycles "), std::string::npos) << verdict;
  const std::vector<std::string> chips = change_chips(pair.model(), view);
  EXPECT_TRUE(has(chips, "Δ +300 ns")) << ::testing::PrintToString(chips);
  EXPECT_TRUE(has(chips, "const shift")) << ::testing::PrintToString(chips);
}

TEST(Drilldown, ProportionalShiftAndAThinnedStrip) {
  const SyntheticPair pair;
  const BenchmarkView& view = pair.view(kProportional);
  std::vector<Chart> charts;
  const Section panel = benchmark_panel(pair.model(), view, charts);
  ASSERT_EQ(charts.size(), 1u);
  EXPECT_TRUE(blocks_of<Figure>(panel)[0]->caption.starts_with("A proportional shift: ")) << blocks_of<Figure>(panel)[0]->caption;
  EXPECT_TRUE(has(change_chips(pair.model(), view), "proportional"));
  // 8000 samples a side: each strip thinned to kMaxStripDots, said in the subtitle.
  EXPECT_EQ(count_of(charts[0].svg, "<circle"), 2 * kMaxStripDots);
  EXPECT_NE(charts[0].svg.find("baseline 500 of 8000, new 500 of 8000 samples, evenly by rank"), std::string::npos);
}

TEST(Drilldown, StripPlotIsWellFormedWithADotPerSampleInsideItsBox) {
  const SyntheticPair pair;
  const BenchmarkView& view = pair.view(kLaunch);
  const Chart chart = strip_plot(kLaunch, *view.baseline->headline(), *view.record->headline());
  EXPECT_EQ(kgate::testing::xml_problem(chart.svg), "");
  EXPECT_EQ(count_of(chart.svg, "<circle"), 120u);  // 60 samples a side, none thinned
  EXPECT_EQ(count_of(chart.svg, "<polygon"), 2u);   // one repetition median a side
  const std::smatch box = [&] {
    std::smatch m;
    std::regex_search(chart.svg, m, std::regex(R"re(viewBox="0 0 ([0-9.]+) ([0-9.]+)")re"));
    return m;
  }();
  ASSERT_EQ(box.size(), 3u);
  const double width = std::stod(box[1]), height = std::stod(box[2]);
  const std::regex coordinate(R"re(\b(cx|x|x1|x2|cy|y|y1|y2)="(-?[0-9.]+)")re");
  for (auto it = std::sregex_iterator(chart.svg.begin(), chart.svg.end(), coordinate); it != std::sregex_iterator(); ++it) {
    const double v = std::stod((*it)[2]);
    EXPECT_GE(v, 0) << (*it)[0];
    EXPECT_LE(v, (*it)[1].str().starts_with("x") || (*it)[1] == "cx" ? width : height) << (*it)[0];
  }
}

TEST(Drilldown, HostileNameStaysText) {
  const SyntheticPair pair;
  const BenchmarkView& view = pair.view(kLaunch);
  const std::string hostile = "synthetic/</text><script>alert(1)</script>/`x`\x1b[31m/it's";
  const Chart chart = strip_plot(hostile, *view.baseline->headline(), *view.record->headline());
  EXPECT_EQ(kgate::testing::xml_problem(chart.svg), "");
  EXPECT_EQ(chart.svg.find("<script"), std::string::npos);
  EXPECT_EQ(chart.file, "strip-" + kgate::slug(hostile) + ".svg");
  EXPECT_EQ(chart.file.find('/'), std::string::npos);
}

TEST(Drilldown, LaunchAndCounterDifferencesAreTabledAndChipped) {
  const SyntheticPair pair;
  const BenchmarkView& view = pair.view(kLaunch);
  std::vector<Chart> charts;
  const Section panel = benchmark_panel(pair.model(), view, charts);
  const Table* table = table_under(panel, "Launch configuration and counters, baseline → new");
  ASSERT_NE(table, nullptr);
  const auto* registers = row_named(*table, "registers per thread");
  ASSERT_NE(registers, nullptr);
  EXPECT_EQ((*registers)[1].text, "128");
  EXPECT_EQ((*registers)[2].text, "106");
  EXPECT_EQ((*registers)[0].tone, Tone::warn);
  const auto* grid = row_named(*table, "grid");
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ((*grid)[1].text, "224×1×1");
  EXPECT_EQ((*grid)[2].text, "1792×1×1");
  EXPECT_EQ((*grid)[3].tone, Tone::warn);
  EXPECT_EQ((*row_named(*table, "block"))[0].tone, Tone::plain);
  const auto* dram = row_named(*table, code("dram__throughput.avg.pct_of_peak_sustained_elapsed"));
  ASSERT_NE(dram, nullptr);
  EXPECT_EQ((*dram)[3].text, "+8.00 points");
  EXPECT_EQ((*dram)[0].tone, Tone::warn);
  EXPECT_EQ((*row_named(*table, code("lts__t_sector_hit_rate.pct")))[0].tone, Tone::plain);  // 1 point
  EXPECT_EQ((*row_named(*table, code("dram__bytes_read.sum")))[0].tone, Tone::plain);        // 5%
  // The material metric comes before the others.
  EXPECT_EQ(table->rows[6][0].text, code("dram__throughput.avg.pct_of_peak_sustained_elapsed"));
  const std::vector<std::string> chips = change_chips(pair.model(), view);
  EXPECT_TRUE(has(chips, "registers 128 → 106")) << ::testing::PrintToString(chips);
  EXPECT_TRUE(has(chips, "grid 224×1×1 → 1792×1×1")) << ::testing::PrintToString(chips);
  EXPECT_TRUE(has(chips, "DRAM throughput 79.0% → 87.0%")) << ::testing::PrintToString(chips);  // the gate's words
  EXPECT_TRUE(chips.front().starts_with("Δ +")) << ::testing::PrintToString(chips);
}

TEST(Drilldown, MinimumDetectableChangeNamesTheLimitThatSetIt) {
  const SyntheticPair pair;
  std::vector<Chart> charts;
  const Section panel = benchmark_panel(pair.model(), pair.view(kLaunch), charts);
  const Table* table = table_under(panel, "Minimum detectable change");
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 3u);
  EXPECT_EQ(table->rows[0][0].text, "between repetitions");
  EXPECT_EQ(table->rows[2][0].text, "timer resolution");
  // 60 samples at 1% noise: the median's sampling error is the largest limit, bold on its side.
  std::size_t bold = 0;
  for (const auto& row : table->rows)
    for (const Cell& cell : row) bold += cell.text.starts_with("**");
  EXPECT_EQ(bold, 1u);
  EXPECT_TRUE(table->rows[1][1].text.starts_with("**") || table->rows[1][2].text.starts_with("**"));
  EXPECT_NE(table->rows[2][1].text.find("32.0 ns tick"), std::string::npos) << table->rows[2][1].text;
  bool explained = false;
  for (const Paragraph* p : blocks_of<Paragraph>(panel))
    explained |= p->text.find("within samples), is the smallest change") != std::string::npos;
  EXPECT_TRUE(explained);
}

TEST(Drilldown, RerunLineSelectsTheBenchmarkAlone) {
  const SyntheticPair pair;
  std::vector<Chart> charts;
  const Section panel = benchmark_panel(pair.model(), pair.view(kLaunch), charts);
  const auto code_blocks = blocks_of<Code>(panel);
  ASSERT_EQ(code_blocks.size(), 1u);
  EXPECT_EQ(code_blocks[0]->text,
            "kgate ab --base BASE_BENCH --head HEAD_BENCH --filter '^synthetic_launch/fused\\+rope/m:1\\.5/\\(bf16\\)$'\n"
            "kgate_bench --benchmark_filter='^synthetic_launch/fused\\+rope/m:1\\.5/\\(bf16\\)$'\n");
  // The filter is gate's exact_filter, whose rule ab_rounds_test checks in both regex engines.
  // A quote in a name survives the shell as itself.
  const std::string quoted = shell_quoted("it's a 'name'");
  FILE* shell = popen(("printf %s " + quoted).c_str(), "r");
  ASSERT_NE(shell, nullptr);
  char echoed[64] = {};
  const std::size_t read = std::fread(echoed, 1, sizeof echoed - 1, shell);
  pclose(shell);
  EXPECT_EQ(std::string(echoed, read), "it's a 'name'");
}

TEST(Drilldown, FailedAndNewBenchmarksSayWhatTheyHaveWithoutAPlot) {
  const SyntheticPair pair;
  std::vector<Chart> charts;
  const Section failed = benchmark_panel(pair.model(), pair.view(kFailed), charts);
  EXPECT_EQ(blocks_of<Paragraph>(failed).front()->text,
            "**failed**: the new run recorded an error: " + literal("synthetic: an illegal memory access") + ".");
  EXPECT_TRUE(blocks_of<Figure>(failed).empty());
  const Section added = benchmark_panel(pair.model(), pair.view(kAdded), charts);
  EXPECT_NE(blocks_of<Paragraph>(added).front()->text.find("no baseline to compare it with"), std::string::npos);
  EXPECT_TRUE(blocks_of<Figure>(added).empty());
  EXPECT_TRUE(charts.empty());
  EXPECT_EQ(blocks_of<Code>(added).size(), 1u);
  EXPECT_TRUE(change_chips(pair.model(), pair.view(kAdded)).empty());
}

// The recorded H100 run with a delay planted in RMSNorm's vectorized kernel, against the original:
// the panel of its smallest shape reads a shift by the same time at every quantile (a constant
// one, or a uniform one where the samples' spread cannot rule out the same fraction), never a
// proportional or an uneven one.
TEST(Drilldown, RecordedPlantedDelayMovesEveryQuantileByTheSameTime) {
  const std::string name = "rmsnorm/vectorized/m:1/n:4096/bf16";
  const auto only = [&](const char* file) {
    RunResults run = kgate::read_results_file(std::string(KGATE_TEST_DATA_DIR "/") + file);
    std::erase_if(run.benchmarks, [&](const BenchmarkRecord& r) { return r.name != name; });
    return kgate::NamedRun{file, std::move(run)};
  };
  kgate::ReportInputs inputs;
  inputs.baseline = only("recorded-h100-main.json.gz");
  inputs.current = only("recorded-h100-planted-delay.json.gz");
  const ReportModel model = build_model(inputs);
  ASSERT_EQ(model.views.size(), 1u);
  std::vector<Chart> charts;
  const Section panel = benchmark_panel(model, model.views[0], charts);
  ASSERT_EQ(charts.size(), 1u);
  EXPECT_EQ(kgate::testing::xml_problem(charts[0].svg), "");
  EXPECT_EQ(count_of(charts[0].svg, "<circle"), 2 * kMaxStripDots);  // 1155 samples a side
  const std::string& caption = blocks_of<Figure>(panel)[0]->caption;
  EXPECT_TRUE(caption.starts_with("A constant shift: ") || caption.starts_with("A uniform shift: ")) << caption;
  const std::vector<std::string> chips = change_chips(model, model.views[0]);
  EXPECT_TRUE(has(chips, "const shift") || has(chips, "uniform shift")) << ::testing::PrintToString(chips);
}

}  // namespace
