// kgate report: the thin layer between the command line and report.hpp.
#include <algorithm>
#include <filesystem>
#include <future>
#include <optional>

#include "args.hpp"
#include "baseline.hpp"
#include "commands.hpp"
#include "kgate/base/display_path.hpp"
#include "kgate/history/history.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/report/report.hpp"
#include "kgate/results/file_io.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate::cli {
namespace {

constexpr const char* kUsage = R"(usage: kgate report NEW.json [--baseline FILE | --baseline-dir DIR] [--previous FILE...]
                    [--correctness JUNIT.xml] --out DIR [--format all|markdown|html|text|github]

Writes a report of NEW. It opens with a dashboard: the gate's verdict, the benchmarks that
changed (with what changed in them) and every family against the baseline, its best peer and
its roof. Then a summary; a fold per kernel family (open where something changed) with a
shapes x variants matrix, its charts and a panel per changed benchmark; correctness,
environment, hardware behaviour (CUPTI metrics, bound classes, kernels), charts, observations,
history, a reproduction guide and a glossary. With a baseline, the verdicts are kgate compare's.
summary.md is for a pull-request comment: its first line is the verdict, then the changed
benchmarks, the rest folded, always under 60,000 characters. Inputs are named relative to the
working directory, or by file name when outside it.

options:
  --baseline FILE       compare NEW with this run
  --baseline-dir DIR    compare NEW with DIR/<GPU slug of NEW>/<suite of NEW>.json
  --previous FILE...    earlier runs, for the history table and the trend charts; takes every
                        file up to the next option, and may be repeated
  --history FILE        earlier runs from a kgate history database: the
                        newest runs of NEW's GPU and suite, for the history and trend charts
  --history-last N      how many runs --history takes (default 30)
  --suite NAME          NEW's suite for --baseline-dir and --history (default: NEW's own;
                        'nvbench' for nvbench JSON, 'gbench' for plain Google Benchmark JSON)
  --out DIR             the directory to write to (created when missing); not needed for text
  --format FORMAT       all (default): report.md, report.html, the charts (.svg) and summary.md
                        markdown: report.md and the charts it links
                        html: report.html, one self-contained file
                        text: a compact version on standard output
                        github: summary.md, short, for a GitHub step summary or PR comment
  --correctness FILE    the GPU correctness suite's results as ctest wrote them (ctest
                        --output-junit FILE):
                        its passed, failed and skipped cases (with the reason) per variant and shape,
                        reported apart from the checks kgate_bench made at bench time
  --thresholds FILE     per-family and per-benchmark thresholds
                        (default: DIR/thresholds.json when it exists, DIR being --baseline-dir or
                        baselines)
  --link-base URL       where DIR will be published (a CI artifact or GitHub Pages URL): the
                        Markdown's links to report.html, report.md and the charts become
                        URL/<file>, so summary.md works as a comment; default: relative links
  --allow-env-mismatch  compare runs from different GPU models (warns instead of refusing)
  --allow-timer-mismatch  compare a CUPTI-timed benchmark with an event-timed one instead of
                        refusing
  -h, --help            this text

exit status: 0 report written (a regression does not change it: the gate verdict is printed),
2 bad input or usage
)";

const std::vector<std::string> kFormats = {"all", "markdown", "html", "text", "github"};

// "--previous A B C" takes every argument up to the next option; the parser keeps one value
// per option, so these are taken out before it runs.
std::vector<std::string> take_previous(Arguments& arguments) {
  std::vector<std::string> previous;
  Arguments rest;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].starts_with("--previous=")) {
      previous.push_back(arguments[i].substr(11));
    } else if (arguments[i] == "--previous") {
      const std::size_t first = previous.size();
      while (i + 1 < arguments.size() && !arguments[i + 1].starts_with("-")) previous.push_back(arguments[++i]);
      if (previous.size() == first) throw UsageError("--previous needs at least one file");
    } else {
      rest.push_back(arguments[i]);
    }
  }
  arguments = std::move(rest);
  return previous;
}

// The newest runs of the current run's GPU and suite from a history database, the current run
// itself (same commit and date) left out.
void add_history_runs(const std::string& db_path, double last, ReportInputs& inputs) {
  const RunContext& now = inputs.current.run.context;
  try {
    const HistoryDb db(db_path, false);
    for (auto& [run, results] : db.runs_as_results(gpu_slug(now.gpu_name), now.suite, static_cast<std::size_t>(last) + 1))
      if (!(run.commit == now.git_commit && run.date == now.date)) inputs.previous.push_back({run.label(), std::move(results)});
  } catch (const HistoryError& e) {
    throw ResultsError(e.what());
  }
  const std::size_t keep = static_cast<std::size_t>(last);
  if (inputs.previous.size() > keep)
    inputs.previous.erase(inputs.previous.begin(), inputs.previous.end() - static_cast<std::ptrdiff_t>(keep));
}

}  // namespace

int run_report(const Arguments& all_arguments, Io& io) {
  Arguments arguments = all_arguments;
  const std::vector<std::string> previous_paths = take_previous(arguments);
  const auto parsed = parse_or_help(arguments,
                                    {.with_value = {"--baseline", "--baseline-dir", "--out", "--format", "--thresholds", "--history",
                                                    "--history-last", "--correctness", "--suite", "--link-base"},
                                     .flags = {"--allow-env-mismatch", "--allow-timer-mismatch"}},
                                    kUsage, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  if (args.positionals().empty() && !previous_paths.empty())
    throw UsageError(
        "expected NEW.json; --previous takes every file up to the next option, so name NEW.json before "
        "--previous (or end the list with --)");
  if (args.positionals().size() != 1)
    throw UsageError("expected one results file (NEW.json), got " + std::to_string(args.positionals().size()));
  const std::string format = args.value("--format").value_or("all");
  if (std::find(kFormats.begin(), kFormats.end(), format) == kFormats.end())
    throw UsageError("--format: expected all, markdown, html, text or github, got '" + format + "'");
  const auto out_dir = args.value("--out");
  if (!out_dir && format != "text") throw UsageError("missing --out DIR");
  const auto baseline_file = args.value("--baseline"), baseline_dir = args.value("--baseline-dir");
  if (baseline_file && baseline_dir) throw UsageError("give --baseline FILE or --baseline-dir DIR, not both");

  // The output directory first: a mistyped --out fails before any file is read.
  if (out_dir) require_writable_directory("--out", *out_dir);
  ReportInputs inputs;
  if (const auto junit = args.value("--correctness")) {
    inputs.correctness_source = display_path(*junit);
    inputs.correctness = read_ctest_junit(*junit);
  }

  // The runs are read side by side: each is hundreds of thousands of samples of JSON.
  const auto read_later = [](const std::string& path) { return std::async(std::launch::async, read_results_file, path); };
  std::optional<std::future<RunResults>> named_baseline;
  if (baseline_file) named_baseline = read_later(*baseline_file);
  std::vector<std::future<RunResults>> previous_runs;
  for (const std::string& path : previous_paths) previous_runs.push_back(read_later(path));
  inputs.current = {display_path(args.positionals().front()), read_results_file(args.positionals().front())};
  if (const auto suite = args.value("--suite")) {
    check_suite_name(*suite);
    inputs.current.run.context.suite = *suite;
  }
  if (named_baseline) {
    inputs.baseline = NamedRun{display_path(*baseline_file), named_baseline->get()};
  } else if (baseline_dir) {
    const std::string path = baseline_file_for(*baseline_dir, inputs.current.run, inputs.current.source, std::nullopt);
    if (!std::filesystem::exists(path))
      throw ResultsError(path + ": no baseline for " + inputs.current.run.context.gpu_name + " (record one with 'kgate baseline update " +
                         inputs.current.source + "')");
    inputs.baseline = NamedRun{display_path(path), read_results_file(path)};
  }
  for (std::size_t i = 0; i < previous_paths.size(); ++i)
    inputs.previous.push_back({display_path(previous_paths[i]), previous_runs[i].get()});
  if (const auto history = args.value("--history")) add_history_runs(*history, args.number("--history-last", 30, 1, 1e6), inputs);
  const std::string default_thresholds = (std::filesystem::path(baseline_dir.value_or("baselines")) / "thresholds.json").string();
  if (const auto file = args.value("--thresholds")) inputs.compare.thresholds = read_thresholds_file(*file);
  else if (std::filesystem::exists(default_thresholds)) inputs.compare.thresholds = read_thresholds_file(default_thresholds);
  inputs.compare.allow_env_mismatch = args.flag("--allow-env-mismatch");
  inputs.compare.allow_timer_mismatch = args.flag("--allow-timer-mismatch");
  inputs.invocation = command_line("kgate report", all_arguments);
  if (const auto base = args.value("--link-base")) {
    if (!base->starts_with("https://") && !base->starts_with("http://"))
      throw UsageError("--link-base: expected an http(s) URL where the report directory is published, got '" + *base + "'");
    inputs.link_base = *base;
  }

  const report::Report report = report::build_report(inputs);
  if (format == "text") {
    io.out << report::render_text(report.full);
    return kExitOk;
  }
  const std::filesystem::path dir(*out_dir);
  std::filesystem::create_directories(dir);
  // Every file is written to its temporary file first and all are put in place together, report.md
  // last: a full disk or a kill leaves the last complete report as it was, never a report.md whose
  // charts or report.html are missing or from another run.
  StagedFiles files;
  const auto add = [&](const std::string& name, const std::string& text) { files.add((dir / name).string(), text); };
  if (format == "all" || format == "markdown")
    for (const report::Chart& chart : report.full.charts) add(chart.file, chart.svg);
  if (format == "all" || format == "html") add("report.html", report::render_html(report.full));
  if (format == "all" || format == "github") add("summary.md", report.summary_markdown);
  if (format == "all" || format == "markdown") add("report.md", report::render_markdown(report.full, inputs.link_base));
  files.commit();
  io.out << "kgate report: wrote " << files.paths().size() << " files to " << dir.string() << "\n" << report.gate_line << "\n";
  return kExitOk;
}

}  // namespace kgate::cli
