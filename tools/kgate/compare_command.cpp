// kgate compare: the thin layer between the command line and compare.hpp.
#include <filesystem>
#include <fstream>
#include <future>

#include "args.hpp"
#include "baseline.hpp"
#include "commands.hpp"
#include "comparator_options.hpp"
#include "kgate/base/display_path.hpp"
#include "kgate/gate/compare.hpp"
#include "kgate/gate/comparison_output.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate::cli {
namespace {

constexpr const char* kUsage = R"(usage: kgate compare [options] BASELINE.json NEW.json
       kgate compare [options] --baseline-dir DIR NEW.json

Compares NEW with BASELINE benchmark by benchmark (matched by name) on the headline mode's
samples: speedup = baseline median / new median, its confidence interval, a Mann-Whitney
U test, and a verdict: slower, faster, same, at threshold, noisy, new, missing or failed
(kgate's docs/compare.md says how each is decided).
Prints slower, failed, at-threshold, faster, noisy, new and missing benchmarks, largest change
first, then the summary line and the verdict in words ("kgate: pass, ..." or "kgate: FAIL, ...");
warnings and notes go to standard error.
Either file may be plain Google Benchmark JSON: then the comparison is on time only, with the
repetitions as samples; a benchmark without manual time is CPU-timed, and its band is at least
the spread of its own repetitions rather than the minimum change in time.

options:
  --baseline-dir DIR      checked-in baselines (default: baselines). Given one file, compares it
                          with DIR/<GPU slug of NEW>/<suite of NEW>.json
  --suite NAME            with --baseline-dir: the baseline suite to use (default: NEW's suite;
                          'nvbench' for nvbench JSON)
  --thresholds FILE       per-family and per-benchmark thresholds
                          (default: DIR/thresholds.json when it exists)
  --allow-env-mismatch    compare runs from different GPU models (warns instead of refusing)
)";

constexpr const char* kComparatorUsage =
    R"(  --threshold FRACTION    the default threshold, e.g. 0.05 = 5%; replaces the file's default only,
                          its per-family and per-benchmark entries still apply
  --min-change-us US      the smallest change in an event-timed median that can count (default:
                          the file's min_change_us, else 1): their launch overhead shifts short
                          kernels by up to ~0.9 us between separate runs of identical code.
                          CUPTI- and CPU-timed medians use each benchmark's minimum detectable change
  --allow-timer-mismatch  compare a CUPTI-timed benchmark with an event-timed one (as event-timed)
                          instead of refusing
  --alpha P               significance level of the U test (default 0.01; intervals at 1 - P)
  --noise-limit FRACTION  relative stddev above which a row notes both sides' spread (default 0.10);
                          the interval of the median ratio decides the verdict, whatever the spread
  --all                   list the unchanged (same) benchmarks too; by default the table lists
                          what changed, largest change first, and counts the rest
  --json FILE             write the verdicts as JSON
  --junit FILE            write JUnit XML: one testcase per benchmark, regressions and failures
                          as <failure>
  --markdown FILE         write a Markdown report (pull-request comment, GitHub step summary): the
                          verdict in its first line, the changed benchmarks, the unchanged ones
                          folded; under 60,000 characters, the rows that do not fit counted
  --link-base URL         where kgate report's output is published (an absolute http(s) URL, a CI
                          artifact or Pages site): the Markdown links each benchmark to
                          URL/report.html#<its anchor>, and the full report
  --ascii                 print the table with x, us and -> instead of ×, µs and → (also when
                          KGATE_ASCII is set to anything but 0)
)";

constexpr const char* kHelpAndExitStatus = R"(  -h, --help              this text

exit status: 0 no regression, 1 a regression (slower) or a failed variant, 2 bad input or usage
)";

// Reports are written in place, not through a rename: "--markdown $GITHUB_STEP_SUMMARY" and
// "--json /dev/stdout" must work.
void write_report(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  file.flush();
  if (!file) throw ResultsError(path + ": cannot write the report");
}

}  // namespace

const std::set<std::string>& comparator_value_options() {
  static const std::set<std::string> names = {"--thresholds", "--threshold", "--min-change-us", "--alpha",    "--noise-limit",
                                              "--json",       "--junit",     "--markdown",      "--link-base"};
  return names;
}

const std::set<std::string>& comparator_flags() {
  static const std::set<std::string> names = {"--allow-timer-mismatch", "--all", "--ascii"};
  return names;
}

const char* comparator_options_usage() { return kComparatorUsage; }

CompareOptions comparator_options(const Args& args, const std::string& default_thresholds) {
  for (const char* option : {"--json", "--junit", "--markdown"})
    if (const auto path = args.value(option)) require_writable(option, *path);
  if (const auto url = args.value("--link-base")) require_absolute_url("--link-base", *url);
  CompareOptions options;
  if (const auto file = args.value("--thresholds")) options.thresholds = read_thresholds_file(*file);
  else if (std::filesystem::exists(default_thresholds)) options.thresholds = read_thresholds_file(default_thresholds);
  options.thresholds.default_fraction = args.number("--threshold", options.thresholds.default_fraction, 0, 1);
  options.thresholds.min_change_s = args.number("--min-change-us", options.thresholds.min_change_s * 1e6, 0, 1e9) * 1e-6;
  if (!(options.thresholds.default_fraction > 0)) throw UsageError("--threshold must be above 0");
  options.alpha = args.number("--alpha", options.alpha, 1e-9, 0.5);
  options.noise_limit = args.number("--noise-limit", options.noise_limit, 1e-6, 10);
  options.allow_timer_mismatch = args.flag("--allow-timer-mismatch");
  return options;
}

void write_comparison_files(const Args& args, const ComparisonReport& report) {
  if (const auto path = args.value("--json"))
    write_report(*path, report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (const auto path = args.value("--junit")) write_report(*path, report_to_junit(report));
  if (const auto path = args.value("--markdown"))
    write_report(*path, report_to_markdown(report, {.link_base = args.value("--link-base").value_or("")}));
}

void print_comparison(const Args& args, const ComparisonReport& report, Io& io) {
  const Glyphs glyphs = args.flag("--ascii") ? Glyphs::ascii : glyphs_from_environment();
  io.err << format_warnings(report, io.colour, glyphs);
  io.out << format_table(report, io.colour, args.flag("--all"), glyphs);
}

int run_compare(const Arguments& arguments, Io& io) {
  OptionSpec spec{.with_value = comparator_value_options(), .flags = comparator_flags()};
  spec.flags.insert("--allow-env-mismatch");
  spec.with_value.insert({"--baseline-dir", "--suite"});
  const auto parsed = parse_or_help(arguments, spec, std::string(kUsage) + kComparatorUsage + kHelpAndExitStatus, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  const std::vector<std::string>& files = args.positionals();
  const auto baseline_dir = args.value("--baseline-dir");
  if (files.size() != 2 && !(files.size() == 1 && baseline_dir))
    throw UsageError(files.size() == 1 ? "one results file given: add the baseline, or --baseline-dir DIR"
                                       : "expected BASELINE.json NEW.json, got " + std::to_string(files.size()) + " files");
  if (args.value("--suite") && files.size() != 1)
    throw UsageError("--suite selects a baseline file in --baseline-dir; give NEW.json alone");
  if (baseline_dir && files.size() == 2)
    throw UsageError(
        "--baseline-dir picks NEW.json's baseline: give NEW.json alone, or BASELINE.json NEW.json without it "
        "(--thresholds FILE for a thresholds file)");
  const std::string default_thresholds = (std::filesystem::path(baseline_dir.value_or("baselines")) / "thresholds.json").string();
  CompareOptions options = comparator_options(args, default_thresholds);
  options.allow_env_mismatch = args.flag("--allow-env-mismatch");

  const std::string new_path = files.back();
  // Two files of hundreds of thousands of samples each: read side by side when both are named.
  std::future<RunResults> named_baseline;
  if (files.size() == 2) named_baseline = std::async(std::launch::async, read_results_file, files.front());
  const RunResults current = read_results_file(new_path);
  std::string baseline_path;
  if (files.size() == 2) {
    baseline_path = files.front();
  } else {
    baseline_path = baseline_file_for(*baseline_dir, current, new_path, args.value("--suite"));
    if (!std::filesystem::exists(baseline_path))
      throw ResultsError(baseline_path + ": no baseline for " + current.context.gpu_name + " (record one with 'kgate baseline update " +
                         new_path + "')");
  }
  const RunResults baseline = files.size() == 2 ? named_baseline.get() : read_results_file(baseline_path);

  // Named as given relative to the working directory, or by file name: what the outputs show
  // carries no layout of the machine that wrote them.
  const ComparisonReport report = compare_runs(baseline, current, display_path(baseline_path), display_path(new_path), options);
  write_comparison_files(args, report);
  print_comparison(args, report, io);
  return report.regression() ? kExitGate : kExitOk;
}

}  // namespace kgate::cli
