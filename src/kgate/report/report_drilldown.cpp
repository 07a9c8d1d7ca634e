#include "report_drilldown.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "kgate/base/figures.hpp"
#include "kgate/base/text.hpp"
#include "kgate/gate/ab_rounds.hpp"
#include "kgate/results/detectable.hpp"
#include "report_counter_diff.hpp"
#include "kgate/report/format.hpp"
#include "report_shift.hpp"
#include "report_strip_plot.hpp"

namespace kgate::report {
namespace {

// The timing each side is judged on: the new run's headline mode in both, as the gate compares them.
struct HeadlineTimings {
  const TimingRecord* baseline = nullptr;
  const TimingRecord* current = nullptr;
  bool both() const { return baseline && current && !baseline->samples_s.empty() && !current->samples_s.empty(); }
};

HeadlineTimings headline_timings(const BenchmarkView& view) {
  HeadlineTimings timings{.current = view.record->headline()};
  if (view.baseline) {
    const std::optional<TimingRecord>& mode = view.record->headline_mode == "hot" ? view.baseline->hot : view.baseline->cold;
    if (mode) timings.baseline = &*mode;
  }
  return timings;
}

double baseline_tick_s(const ReportModel& model) {
  return model.inputs->baseline ? model.inputs->baseline->run.context.calibration.timer_resolution_s : 0;
}
double current_tick_s(const ReportModel& model) { return model.context().calibration.timer_resolution_s; }

std::optional<SampleShift> headline_shift(const ReportModel& model, const HeadlineTimings& timings) {
  if (!timings.both()) return std::nullopt;
  return sample_shift(timings.baseline->samples_s, timings.current->samples_s, std::max(baseline_tick_s(model), current_tick_s(model)));
}

// 1. The verdict and the figures behind it.

std::string samples_text(const TimingRecord* timing) {
  if (!timing || timing->samples_s.empty()) return "no timing";
  return "median " + kgate::format_time(timing->summary.median) + " over " + plural(timing->samples_s.size(), "sample", "samples");
}

// "99%": the level of the comparison's intervals.
std::string confidence_level(double confidence) { return printf_string("%g%%", confidence * 100); }

// "p = 0.0123", "p <0.001"
std::string p_text(double p) {
  const std::string figure = kgate::format_p_value(p);
  return figure.starts_with('<') ? "p " + figure : "p = " + figure;
}

std::string threshold_text(const ReportModel& model, const BenchmarkComparison& c) {
  const Thresholds& thresholds = model.inputs->compare.thresholds;
  const double asked = thresholds.for_benchmark(c.name, c.family);
  std::string text = "threshold ±" + kgate::format_percent(asked * 100);
  if (c.threshold <= asked * (1 + 1e-9)) return text;
  text += ", widened to ±" + kgate::format_percent(c.threshold * 100);
  if (judged_by_detectable_change(c.timer)) return text + " (the minimum detectable change, below)";
  return text + " (by the " + kgate::format_time(thresholds.min_change_s) + " minimum change of event-timed medians)";
}

std::string compared_verdict(const ReportModel& model, const BenchmarkComparison& c) {
  std::string text = "**" + std::string(to_string(c.verdict)) + "**" + (c.gated ? "" : " (a vendor variant: not gated)") + ": speedup " +
                     kgate::format_ratio(c.speedup) + " (time " + kgate::format_time_change_of_speedup(c.speedup) + "; median " +
                     kgate::format_time(c.baseline_median_s) + " → " + kgate::format_time(c.new_median_s) + ", Δ " +
                     kgate::format_time_change(c.new_median_s - c.baseline_median_s) + "), ";
  if (c.low_confidence) text += "too few samples for an interval or a test";
  else
    text += confidence_level(model.comparison->confidence) + " interval " + kgate::format_interval(c.ci_low, c.ci_high) + ", " +
            p_text(c.p_value);
  text += "; " + threshold_text(model, c);
  if (c.cycle_speedup > 0)
    text += "; cycles " + kgate::format_ratio(c.cycle_speedup) + " (SM clock " + format_mhz(c.baseline_clock_mhz) + " → " +
            format_mhz(c.new_clock_mhz) + ")";
  return text + ".";
}

// A row the gate did not compare: what the benchmark has instead.
std::string uncompared_verdict(const BenchmarkView& view, const HeadlineTimings& timings) {
  const BenchmarkRecord& r = *view.record;
  const std::string verdict = view.comparison ? "**" + std::string(to_string(view.comparison->verdict)) + "**: " : "";
  if (r.status == BenchmarkStatus::failed)
    return verdict + "the new run recorded an error: " + literal(r.error.empty() ? "(no message)" : r.error) + ".";
  if (r.correct == false) return verdict + "a wrong result: " + literal(r.correctness_detail) + ".";
  if (r.status == BenchmarkStatus::skipped) return verdict + "skipped in the new run: " + literal(r.error) + ".";
  std::string text = verdict + samples_text(timings.current);
  if (!view.baseline) return text + "; no baseline to compare it with.";
  if (!timings.baseline) return text + "; the baseline has no " + r.headline_mode + " timing to compare it with.";
  return text + "; the baseline's " + samples_text(timings.baseline) + ".";
}

// 3. Launch configuration and counters.

void add_counter_table(const BenchmarkView& view, Section& panel) {
  const BenchmarkRecord &b = *view.baseline, &c = *view.record;
  panel.blocks.push_back(Subheading{"Launch configuration and counters, baseline → new"});
  const std::vector<CounterRow> rows = counter_rows(b, c);
  std::vector<std::string> absent;
  for (const auto& [side, record] : {std::pair{"the baseline", &b}, std::pair{"the new run", &c}})
    if (record->metrics.empty())
      absent.push_back(std::string(side) + " recorded none" +
                       (record->metrics_unavailable.empty() ? "" : " (" + literal(record->metrics_unavailable) + ")"));
  if (rows.empty()) {
    panel.blocks.push_back(Paragraph{"No kernels or counters were recorded on both sides" +
                                     (absent.empty() ? "" : ": counters: " + join_words(absent)) + "."});
    return;
  }
  Table table;
  table.columns = {{"Launch or counter"}, {"Baseline", true}, {"New", true}, {"Change", true}};
  for (const CounterRow& row : rows) {
    const Tone tone = row.material ? Tone::warn : Tone::plain;
    const bool kernel = row.kind == CounterRow::Kind::kernel;
    table.rows.push_back({{row.kind == CounterRow::Kind::metric ? code(row.name) : row.name, tone},
                          {kernel ? code(row.baseline) : literal(row.baseline), tone},
                          {kernel ? code(row.current) : literal(row.current), tone},
                          {literal(row.change), tone}});
  }
  panel.blocks.push_back(std::move(table));
  std::string note =
      "Highlighted: a launch property that differs, a percentage that moved 5 points or more, a count that moved 10% or more.";
  if (!absent.empty()) note += " Counters: " + join_words(absent) + ".";
  panel.blocks.push_back(Paragraph{note});
}

// 4. The minimum detectable change and what set it.

const char* deciding_term(const DetectableChange& d) {
  if (d.fraction() == d.between) return "between repetitions";
  return d.fraction() == d.within ? "within samples" : "timer resolution";
}

// A limit's figure, "-" where the side cannot have one (one repetition, an unknown tick).
std::string limit_cell(double fraction, bool known, const std::string& how, bool deciding) {
  const std::string figure = known ? kgate::format_percent(fraction * 100) : "-";
  return (deciding ? "**" + figure + "**" : figure) + " (" + how + ")";
}

std::string repetitions_how(const TimingRecord& t) {
  const std::vector<double>& m = t.repetition_medians_s;
  if (t.timer == "cpu") return "p10–p90 of " + plural(t.samples_s.size(), "repetition", "repetitions");
  if (m.size() < 2) return m.empty() ? "not recorded" : "one repetition";
  const auto [low, high] = std::minmax_element(m.begin(), m.end());
  return plural(m.size(), "median", "medians") + ", " + kgate::format_time(*low) + " to " + kgate::format_time(*high);
}

std::string tick_how(const TimingRecord& t, double tick_s) {
  if (!(tick_s > 0)) return "tick unknown";
  return kgate::format_time(tick_s) + " tick" +
         (t.launches_per_sample > 1 ? " / " + plural(static_cast<std::size_t>(t.launches_per_sample), "launch", "launches") : "");
}

void add_detectable_change(const ReportModel& model, const BenchmarkComparison& c, const HeadlineTimings& timings, Section& panel) {
  const double confidence = 1 - model.inputs->compare.alpha;
  const DetectableChange before = detectable_change(*timings.baseline, baseline_tick_s(model), confidence);
  const DetectableChange after = detectable_change(*timings.current, current_tick_s(model), confidence);
  const bool baseline_decides = before.fraction() >= after.fraction();
  const DetectableChange& decider = baseline_decides ? before : after;
  panel.blocks.push_back(Subheading{"Minimum detectable change"});
  Table table;
  table.columns = {{"Limit"}, {"Baseline", true}, {"New", true}};
  const auto tick_of = [&](const TimingRecord& t) { return &t == timings.baseline ? baseline_tick_s(model) : current_tick_s(model); };
  const auto row = [&](const char* term, double DetectableChange::*limit, auto known, auto how) {
    const auto cell = [&](const DetectableChange& d, const TimingRecord& t, bool side_decides) {
      return limit_cell(d.*limit, known(t), how(t), side_decides && deciding_term(d) == std::string_view(term));
    };
    table.rows.push_back({{term}, {cell(before, *timings.baseline, baseline_decides)}, {cell(after, *timings.current, !baseline_decides)}});
  };
  row(
      "between repetitions", &DetectableChange::between,
      [](const TimingRecord& t) { return t.timer == "cpu" || t.repetition_medians_s.size() >= 2; }, repetitions_how);
  row(
      "within samples", &DetectableChange::within, [](const TimingRecord&) { return true; },
      [](const TimingRecord& t) { return "the median's interval × √2, " + plural(t.samples_s.size(), "sample", "samples"); });
  row(
      "timer resolution", &DetectableChange::resolution, [&](const TimingRecord& t) { return tick_of(t) > 0; },
      [&](const TimingRecord& t) { return tick_how(t, tick_of(t)); });
  panel.blocks.push_back(std::move(table));

  const double asked = model.inputs->compare.thresholds.for_benchmark(c.name, c.family);
  std::string text =
      "Each limit is a fraction of the side's median: the spread of its repetitions' medians, the sampling error of "
      "the median (two runs compared, so √2 of its half-interval), one tick of the timer. ";
  if (judged_by_detectable_change(c.timer)) {
    text += "The largest, " + kgate::format_detectable(decider.fraction()) + " (" +
            (baseline_decides ? "the baseline's " : "the new run's ") + deciding_term(decider) +
            "), is the smallest change this comparison can tell from noise; " +
            (decider.fraction() > asked
                 ? "it is above the ±" + kgate::format_percent(asked * 100) + " threshold, so the band was widened to it."
                 : "the ±" + kgate::format_percent(asked * 100) + " threshold is above it and stands.");
  } else {
    const double floor_s = model.inputs->compare.thresholds.min_change_s;
    text +=
        "These samples are event-timed: each holds a launch overhead that moves between processes by more than the samples "
        "show, so the gate widens their band by a fixed minimum change of " +
        kgate::format_time(floor_s) + " (" + kgate::format_percent(floor_s / c.baseline_median_s * 100) +
        " of the baseline's median) instead of these limits.";
  }
  panel.blocks.push_back(Paragraph{text});
}

}  // namespace

std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

std::string rerun_commands(const std::string& name) {
  const std::string filter = shell_quoted(kgate::exact_filter({name}));
  return "kgate ab --base BASE_BENCH --head HEAD_BENCH --filter " + filter + "\nkgate_bench --benchmark_filter=" + filter + "\n";
}

Section benchmark_panel(const ReportModel& model, const BenchmarkView& view, std::vector<Chart>& charts) {
  const BenchmarkRecord& record = *view.record;
  const BenchmarkComparison* c = view.comparison;
  const bool compared = c && c->speedup > 0;
  const HeadlineTimings timings = headline_timings(view);
  Section panel;
  panel.title = code(record.name);
  panel.blocks.push_back(Paragraph{compared ? compared_verdict(model, *c) : uncompared_verdict(view, timings), true});
  if (compared && !c->notes.empty()) {
    Bullets notes;
    for (const std::string& note : c->notes) notes.items.push_back(literal(note));
    panel.blocks.push_back(std::move(notes));
  }
  if (timings.both()) {
    charts.push_back(strip_plot(record.name, *timings.baseline, *timings.current));
    const std::optional<SampleShift> shift = headline_shift(model, timings);
    panel.blocks.push_back(Figure{charts.back().file, shift ? describe_shift(*shift)
                                                            : "Too few samples for the shape of the shift (its p10 and p90 need " +
                                                                  std::to_string(kMinShiftSamples) + " a side)."});
  }
  if (view.baseline) add_counter_table(view, panel);
  if (compared && timings.both() && !c->timer.empty()) add_detectable_change(model, *c, timings, panel);
  panel.blocks.push_back(Subheading{"Measure it again"});
  panel.blocks.push_back(Code{rerun_commands(record.name)});
  panel.blocks.push_back(
      Paragraph{"BASE_BENCH and HEAD_BENCH are the two builds' benchmark binaries (`kgate ab --help`); the second "
                "line measures this benchmark in one build alone (kgate_bench, or your suite's `<suite>_bench`)."});
  return panel;
}

std::vector<std::string> change_chips(const ReportModel& model, const BenchmarkView& view) {
  std::vector<std::string> chips;
  const BenchmarkComparison* c = view.comparison;
  if (!c || !(c->speedup > 0) || !view.baseline) return chips;
  chips.push_back("Δ " + kgate::format_time_change(c->new_median_s - c->baseline_median_s));
  if (c->cycle_speedup > 0) chips.push_back("cycles " + kgate::format_ratio(c->cycle_speedup));
  if (const std::optional<SampleShift> shift = headline_shift(model, headline_timings(view)))
    if (std::string chip = shift_chip(*shift); !chip.empty()) chips.push_back(std::move(chip));
  std::size_t counters = 0;
  for (const CounterRow& row : counter_rows(*view.baseline, *view.record))
    if (row.material && counters++ < kMaxCounterChips) chips.push_back(counter_chip(row));
  return chips;
}

}  // namespace kgate::report
