// kgate baseline update | show. What may become a baseline entry is the library's
// (include/kgate/gate/baseline.hpp); this file reads, locks and writes the files and says what changed.
#include "baseline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "args.hpp"
#include "commands.hpp"
#include "kgate/base/escape.hpp"
#include "kgate/base/text.hpp"
#include "kgate/gate/baseline.hpp"
#include "kgate/gate/compare.hpp"
#include "kgate/results/file_lock.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: kgate baseline update [options] NEW.json
       kgate baseline show [--baseline-dir DIR] [GPU-SLUG]

update  records NEW's benchmarks in DIR/<GPU slug>/<suite>.json (the slug from NEW's GPU name:
        "NVIDIA H100 80GB HBM3" -> nvidia-h100-80gb-hbm3). Entries NEW does not have are kept;
        each entry records the commit, date, driver and clocks of the run it came from. The file
        is replaced atomically. Refused (exit 1), naming per benchmark what to do about it, when
        NEW has a failed variant or a wrong result, a gated benchmark whose minimum detectable
        change is above its threshold (it could not see a regression of that size),
        or a benchmark that lost most of its samples to throttling; --force records the others
        anyway (failed variants and wrong results are never recorded; skipped benchmarks keep
        their old entry). A benchmark with one sample is never recorded either: no significance
        test can judge a run against one figure, so it could never gate (nvbench writes its
        summaries alone without --jsonbin; Google Benchmark one sample per repetition), and a
        file of nothing else is refused whole, --force or not. Refused always when the file
        would mix CUPTI-timed and event-timed entries (compare refuses to judge one against the
        other): record a whole-suite run with --prune to replace them all. Peers (role "peer") are never recorded: they
        are not gated (kgate peers record keeps them apart). --prune also drops the entries of benchmarks that NEW skipped or does not
        have (removed from the suite, or shapes a variant no longer benchmarks), so that compare
        stops listing them as missing: give it a run of the whole suite, never a shard or a
        filtered run. One update at a time per file: the file is read, changed and replaced while
        holding FILE.lock, so concurrent updates (one per shard) all land; another update waits
        for it, naming its holder.
show    lists the baselines in DIR, or the entries of one GPU's baselines.

options:
  --baseline-dir DIR  where the baselines live (default: baselines); update reads the thresholds
                      from DIR/thresholds.json when it exists
  --suite NAME        update: the suite file to write (default: NEW's suite; 'nvbench' for
                      nvbench JSON)
  --force             update: record despite the problems listed above
  --prune             update: drop the entries NEW skipped or lacks (a whole-suite run only)
  --lock-timeout SECONDS  update: how long to wait while another update holds the file's lock
                      (default: 60); then exit 2, naming it
  -h, --help          this text

exit status: 0 done, 1 update refused, 2 bad input or usage
)";

int update(const Args& args, Io& io) {
  if (args.positionals().size() != 1)
    throw UsageError("baseline update takes one results file, got " + std::to_string(args.positionals().size()));
  const std::string source = args.positionals().front();
  const std::chrono::milliseconds lock_timeout(std::llround(args.number("--lock-timeout", 60, 0, 86400) * 1000));
  RunResults run = read_results_file(source);
  const std::string path = baseline_file_for(args.value("--baseline-dir").value_or("baselines"), run, source, args.value("--suite"));
  run.context.suite = args.value("--suite").value_or(run.context.suite);  // the stored file says which suite it is

  const fs::path thresholds_file = fs::path(args.value("--baseline-dir").value_or("baselines")) / "thresholds.json";
  const Thresholds thresholds = fs::exists(thresholds_file) ? read_thresholds_file(thresholds_file.string()) : Thresholds{};
  if (const std::string why = never_a_baseline(run); !why.empty()) {  // refused whole, --force or not
    io.err << "kgate baseline update: " << source << ": refused: " << why << "\n";
    return kExitGate;
  }
  if (const std::vector<std::string> problems = unfit_benchmarks(run, thresholds); !problems.empty() && !args.flag("--force")) {
    io.err << "kgate baseline update: " << source << ": refused, " << problems.size()
           << " benchmark(s) unfit for a baseline (--force records the others anyway):\n";
    for (const std::string& p : problems) io.err << "  " << terminal_text(p) << "\n";
    return kExitGate;
  }

  make_baseline_folder(path);
  // From the read to the replacement: an update that read the file before another replaced it would
  // write back the old entries and lose the other's.
  const FileLock lock(path, lock_timeout, "kgate baseline update " + source,
                      [&](const std::string& note) { io.err << "kgate baseline update: " << terminal_text(note) << "\n"; });
  RunResults baseline;
  if (fs::exists(path)) baseline = read_results_file(path);
  const BaselineChanges changes = record_in_baseline(baseline, run, source, thresholds, args.flag("--prune"));
  if (const auto timers = timers_of(baseline.benchmarks); timers.size() > 1) {
    io.err << "kgate baseline update: " << source << ": refused: " << path << " would mix timers, and compare refuses to judge a "
           << "CUPTI-timed benchmark against an event-timed one:\n";
    for (const auto& [timer, example] : timers) io.err << "  " << terminal_text(timer) << "-timed: e.g. " << terminal_text(example) << "\n";
    io.err << "record a whole-suite run with the timer you want (kgate_bench --kgate_timer=...) and --prune, which replaces "
              "every entry\n";
    return kExitGate;
  }
  write_results_file(path, to_json(baseline));
  io.out << "wrote " << path << ": " << changes.updated << " updated, " << changes.added << " added, " << changes.kept << " kept";
  if (args.flag("--prune")) io.out << ", " << changes.pruned.size() << " pruned";
  io.out << "\n";
  for (const std::string& name : changes.pruned) io.out << "  pruned: " << terminal_text(name) << "\n";
  for (const std::string& name : changes.not_recorded) io.out << "  not recorded: " << terminal_text(name) << "\n";
  if (changes.peers)
    io.out << "  not recorded: " << changes.peers << " peer benchmark(s) (peers are not gated; kgate peers record keeps them)\n";
  return kExitOk;
}

std::string provenance_value(const BenchmarkRecord& r, const std::string& key) {
  const auto it = r.provenance.find(key);
  return it == r.provenance.end() || it->second.empty() ? "-" : it->second;
}

std::vector<fs::path> sorted_entries(const fs::path& dir, bool directories) {
  std::vector<fs::path> out;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir))
    if (directories ? entry.is_directory() : entry.is_regular_file() && entry.path().extension() == ".json") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

void show_entries(const fs::path& file, const RunResults& baseline, Io& io) {
  io.out << terminal_text(file.string()) << ": " << terminal_text(baseline.context.gpu_name) << ", suite "
         << terminal_text(baseline.context.suite) << ", " << baseline.benchmarks.size() << " benchmarks\n";
  std::size_t width = 9;
  for (const BenchmarkRecord& r : baseline.benchmarks) width = std::max(width, terminal_text(r.name).size());
  const auto pad = [](std::string text, std::size_t to) { return text.size() < to ? text + std::string(to - text.size(), ' ') : text; };
  io.out << "  " << pad("Benchmark", width) << "  mode   median (us)  samples   MHz  commit        date\n";
  for (const BenchmarkRecord& r : baseline.benchmarks) {
    const TimingRecord* t = r.headline();
    io.out << "  " << pad(terminal_text(r.name), width) << "  " << pad(terminal_text(r.headline_mode), 4) << "  "
           << printf_string("%12.3f", r.headline_median_s() * 1e6) << "  " << printf_string("%7.0f", t ? double(t->samples_s.size()) : 0)
           << "  "
           << std::string(4 - std::min<std::size_t>(4, provenance_value(r, "sm_clock_mhz").size()), ' ') +
                  provenance_value(r, "sm_clock_mhz")
           << "  " << pad(terminal_text(provenance_value(r, "commit").substr(0, 12)), 12) << "  "
           << terminal_text(provenance_value(r, "date")) << "\n";
  }
}

int show(const Args& args, Io& io) {
  const fs::path dir = args.value("--baseline-dir").value_or("baselines");
  if (args.positionals().size() > 1) throw UsageError("baseline show takes at most one GPU slug");
  if (!fs::is_directory(dir)) throw ResultsError(dir.string() + ": no baselines here (not a directory)");
  const std::vector<fs::path> gpus = sorted_entries(dir, true);
  int status = kExitOk;
  const auto read = [&](const fs::path& file) -> std::optional<RunResults> {
    try {
      return read_results_file(file.string());
    } catch (const ResultsError& e) {
      io.err << "kgate baseline show: " << terminal_text(e.what(), "\n") << "\n";
      status = kExitUsage;
      return std::nullopt;
    }
  };
  if (args.positionals().empty()) {
    if (gpus.empty()) io.out << "no baselines in " << dir.string() << "\n";
    for (const fs::path& gpu : gpus)
      for (const fs::path& file : sorted_entries(gpu, false))
        if (const auto baseline = read(file)) {
          std::string newest;
          for (const BenchmarkRecord& r : baseline->benchmarks) newest = std::max(newest, provenance_value(r, "date"));
          io.out << terminal_text(gpu.filename().string() + "/" + file.filename().string()) << "  "
                 << terminal_text(baseline->context.gpu_name) << "  " << baseline->benchmarks.size() << " benchmarks, newest entry "
                 << terminal_text(newest) << "\n";
        }
    return status;
  }
  const fs::path gpu = dir / args.positionals().front();
  if (!fs::is_directory(gpu)) {
    std::string known;
    for (const fs::path& g : gpus) known += (known.empty() ? "" : ", ") + g.filename().string();
    throw ResultsError(gpu.string() + ": no baselines for GPU '" + args.positionals().front() +
                       "' (have: " + (known.empty() ? "none" : known) + ")");
  }
  for (const fs::path& file : sorted_entries(gpu, false))
    if (const auto baseline = read(file)) show_entries(file, *baseline, io);
  return status;
}

}  // namespace

void check_suite_name(const std::string& suite) {
  const bool plain = !suite.empty() && suite.front() != '.' && std::all_of(suite.begin(), suite.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!plain) throw UsageError("suite name '" + suite + "' is not a plain file name (letters, digits, '-', '_', '.')");
}

void make_baseline_folder(const std::string& file) {
  const fs::path folder = fs::path(file).parent_path();
  if (std::error_code ec; !fs::create_directories(folder, ec) && ec)
    throw ResultsError(folder.string() + ": cannot create the directory: " + ec.message());
}

std::string baseline_file_for(const std::string& dir, const RunResults& run, const std::string& run_source,
                              const std::optional<std::string>& suite) {
  if (!run.has_kgate_block && run.context.gpu_name.empty())  // nvbench files name their GPU
    throw ResultsError(run_source +
                       ": $.context.kgate: required field is missing (plain Google Benchmark JSON does not say "
                       "which GPU it ran on, so it has no baseline of its own: give BASELINE.json explicitly)");
  const std::string name = suite.value_or(run.context.suite);
  check_suite_name(name);
  return (fs::path(dir) / gpu_slug(run.context.gpu_name) / (name + ".json")).string();
}

int run_baseline(const Arguments& arguments, Io& io) {
  const auto parsed =
      parse_action(arguments,
                   {{"update", {.with_value = {"--baseline-dir", "--suite", "--lock-timeout"}, .flags = {"--force", "--prune"}}},
                    {"show", {.with_value = {"--baseline-dir"}}}},
                   kUsage, io.out);
  if (!parsed) return kExitOk;
  return parsed->action == "update" ? update(parsed->args, io) : show(parsed->args, io);
}

}  // namespace kgate::cli
