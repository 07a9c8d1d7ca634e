// The report's document: which sections, in which order, and the short GitHub summary.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>

#include "kgate/base/statistics.hpp"
#include "report_charts.hpp"
#include "kgate/report/format.hpp"
#include "report_inline.hpp"
#include "report_sections.hpp"

namespace kgate::report {
namespace {

constexpr std::size_t kMaxNoisyNamed = 10;

std::string short_commit(const RunContext& c) {
  if (c.git_commit.empty()) return "unknown";
  std::string commit = c.git_commit.size() > 12 && c.git_commit != "unknown" ? c.git_commit.substr(0, 12) : c.git_commit;
  return literal(commit) + (c.git_dirty ? " (dirty)" : "");
}

// What a results file without kgate blocks is: nvbench's reader names itself in the context.
std::string foreign_format(const RunResults& run) {
  const auto format = run.context.extra.find("format");
  return format == run.context.extra.end() ? "plain Google Benchmark JSON" : literal(format->second) + " JSON";
}

std::string subtitle(const ReportModel& model) {
  const ReportInputs& in = *model.inputs;
  std::string s = "Run " + code(in.current.source);
  if (in.current.run.has_kgate_block) s += ", commit " + short_commit(model.context()) + ", " + literal(model.context().date);
  if (in.baseline) s += "; baseline " + code(in.baseline->source);
  return s;
}

std::string clocks_seen(const RunResults& run) {
  std::vector<double> clocks;
  for (const BenchmarkRecord& r : run.benchmarks)
    if (const TimingRecord* t = r.status == BenchmarkStatus::ok ? r.headline() : nullptr; t && t->sm_clock_mhz > 0)
      clocks.push_back(t->sm_clock_mhz);
  if (clocks.empty()) return "-";
  const auto [low, high] = std::minmax_element(clocks.begin(), clocks.end());
  return "median " + format_mhz(median(clocks)) + " (" + sig3(*low) + "–" + format_mhz(*high) + ") over " + std::to_string(clocks.size()) +
         " benchmarks";
}

std::string against_datasheet(double measured, double datasheet) {
  if (!(measured > 0)) return "-";
  std::string s = format_bandwidth(measured) + " measured";
  if (datasheet > 0) s += ", " + format_pct(100 * measured / datasheet) + " of the datasheet " + format_bandwidth(datasheet);
  return s;
}

// How the run's headline samples were timed: CUPTI's activity records (the kernels' own span), or
// CUDA events (with the launch overhead), the fallback where CUPTI could not be used.
std::string timer_badge(const RunResults& run) {
  std::size_t cupti = 0, events = 0;
  for (const BenchmarkRecord& r : run.benchmarks)
    if (const TimingRecord* t = r.status == BenchmarkStatus::ok ? r.headline() : nullptr) (t->timer == "cupti" ? cupti : events) += 1;
  if (cupti + events == 0) return "-";
  if (events == 0) return "CUPTI activity records (all " + std::to_string(cupti) + " benchmarks)";
  if (cupti == 0) return "CUDA events (all " + std::to_string(events) + " benchmarks; medians include the launch overhead)";
  return "CUPTI activity records for " + std::to_string(cupti) + " benchmarks, **CUDA events for " + std::to_string(events) +
         "** (the fallback; their medians include the launch overhead)";
}

// The row of the wall time of the job that made the run (context.kgate.job_s): a figure of the
// run, not of its environment, so a baseline's that differs is not highlighted.
constexpr const char* kJobWallTime = "Job wall time";

// The environment of one run as (label, value) rows; the labels are the same for every run. The
// harness's wall time per phase (wall_s) and the free-form `extra` entries are in the appendix
// (run_metadata_appendix), not here.
std::vector<std::pair<std::string, std::string>> environment_rows(const NamedRun& named) {
  const RunContext& c = named.run.context;
  const Calibration& cal = c.calibration;
  std::vector<std::pair<std::string, std::string>> rows = {{"Results file", code(named.source)}};
  if (!named.run.has_kgate_block) {
    rows.emplace_back("Environment", "not recorded (" + foreign_format(named.run) + ")");
    return rows;
  }
  std::string gpu = literal(c.gpu_name) + " (compute capability " + std::to_string(c.compute_capability / 10) + "." +
                    std::to_string(c.compute_capability % 10) + ", " + std::to_string(c.sm_count) + " SMs, " +
                    format_bytes(static_cast<double>(c.memory_bytes)) + ", L2 " + format_bytes(static_cast<double>(c.l2_bytes)) + ")";
  rows.insert(
      rows.end(),
      {
          {"GPU", gpu},
          {"CUDA driver / runtime", format_cuda_version(c.driver_version) + " / " + format_cuda_version(c.runtime_version)},
          {"Default clocks", "SM " + format_mhz(c.sm_clock_mhz_default) + ", memory " + format_mhz(c.memory_clock_mhz)},
          {"SM clock while timing", clocks_seen(named.run)},
          {"Copy bandwidth", against_datasheet(cal.copy_bytes_per_s, cal.datasheet_bytes_per_s)},
          {"Read bandwidth", against_datasheet(cal.read_bytes_per_s, cal.datasheet_bytes_per_s)},
          {"bf16 GEMM rate", cal.gemm_flops_per_s > 0 ? format_flops(cal.gemm_flops_per_s) + " measured (cuBLAS)"
                                                      : "not measured (cuBLAS could not be loaded where the run was made): no roofline"},
          {"Launch floor", format_time(cal.launch_floor_s) + " per launch, " + format_time(cal.graph_floor_s) + " from a CUDA graph"},
          {"Datasheet", "memory " + (cal.datasheet_bytes_per_s > 0 ? format_bandwidth(cal.datasheet_bytes_per_s) : std::string("-")) +
                            ", SM clock " + format_mhz(cal.datasheet_sm_clock_mhz)},
          {"Calibration", cal.cached_from.empty() ? "measured in this run" : "reused from " + code(cal.cached_from)},
          {"Timer", timer_badge(named.run)},
          {"Commit", c.git_commit.empty() ? "unknown" : code(c.git_commit) + (c.git_dirty ? " with uncommitted changes" : "")},
          {"Build", (c.build_type.empty() ? "-" : literal(c.build_type)) + ", CUDA architectures " +
                        (c.cuda_architectures.empty() ? "-" : literal(c.cuda_architectures))},
          {"Date", c.date.empty() ? "-" : literal(c.date)},
          {"Host", c.host.empty() ? "-" : literal(c.host)},
          {"Suite", literal(c.suite)},
          {kJobWallTime, c.job_s.empty() ? "-" : format_job_phases(c.job_s)},
      });
  return rows;
}

}  // namespace

const char* chart_caption(const std::string& file) {
  if (file.starts_with("roofline-"))
    return "The family's benchmarks at their arithmetic intensity and achieved FLOP/s, under the copy, read and GEMM ceilings "
           "measured in this run (one colour and marker per variant; a grey line joins a shape's variants, the reference "
           "first: the family's journey; the HTML version names a point on hover).";
  if (file == "speedup.svg")
    return "Each compared benchmark's speedup against the baseline, sorted; colour is the verdict, the grey band the benchmark's "
           "threshold.";
  if (file.starts_with("roof-share-"))
    return "The family's benchmarks' share of the roof each comes closest to, coloured by its bound class; the dashed line is "
           "100%.";
  if (file == "hist-memory-roof.svg") return "How the benchmarks spread over the share of the measured memory ceiling they reach.";
  if (file == "hist-occupancy.svg") return "How the benchmarks spread over achieved occupancy (CUPTI).";
  if (file == "hist-dram-throughput.svg") return "How the benchmarks spread over DRAM throughput (CUPTI).";
  return "Each variant's geometric-mean speedup over its shapes against the first run of the history.";
}

namespace {

Table history_table(const ReportModel& model) {
  Table table;
  table.columns = {{"Run"},          {"Commit"},       {"Date"},    {"Compared with"}, {"Geomean speedup", true},
                   {"Slower", true}, {"Failed", true}, {"Verdicts"}};
  for (const HistoryRow& row : model.history) {
    const RunContext& c = row.run->run.context;
    std::vector<Cell> cells = {{code(row.run->source)},
                               {short_commit(c)},
                               {c.date.empty() ? "-" : literal(c.date)},
                               {row.against ? code(row.against->source) : "-"}};
    if (row.comparison) {
      const std::size_t slower = row.comparison->count(Verdict::slower), failed = row.comparison->count(Verdict::failed);
      cells.push_back({format_ratio(row.comparison->geomean_speedup())});
      cells.push_back({std::to_string(slower), slower ? Tone::bad : Tone::plain});
      cells.push_back({std::to_string(failed), failed ? Tone::bad : Tone::plain});
      cells.push_back({row.comparison->summary_line()});
    } else {
      const bool is_baseline = model.inputs->baseline && row.run->source == model.inputs->baseline->source;
      cells.insert(cells.end(), {{"-"}, {"-"}, {"-"}, {is_baseline ? "the baseline" : "first run: nothing to compare with", Tone::muted}});
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

// The wall time of the job that made each run of the history, oldest first, the new run last: its
// total and a column per phase, in order of first appearance. No rows when no run records it.
Table job_time_table(const ReportModel& model) {
  std::vector<const std::vector<JobPhase>*> jobs;
  for (const HistoryRow& row : model.history) jobs.push_back(&row.run->run.context.job_s);
  const std::vector<std::string> phases = job_phase_columns(jobs);
  Table table;
  if (phases.empty()) return table;
  table.columns = {{"Run"}, {"Total", true}};
  for (const std::string& phase : phases) table.columns.push_back({literal(phase), true});
  for (const HistoryRow& row : model.history) {
    const std::vector<JobPhase>& job = row.run->run.context.job_s;
    std::vector<Cell> cells = {{code(row.run->source)}, {format_time(job_total_s(job))}};
    for (const std::string& phase : phases) {
      const JobPhase* p = find_job_phase(job, phase);
      cells.push_back({p ? format_time(p->seconds) : "-"});
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

Table failed_table(const std::vector<const BenchmarkView*>& failed) {
  Table table;
  table.columns = {{"Benchmark"}, {"Why"}};
  for (const BenchmarkView* v : failed) {
    const BenchmarkRecord& r = *v->record;
    std::string why = r.status == BenchmarkStatus::failed ? "error: " + r.error : "wrong result: " + r.correctness_detail;
    std::replace(why.begin(), why.end(), '\n', ' ');
    table.rows.push_back({{code(r.name)}, {literal(why), Tone::bad}});
  }
  return table;
}

// "Noisy (too spread to decide, not failing the gate): a, b and 3 more."; empty when none is.
Paragraph noisy_paragraph(const ReportModel& model) {
  if (!model.comparison || !model.comparison->count(Verdict::noisy)) return {};
  std::vector<std::string> noisy;
  for (const BenchmarkComparison& row : model.comparison->benchmarks)
    if (row.verdict == Verdict::noisy && noisy.size() < kMaxNoisyNamed) noisy.push_back(code(row.name));
  const std::size_t n = model.comparison->count(Verdict::noisy);
  if (n > noisy.size()) noisy.push_back(std::to_string(n - noisy.size()) + " more");
  return {"Noisy (too spread to decide, not failing the gate): " + join_words(noisy) + ".", true};
}

// A pull-request comment holds 65,536 characters; the summary stays under this with room to spare.
constexpr std::size_t kMaxSummaryCharacters = 60000;

// The short report for a pull-request comment or a GitHub step summary: the verdict in its first
// line, the changed benchmarks, and the rest folded; its links point into the full report beside
// it (or under --link-base). `changed_rows` caps the changed benchmarks listed.
Document summary_document(const ReportModel& model, const Document& full, std::size_t changed_rows) {
  Document doc;
  doc.subtitle = full.subtitle;
  Section verdict{"", {}};  // untitled: the summary's first line is the verdict itself
  verdict.blocks.emplace_back(verdict_badge(model));
  if (model.comparison) {
    std::vector<const BenchmarkComparison*> changed = changed_benchmarks(*model.comparison);
    const std::size_t all = changed.size();
    if (changed.size() > changed_rows) changed.resize(changed_rows);
    if (!changed.empty()) verdict.blocks.emplace_back(changes_table(model, changed, "report.html"));
    if (all > changed.size())
      verdict.blocks.emplace_back(Paragraph{"… and " + std::to_string(all - changed.size()) +
                                            " more changed benchmarks: [the full report](report.html#dashboard)."});
  }
  doc.sections.push_back(std::move(verdict));
  Section details{"Details", {}};
  details.fold = Fold::closed;
  details.summary = "the summary, peers, failures and the full report";
  std::string sentences;
  for (const std::string& s : executive_summary(model)) sentences += (sentences.empty() ? "" : " ") + s;
  details.blocks.emplace_back(Paragraph{sentences});
  if (Table peers = peer_summary_table(model); !peers.rows.empty()) details.blocks.emplace_back(std::move(peers));
  if (Paragraph noisy = noisy_paragraph(model); !noisy.text.empty()) details.blocks.emplace_back(std::move(noisy));
  std::vector<const BenchmarkView*> failed;
  for (const BenchmarkView& v : model.views)
    if (v.record->status == BenchmarkStatus::failed || v.record->correct == false) failed.push_back(&v);
  if (!failed.empty()) details.blocks.emplace_back(failed_table(failed));
  std::string charts;
  for (const Chart& chart : full.charts) charts += (charts.empty() ? "" : ", ") + link(literal(chart.title), chart.file);
  details.blocks.emplace_back(
      Paragraph{"Full report: [report.html](report.html) (self-contained), [report.md](report.md); charts: " + charts + "."});
  doc.sections.push_back(std::move(details));
  return doc;
}

// The summary with as many changed rows as fit under the comment's limit, rendered.
std::string fitted_summary(const ReportModel& model, const Document& full, const std::string& link_base) {
  std::size_t rows = std::numeric_limits<std::size_t>::max();
  std::string text = render_markdown(summary_document(model, full, rows), link_base);
  while (text.size() > kMaxSummaryCharacters && rows > 0) {
    rows = std::min(rows, model.comparison ? model.comparison->benchmarks.size() : 0) * 3 / 4;
    text = render_markdown(summary_document(model, full, rows), link_base);
  }
  return text;
}

}  // namespace

std::string anchor(const std::string& title) {
  std::string out;
  for (const char c : title) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') out += static_cast<char>(std::tolower(u));
    else if (c == ' ') out += '-';
    else if (u >= 0x80) out += c;  // GitHub keeps letters outside ASCII
  }
  return out;
}

std::string Section::anchor_id() const { return id.empty() ? anchor(title) : id; }

const Chart* Document::chart(const std::string& file) const {
  for (const Chart& c : charts)
    if (c.file == file) return &c;
  return nullptr;
}

Section summary_section(const ReportModel& model, const std::vector<Chart>& charts) {
  Section section{"Summary", {}};
  std::string sentences;
  for (const std::string& s : executive_summary(model)) sentences += (sentences.empty() ? "" : " ") + s;
  section.blocks.push_back(Paragraph{sentences, true});
  if (Table peers = peer_summary_table(model); !peers.rows.empty()) section.blocks.push_back(std::move(peers));
  if (Paragraph noisy = noisy_paragraph(model); !noisy.text.empty()) section.blocks.push_back(std::move(noisy));
  if (model.comparison && !(model.comparison->warnings.empty() && model.comparison->notices.empty())) {
    Bullets notes{{}, true};
    for (const std::string& w : model.comparison->warnings) notes.items.push_back("**warning:** " + literal(w));
    for (const std::string& n : model.comparison->notices) notes.items.push_back(literal(n));
    section.blocks.push_back(notes);
  }
  for (const Chart& chart : charts)
    if (chart.file == "speedup.svg") section.blocks.push_back(Figure{chart.file, chart_caption(chart.file), true});
  return section;
}

Section environment_section(const ReportModel& model) {
  Section section{"Environment", {}};
  const auto current = environment_rows(model.inputs->current);
  const auto baseline = model.inputs->baseline ? environment_rows(*model.inputs->baseline) : decltype(current){};
  Table table;
  table.columns = {{""}, {"This run"}};
  if (!baseline.empty()) table.columns.push_back({"Baseline"});
  for (const auto& [label, value] : current) {
    std::vector<Cell> row = {{"**" + label + "**"}, {value}};
    if (!baseline.empty()) {
      const auto it = std::find_if(baseline.begin(), baseline.end(), [&](const auto& b) { return b.first == label; });
      const bool differs = it != baseline.end() && it->second != value && label != "Results file" && label != kJobWallTime;
      row.push_back({it == baseline.end() ? "-" : it->second, differs ? Tone::warn : Tone::plain});
    }
    table.rows.push_back(std::move(row));
  }
  section.blocks.push_back(std::move(table));
  return section;
}

// The harness's wall time per phase (wall_s) and the runs' free-form `extra` entries as recorded
// (peers' library versions, shards, ...): for whoever needs them, out of the Environment's way.
std::optional<Section> run_metadata_appendix(const ReportModel& model) {
  Table table;
  table.columns = {{"Run"}, {"Key"}, {"Value"}};
  const auto add = [&](const NamedRun& named) {
    for (const auto& [phase, seconds] : named.run.context.wall_s)
      table.rows.push_back({{code(named.source)}, {code("wall_s." + phase)}, {format_time(seconds)}});
    // kgate merge's per-benchmark "source:<name>" entries say where each benchmark came from, one
    // per benchmark; "merged_from" names the inputs once.
    for (const auto& [key, value] : named.run.context.extra)
      if (!key.starts_with("source:")) table.rows.push_back({{code(named.source)}, {code(key)}, {literal(value)}});
  };
  add(model.inputs->current);
  if (model.inputs->baseline) add(*model.inputs->baseline);
  if (table.rows.empty()) return std::nullopt;
  Section section{"Appendix: run metadata", {}};
  section.blocks.push_back(
      Paragraph{"The harness's wall time per phase (`wall_s`) and the runs' free-form `extra` entries as recorded "
                "(docs/results-format.md says what each means)."});
  table.folded = std::to_string(table.rows.size()) + " entries";
  section.blocks.push_back(std::move(table));
  return section;
}

// The charts that belong to no one family (a family's roofline and roof shares are in its fold,
// the speedup chart in the summary): how the benchmarks spread over roofs, occupancy and DRAM
// throughput, and the trends of the history.
Section charts_section(const ReportModel& model, const std::vector<Chart>& charts) {
  Section section{"Charts", {}};
  section.fold = Fold::closed;
  for (const Chart& chart : charts) {
    const bool in_family = std::any_of(model.families.begin(), model.families.end(), [&](const FamilyView& f) {
      return chart.file == "roofline-" + file_safe(f.name) + ".svg" || chart.file == "roof-share-" + file_safe(f.name) + ".svg";
    });
    if (!in_family && chart.file != "speedup.svg")
      section.blocks.push_back(Figure{chart.file, chart_caption(chart.file), !model.comparison && chart.file.starts_with("hist-")});
  }
  if (section.blocks.empty()) return section;
  section.summary = plural(section.blocks.size(), "chart", "charts") + " over the whole run";
  return section;
}

// The first observations in view, the rest a click away: they are ordered by weight (docs/report.md).
constexpr std::size_t kShownObservations = 6;

Section observations_section(const ReportModel& model) {
  Section section{"Observations", {}};
  std::vector<std::string> all = observations(model);
  if (all.empty()) {
    section.blocks.push_back(Paragraph{"Nothing stands out in the measured data.", true});
    return section;
  }
  const std::size_t shown = std::min(all.size(), kShownObservations);
  section.blocks.push_back(Bullets{{all.begin(), all.begin() + static_cast<std::ptrdiff_t>(shown)}, true});
  if (all.size() > shown) {
    Section more{std::to_string(all.size() - shown) + " more observations", {}};
    more.fold = Fold::closed;
    more.blocks.push_back(Bullets{{all.begin() + static_cast<std::ptrdiff_t>(shown), all.end()}});
    section.subsections.push_back(std::move(more));
  }
  return section;
}

Section history_section(const ReportModel& model) {
  Section section{"History", {}};
  section.blocks.push_back(Paragraph{model.inputs->baseline
                                         ? "Each run compared with the baseline by `kgate compare`'s rules, oldest first."
                                         : "Each run compared with the one before it by `kgate compare`'s rules, oldest first."});
  section.blocks.push_back(history_table(model));
  if (Table jobs = job_time_table(model); !jobs.rows.empty()) {
    section.blocks.push_back(Subheading{kJobWallTime});
    section.blocks.push_back(
        Paragraph{"The wall time of the job that made each run, by phase (`kgate job-time`), oldest first, this run last."});
    section.blocks.push_back(std::move(jobs));
  }
  return section;
}

Section reproduction_section(const ReportModel& model) {
  Section section{"Reproduction", {}};
  const RunContext& c = model.context();
  const ReportInputs& in = *model.inputs;
  if (!in.current.run.has_kgate_block) {
    const std::string& command = in.current.run.context.command_line;
    section.blocks.push_back(Paragraph{"The run is " + foreign_format(in.current.run) + ": it records no commit" +
                                       (command.empty() ? " and no command." : "; it ran " + code(command) + ".")});
    return section;
  }
  std::string where = "Measured on " + literal(c.gpu_name) + " with CUDA driver " + format_cuda_version(c.driver_version) +
                      " and runtime " + format_cuda_version(c.runtime_version) + ", default SM clock " +
                      format_mhz(c.sm_clock_mhz_default) + ".";
  if (c.git_commit.empty() || c.git_commit == "unknown")
    where += " The run recorded no commit: the source tree cannot be pinned from this file.";
  else if (c.git_dirty) where += " The tree had uncommitted changes: checking out the commit does not reproduce them.";
  section.blocks.push_back(Paragraph{where});
  std::string commands;
  if (!c.git_commit.empty() && c.git_commit != "unknown") commands += "git checkout " + c.git_commit + "\n";
  commands += "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=" + (c.build_type.empty() ? std::string("Release") : c.build_type) +
              " -DCMAKE_CUDA_ARCHITECTURES=" + (c.cuda_architectures.empty() ? std::string("native") : c.cuda_architectures) + "\n";
  commands += "ninja -C build kgate_bench kgate\n";
  commands += (c.command_line.empty() ? std::string("./build/bench/kgate_bench --kgate_out=run.json") : c.command_line) + "\n";
  if (in.baseline) commands += "kgate compare " + in.baseline->source + " " + in.current.source + "\n";
  if (!in.invocation.empty()) commands += in.invocation + "\n";
  section.blocks.push_back(Code{commands});
  section.blocks.push_back(
      Paragraph{"`kgate` is `./build/tools/kgate/kgate`. kgate_bench is a Google Benchmark binary: add "
                "`--benchmark_filter='^<family>/<variant>/'` to measure one variant again."});
  return section;
}

// A section shown folded, with its one line.
Section folded(Section section, std::string summary) {
  section.fold = Fold::closed;
  section.summary = std::move(summary);
  return section;
}

Report build_report(const ReportInputs& inputs) {
  const ReportModel model = build_model(inputs);
  Report report;
  Document& doc = report.full;
  doc.title = "kgate report" + (model.context().gpu_name.empty() ? std::string() : ": " + literal(model.context().gpu_name));
  doc.subtitle = subtitle(model);
  doc.charts = draw_charts(model);
  // The answer first, then what a reader opens when it matters; reference material folded.
  doc.sections = {dashboard_section(model),
                  summary_section(model, doc.charts),
                  families_section(model, doc.charts),
                  folded(correctness_section(model), "checks at bench time, family by family"),
                  folded(environment_section(model), "GPU, CUDA, clocks, measured ceilings, commit"),
                  folded(hardware_section(model), "bound classes, CUPTI metrics, kernels launched")};
  if (Section charts = charts_section(model, doc.charts); !charts.blocks.empty()) doc.sections.push_back(std::move(charts));
  doc.sections.push_back(observations_section(model));
  if (!model.history.empty()) doc.sections.push_back(history_section(model));
  doc.sections.push_back(reproduction_section(model));
  doc.sections.push_back(glossary_section());
  doc.sections.push_back(folded(kernel_names_appendix(model), "every kernel's full name"));
  if (auto metadata = run_metadata_appendix(model))
    doc.sections.push_back(folded(std::move(*metadata), "the runs' wall time per phase and extra entries"));
  report.summary_markdown = fitted_summary(model, doc, inputs.link_base);
  report.gate_line = gate_line(model);
  report.gate_failed = model.comparison && model.comparison->regression();
  return report;
}

}  // namespace kgate::report
