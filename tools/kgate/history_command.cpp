// kgate history: the nightly runs in an SQLite database, their series and change points
// (include/kgate/history/history.hpp, docs/history.md): the flags, and the series, change points
// and the jobs' wall time printed.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>

#include "args.hpp"
#include "baseline.hpp"
#include "commands.hpp"
#include "kgate/base/escape.hpp"
#include "kgate/base/figures.hpp"
#include "kgate/base/text.hpp"
#include "kgate/history/history.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate::cli {
namespace {

constexpr const char* kUsage = R"(usage: kgate history add RUN.json... [--db FILE] [--gpu NAME] [--commit SHA] [--date DATE]
                         [--suite NAME]
       kgate history show BENCHMARK-REGEX [--gpu SLUG] [--last N] [--db FILE]
       kgate history changes [--since DATE|COMMIT|previous] [--json FILE] [options]
       kgate history jobs [--gpu SLUG] [--last N] [--db FILE]

Keeps every run's per-benchmark figures in an SQLite database and finds where a benchmark's
time changed over the runs (kgate's docs/history.md).

  add       one row per run (commit, date, GPU, host, driver, timer), per phase of the job that
            made it (kgate job-time) and per benchmark and mode (median and its 95% interval,
            repetition medians, minimum detectable change, clock); adding a run that is already
            there changes nothing. Takes kgate results, nvbench JSON and plain Google Benchmark
            JSON: what a file does not record (nvbench: commit and date; Google Benchmark: GPU
            and commit) comes from --gpu, --commit and --date, and without them the file is
            refused naming the option it needs. Several adds may run at once: they take turns,
            each waiting up to 60 s. Nothing is written into a database that SQLite's integrity
            check finds damaged
  show      each matching benchmark's series on each GPU: one line per run, oldest first
  changes   change points per benchmark and GPU in the headline mode's run medians: E-divisive
            means with a permutation test, confirmed by the runs' statistics (the step exceeds
            the benchmark's threshold, its minimum change and the runs' minimum detectable
            change, and its interval excludes 1); each with its last good and first bad run
  jobs      the wall time of the job that made each run, by phase (kgate job-time): one line
            per run that records it, oldest first, its total and a column per phase

options:
  --db FILE             the database (default: history.sqlite; add creates it; one written by
                        an earlier kgate is upgraded when opened)
  --gpu SLUG            show, changes and jobs: only this GPU (e.g. nvidia-h200)
  --gpu NAME            add: the GPU the runs ran on where a file does not say (plain Google
                        Benchmark JSON; for CPU-timed benchmarks, a name for the machine); a
                        file that names another GPU is refused
  --commit SHA          add: the commit measured where a file records none (nvbench, plain Google
                        Benchmark JSON, a kgate run built outside git); one that records another
                        is refused
  --date DATE           add: when the run ran, ISO 8601 (2026-11-21T12:00:00Z; an offset is
                        converted to UTC), where a file records none (nvbench); one that records
                        another is refused
  --suite NAME          add: the suite the runs are filed under, which report --history looks up
                        (default: the file's; 'nvbench' for nvbench JSON, 'gbench' for plain
                        Google Benchmark JSON)
  --last N              show: only the newest N runs of each series; jobs: only the newest N
                        runs
  --filter RE           changes: only benchmarks whose name matches RE
  --since WHEN          changes: which change points are new: a date (2026-11-20: runs from that
                        day on), a commit (a run of it, and those before it, are old) or
                        'previous' (all but each GPU's newest run are old). A change point is new
                        when it entered after WHEN or the runs up to WHEN did not show it.
                        Default: every change point is new
  --json FILE           changes: also write them as JSON
  --thresholds FILE     changes: per-family and per-benchmark thresholds
                        (default: baselines/thresholds.json when it exists)
  --alpha P             changes: significance level of the permutation test (default 0.05)
  --permutations N      changes: shuffles per test (default 199)
  -h, --help            this text

exit status: 0 success (changes: no new slowdown), 1 changes: a new change point that is a
slowdown, 2 bad input or usage (a file that is not a results file, or lacks what --gpu, --commit
or --date gives; a database that is not a kgate history, or is damaged)
)";

using Operands = std::vector<std::string>;  // the arguments after the action

// The columns of `history show`'s table: their titles and widths; the first is left-aligned.
constexpr std::pair<const char*, std::size_t> kShowColumns[] = {{"run", 18}, {"median", 12}, {"95% interval", 20}, {"vs prev", 8},
                                                                {"rsd", 7},  {"mdc", 8},     {"clock", 9},         {"timer, host", 0}};

std::string show_line(const std::vector<std::string>& cells) {
  std::string line = " ";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    line += ' ';
    line += i == 0 || i + 1 == cells.size() ? left_aligned(cells[i], kShowColumns[i].second)
                                            : right_aligned(cells[i], kShowColumns[i].second);
  }
  return line + "\n";
}

// show's and jobs' --last: only the newest N runs.
std::optional<std::size_t> last_runs(const Args& args) {
  if (!args.value("--last")) return std::nullopt;
  return static_cast<std::size_t>(args.number("--last", 0, 1, 1e9));
}

// What keys a run in the history that a file may not record, as history add's options give it.
RunIdentity given_identity(const Args& args) {
  RunIdentity given{.gpu = args.value("--gpu"), .commit = args.value("--commit"), .date = std::nullopt, .suite = args.value("--suite")};
  if (given.gpu && given.gpu->empty()) throw UsageError("--gpu: give the GPU's name, e.g. \"NVIDIA H100 80GB HBM3\"");
  if (given.commit && !std::regex_match(*given.commit, std::regex("[0-9a-fA-F]{4,40}")))
    throw UsageError("--commit: expected a commit hash (git rev-parse HEAD), got '" + *given.commit + "'");
  if (const auto date = args.value("--date")) {
    given.date = iso8601_utc(*date);
    if (!given.date) throw UsageError("--date: expected an ISO 8601 date such as 2026-11-21T12:00:00Z, got '" + *date + "'");
  }
  if (given.suite) check_suite_name(*given.suite);
  return given;
}

int run_add(const Operands& files, const RunIdentity& given, const std::string& db_path, Io& io) {
  if (files.empty()) throw UsageError("history add: give one or more results files");
  // Every file is read and completed before the first is added: a refused file adds nothing.
  std::vector<RunResults> runs;
  for (const std::string& path : files) complete_identity(runs.emplace_back(read_results_file(path)), path, given);
  HistoryDb db(db_path, true);
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    const RunResults& run = runs[i];
    const HistoryDb::Added added = db.add(run, path);
    io.out << "kgate history: " << (added.added ? "added " : "already there: ") << terminal_text(added.run.label()) << " on "
           << terminal_text(added.run.gpu) << " (" << terminal_text(added.run.host) << ", timer " << terminal_text(added.run.timer) << ")";
    if (added.added) io.out << ", " << added.rows << " benchmark x mode rows";
    io.out << "\n";
  }
  return kExitOk;
}

int run_show(const Args& args, const Operands& operands, const std::string& db_path, Io& io) {
  if (operands.size() != 1) throw UsageError("history show: give one BENCHMARK-REGEX");
  const HistoryDb db(db_path, false);
  const SeriesQuery query{.benchmark_regex = operands.front(), .gpu = args.value("--gpu"), .last = last_runs(args)};
  const std::vector<HistorySeries> all = db.series(query);
  if (all.empty()) {
    io.err << "kgate history show: no benchmark matches '" << terminal_text(query.benchmark_regex) << "'"
           << (query.gpu ? " on " + terminal_text(*query.gpu) : std::string()) << " in " << terminal_text(db_path) << " ("
           << db.runs().size() << " runs)\n";
    return kExitOk;
  }
  for (const HistorySeries& s : all) {
    io.out << terminal_text(s.benchmark) << " on " << terminal_text(s.gpu) << " (" << terminal_text(s.mode) << ", " << s.points.size()
           << " runs)\n";
    std::vector<std::string> titles;
    for (const auto& [title, width] : kShowColumns) titles.emplace_back(title);
    io.out << show_line(titles);
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const HistoryPoint& p = s.points[i];
      io.out << show_line({terminal_text(p.run->label()), format_time(p.median_s), format_time_interval(p.ci_low_s, p.ci_high_s),
                           i == 0 ? "" : format_change(p.median_s / s.points[i - 1].median_s - 1), format_percent(p.rel_stddev * 100),
                           p.min_detectable_change > 0 ? format_percent(p.min_detectable_change * 100) : "-", format_mhz(p.sm_clock_mhz),
                           terminal_text(p.timer) + ", " + terminal_text(p.run->host)});
    }
  }
  return kExitOk;
}

int run_changes(const Args& args, const Operands& operands, const std::string& db_path, Io& io) {
  if (!operands.empty()) throw UsageError("history changes: unexpected argument '" + operands.front() + "'");
  const HistoryDb db(db_path, false);
  ChangeOptions options;
  options.search.alpha = args.number("--alpha", options.search.alpha, 1e-6, 0.5);
  options.search.permutations = static_cast<int>(args.number("--permutations", options.search.permutations, 9, 100000));
  if (const auto file = args.value("--thresholds")) options.thresholds = read_thresholds_file(*file);
  else if (std::filesystem::exists("baselines/thresholds.json")) options.thresholds = read_thresholds_file("baselines/thresholds.json");
  const auto since = args.value("--since");
  const auto up_to_since = since ? refusals_as_usage_errors([&] { return runs_up_to(*since, db.runs()); }) : nullptr;
  const std::vector<HistorySeries> all =
      db.series({.benchmark_regex = args.value("--filter").value_or(""), .gpu = args.value("--gpu"), .last = std::nullopt});
  const std::vector<ChangePoint> changes = find_changes(all, options, up_to_since);
  if (const auto json_file = args.value("--json")) write_results_file(*json_file, changes_to_json(changes));

  std::size_t new_slowdowns = 0;
  for (const ChangePoint& c : changes) {
    new_slowdowns += c.is_new && c.slowdown();
    io.out << (c.slowdown() ? "slower " : "faster ") << (c.is_new ? "new " : "    ") << terminal_text(c.benchmark) << " on "
           << terminal_text(c.gpu) << " (" << terminal_text(c.mode) << "): " << format_change(c.ratio.ratio - 1) << " ["
           << format_change(c.ratio.low - 1) << ", " << format_change(c.ratio.high - 1) << "], " << format_time(c.before_median_s) << " → "
           << format_time(c.after_median_s) << "; last good " << terminal_text(c.last_good->label()) << ", first bad "
           << terminal_text(c.first_bad->label()) << "; " << c.runs_before << " runs before, " << c.runs_after << " after, p "
           << format_p_value(c.p_value) << "\n";
  }
  std::size_t runs_seen = 0;
  for (const HistorySeries& s : all) runs_seen = std::max(runs_seen, s.points.size());
  io.out << "kgate history: " << changes.size() << " change point(s) in " << all.size() << " series (up to " << runs_seen << " runs each); "
         << new_slowdowns << " new slowdown(s)" << (since ? " since " + *since : std::string()) << "\n";
  return new_slowdowns ? kExitGate : kExitOk;
}

// `history jobs`'s table: the run, its GPU and host left-aligned, the total and each phase's
// seconds right-aligned, each column as wide as its widest cell.
std::string jobs_table(const std::vector<std::vector<std::string>>& rows) {
  constexpr std::size_t kJobTextColumns = 3;  // the run, its GPU and host
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  std::string text;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i)
      text += (i == 0 ? "" : "  ") + (i < kJobTextColumns ? left_aligned(row[i], widths[i]) : right_aligned(row[i], widths[i]));
    text += "\n";
  }
  return text;
}

int run_jobs(const Args& args, const Operands& operands, const std::string& db_path, Io& io) {
  if (!operands.empty()) throw UsageError("history jobs: unexpected argument '" + operands.front() + "'");
  const HistoryDb db(db_path, false);
  const auto gpu = args.value("--gpu");
  std::vector<const HistoryRun*> runs;
  for (const HistoryRun& r : db.runs())
    if (!r.job_s.empty() && (!gpu || r.gpu == *gpu)) runs.push_back(&r);
  if (const auto last = last_runs(args); last && runs.size() > *last)
    runs.erase(runs.begin(), runs.end() - static_cast<std::ptrdiff_t>(*last));
  if (runs.empty()) {
    io.err << "kgate history jobs: no run" << (gpu ? " on " + terminal_text(*gpu) : std::string()) << " in " << terminal_text(db_path)
           << " (" << db.runs().size() << " runs) records the wall time of its job (kgate job-time)\n";
    return kExitOk;
  }
  std::vector<const std::vector<JobPhase>*> jobs;
  for (const HistoryRun* r : runs) jobs.push_back(&r->job_s);
  const std::vector<std::string> phases = job_phase_columns(jobs);
  std::vector<std::vector<std::string>> rows = {{"run", "gpu", "host", "total"}};
  for (const std::string& phase : phases) rows.front().push_back(terminal_text(phase));
  for (const HistoryRun* r : runs) {
    std::vector<std::string> row = {terminal_text(r->label()), terminal_text(r->gpu), terminal_text(r->host),
                                    format_time(job_total_s(r->job_s))};
    for (const std::string& phase : phases) {
      const JobPhase* p = find_job_phase(r->job_s, phase);
      row.push_back(p ? format_time(p->seconds) : "-");
    }
    rows.push_back(std::move(row));
  }
  io.out << jobs_table(rows);
  return kExitOk;
}

}  // namespace

int run_history(const Arguments& arguments, Io& io) {
  const auto parsed = parse_or_help(arguments,
                                    {.with_value = {"--db", "--gpu", "--commit", "--date", "--suite", "--last", "--filter", "--since",
                                                    "--json", "--thresholds", "--alpha", "--permutations"}},
                                    kUsage, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  if (args.positionals().empty()) {
    io.err << kUsage;
    return kExitUsage;
  }
  const std::string action = args.positionals().front();
  const Operands operands(args.positionals().begin() + 1, args.positionals().end());
  const std::string db_path = args.value("--db").value_or("history.sqlite");
  try {
    if (action == "add") return run_add(operands, given_identity(args), db_path, io);
    if (action == "show") return run_show(args, operands, db_path, io);
    if (action == "changes") return run_changes(args, operands, db_path, io);
    if (action == "jobs") return run_jobs(args, operands, db_path, io);
  } catch (const HistoryError& e) {
    throw ResultsError(e.what());  // one line, exit 2
  } catch (const std::regex_error& e) {
    throw UsageError(std::string("not a valid regular expression: ") + e.what());
  }
  throw UsageError("unknown history action '" + action + "' (add, show, changes or jobs)");
}

}  // namespace kgate::cli
