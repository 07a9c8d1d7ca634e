// kgate shard-run: a suite's benchmark binary split over this machine's GPUs, one process per GPU
// (the binary's --kgate_shard=I/N), the shards merged by kgate merge in-process. The split itself
// is the binary's (include/kgate/results/shard.hpp); this file finds the GPUs and runs processes.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "args.hpp"
#include "commands.hpp"
#include "kgate/base/parallel.hpp"
#include "kgate/report/format.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"
#include "process.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: kgate shard-run --bench FILE [options] [-- BENCH_FLAGS...]

Runs a suite's benchmark binary split over this machine's GPUs: one process per GPU, each with
its shard (--kgate_shard=I/N), CUDA_VISIBLE_DEVICES naming its one GPU and, unless it is set,
KGATE_HOST_THREADS its share of the cores for the host references; then merges the shards into
one results file (kgate merge) that records which GPU (index, UUID, name) measured each
benchmark. With more shards than GPUs, each GPU runs its shards one after the other. The same
command runs one CI job's part of the suite on a runner (--only); the final job merges the
shards of all jobs (kgate nightly).

options:
  --bench FILE        the suite's benchmark binary (a kgate_add_suite <suite>_bench)
  --gpus N            use the first N visible GPUs (default: all: the entries of
                      CUDA_VISIBLE_DEVICES when it is set, else every GPU nvidia-smi -L lists,
                      with CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA numbers them as nvidia-smi)
  --shards N          split the suite into N shards (default: one per GPU)
  --only I[,J...]     run only these shards, counting from 0, and leave them unmerged in the
                      output directory: a CI job's part of the suite
  --durations FILE    split the suite ahead, balanced by the time each benchmark took in FILE, a
                      results file. By default the shards running at once take the benchmarks as
                      they run, each to the first shard free to claim it (--kgate_shard_claims, in
                      DIR/claims); with --only, or more shards than GPUs, the split is made ahead by
                      the baseline of this GPU and suite when it exists
                      (BASELINE_DIR/<GPU slug>/<suite>.json), else by count
  --baseline-dir DIR  where that baseline is looked for (default: baselines)
  --suite NAME        the suite's name in that baseline's file name (default: the binary's file
                      name without its _bench suffix, as kgate_add_suite names it)
  --out-dir DIR       the shards' results (shard-<i>-of-<n>.json) and logs (shard-<i>.log)
                      (default: shards-<UTC date>)
  --out FILE          the merged results (default: DIR/merged.json)
  --runs-dir DIR      write the merged results as DIR/<UTC date>-<GPU slug>.json instead, the
                      name the benchmark binary's --kgate_out_dir gives a run
  -- BENCH_FLAGS...   flags for every benchmark process (e.g. --kgate_counters=off,
                      --benchmark_filter=rmsnorm)
  -h, --help          this text

exit status: 0 all shards ran and merged, 1 a benchmark failed (a process exited 1: merged
anyway), 2 bad input or usage, a shard that did not run, or a merge that failed
)";

struct Gpu {
  std::string id;           // what CUDA_VISIBLE_DEVICES names it by: an index or a UUID
  std::string description;  // "NVIDIA H200, GPU-..." as nvidia-smi lists it, else "?"
  std::string name;         // "NVIDIA H200"; empty when nvidia-smi does not list it
};

// What nvidia-smi -L lists ("GPU 0: NVIDIA H200 (UUID: GPU-...)"), or why it could not.
std::vector<Gpu> listed_gpus(const fs::path& scratch, std::string& failure) {
  const std::string listing = (scratch / "nvidia-smi.txt").string();
  std::vector<Gpu> listed;
  try {
    if (const int status = run_process({"nvidia-smi", "-L"}, listing, listing); status != 0) {
      failure = "nvidia-smi -L failed (exit status " + std::to_string(status) + "): " + last_lines(listing, 3);
      return listed;
    }
  } catch (const ResultsError& e) {
    failure = e.what();
    return listed;
  }
  const std::regex line(R"(GPU (\d+): (.*) \(UUID: ([^)]+)\))");
  std::istringstream lines(read_text(listing));
  for (std::string text; std::getline(lines, text);)
    if (std::smatch m; std::regex_match(text, m, line)) listed.push_back({m[1], m[2].str() + ", " + m[3].str(), m[2]});
  return listed;
}

// The GPUs this run may use: the entries of CUDA_VISIBLE_DEVICES when it is set (described from
// nvidia-smi's listing where it names them), else every GPU nvidia-smi lists.
std::vector<Gpu> visible_gpus(const fs::path& scratch) {
  std::string failure;
  const std::vector<Gpu> listed = listed_gpus(scratch, failure);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible) {
    if (!failure.empty()) throw ResultsError("no GPU visible: " + failure);
    return listed;
  }
  std::vector<Gpu> gpus;
  std::istringstream entries(visible);
  for (std::string id; std::getline(entries, id, ',');) {
    if (id.empty()) continue;
    Gpu gpu{id, "?", ""};
    for (const Gpu& g : listed)
      if (g.id == id || g.description.ends_with(", " + id)) gpu = {id, g.description, g.name};
    gpus.push_back(gpu);
  }
  return gpus;
}

std::size_t whole_number(const Args& args, const std::string& option) {
  const double value = args.number(option, 0, 0, 4096);
  if (value != static_cast<double>(static_cast<std::size_t>(value))) throw UsageError(option + ": expected a whole number");
  return static_cast<std::size_t>(value);
}

std::vector<std::size_t> selected_shards(const std::optional<std::string>& only, std::size_t shards) {
  std::vector<std::size_t> selected;
  if (!only) {
    for (std::size_t s = 0; s < shards; ++s) selected.push_back(s);
    return selected;
  }
  std::istringstream entries(*only);
  for (std::string entry; std::getline(entries, entry, ',');) {
    if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos || std::stoul(entry) >= shards)
      throw UsageError("--only " + *only + ": shards count from 0 to " + std::to_string(shards - 1));
    selected.push_back(std::stoul(entry));
  }
  return selected;
}

// The suite's name from its binary's: mykernels_bench -> mykernels.
std::string suite_of(const std::string& bench) {
  const std::string file = fs::path(bench).filename().string();
  return file.ends_with("_bench") ? file.substr(0, file.size() - 6) : file;
}

// Where a finished shard's time went, from the wall time per phase its results record (summed over
// its timing processes): " (its processes P s: startup …, calibration …, timing …, counters …)".
// On a host of several GPUs the fixed phases, not the timing, are what keeps the
// shards from scaling (docs/ci.md). Empty when it has no phases.
std::string shard_phases(const RunResults& results) {
  const PhaseSeconds& wall = results.context.wall_s;
  std::vector<JobPhase> phases;
  for (const char* known : {"startup", "calibration", "timing", "counters"})
    if (const auto it = wall.find(known); it != wall.end()) phases.push_back({it->first, it->second});
  for (const auto& [phase, seconds] : wall)  // any other top-level phase, after the known ones
    if (phase.find('.') == std::string::npos &&
        std::none_of(phases.begin(), phases.end(), [&](const JobPhase& p) { return p.phase == phase; }))
      phases.push_back({phase, seconds});
  return phases.empty() ? "" : " (its processes " + report::format_job_phases(phases) + ")";
}

// One shard-run's processes: shard s of `count` runs as `bench --kgate_shard=s/count` on one GPU,
// its results in DIR/shard-<s>-of-<count>.json and its log in DIR/shard-<s>.log.
struct ShardJob {
  std::string bench;
  std::size_t count = 1;
  std::string durations;  // a results file to balance the shards by; empty: by count
  std::string claims;     // the folder in which the shards claim their benchmarks as they run; empty: a split made ahead
  fs::path dir;
  Arguments bench_flags;

  std::string results(std::size_t s) const {
    return (dir / ("shard-" + std::to_string(s) + "-of-" + std::to_string(count) + ".json")).string();
  }
  std::string log(std::size_t s) const { return (dir / ("shard-" + std::to_string(s) + ".log")).string(); }
};

// How a shard ended: its exit status (127: it could not run) and its results, read as it ended,
// while the other shards still ran (none where it wrote none, or none that can be read: judge_shards
// and the merge say why).
struct ShardOutcome {
  int status = 0;
  std::optional<RunResults> results;
};

// Runs the selected shards on every GPU at once, each GPU its share one after the other (slot,
// slot + GPUs, ... of the selection).
std::map<std::size_t, ShardOutcome> run_shards(const ShardJob& job, const std::vector<std::size_t>& selected, const std::vector<Gpu>& gpus,
                                               Io& io) {
  // Without CUDA_VISIBLE_DEVICES the GPUs are nvidia-smi's indices, which CUDA numbers the same way
  // only in PCI bus order.
  const bool order_by_bus = std::getenv("CUDA_VISIBLE_DEVICES") == nullptr;
  // The processes run at once share the host's cores, which a shard spreads its host references
  // over (KGATE_HOST_THREADS, parallel.hpp), unless the caller chose a count.
  const std::string threads_each =
      std::getenv("KGATE_HOST_THREADS") ? "" : std::to_string(std::max<std::size_t>(1, host_threads() / gpus.size()));
  std::map<std::size_t, ShardOutcome> outcomes;
  for (const std::size_t s : selected) outcomes[s] = {};  // every entry made here: the threads only assign
  std::mutex printing;
  const auto run_on_gpu = [&](std::size_t slot) {
    for (std::size_t k = slot; k < selected.size(); k += gpus.size()) {
      const std::size_t s = selected[k];
      Arguments argv = {job.bench, "--kgate_shard=" + std::to_string(s) + "/" + std::to_string(job.count)};
      if (!job.durations.empty()) argv.push_back("--kgate_shard_durations=" + job.durations);
      if (!job.claims.empty()) argv.push_back("--kgate_shard_claims=" + job.claims);
      argv.push_back("--kgate_out=" + job.results(s));
      argv.insert(argv.end(), job.bench_flags.begin(), job.bench_flags.end());
      ProcessSetup setup{.directory = "", .environment = {"CUDA_VISIBLE_DEVICES=" + gpus[slot].id}};
      if (order_by_bus) setup.environment.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
      if (!threads_each.empty()) setup.environment.push_back("KGATE_HOST_THREADS=" + threads_each);
      const auto started = std::chrono::steady_clock::now();
      int status = 0;
      try {
        status = run_process(argv, job.log(s), job.log(s), setup);
      } catch (const std::exception& e) {  // a thread must not throw: the shard counts as not run
        std::ofstream(job.log(s)) << e.what() << "\n";
        status = 127;
      }
      // Read before the lock the other GPUs' threads wait on, and while they still run: the merge
      // then only pools what is read.
      std::optional<RunResults> results;
      try {
        if (fs::exists(job.results(s))) results = read_results_file_may_be_empty(job.results(s));
      } catch (const std::exception&) {  // the merge reads it again, to say what is wrong with it
      }
      const std::string phases = results ? shard_phases(*results) : "";
      const std::lock_guard lock(printing);
      outcomes[s] = {status, std::move(results)};
      io.out << "kgate shard-run: shard " << s << "/" << job.count << " on GPU " << gpus[slot].id << " (" << gpus[slot].description
             << "): exit " << status << " after " << seconds_since(started) << phases << "\n"
             << std::flush;
    }
  };
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> slots;
  for (std::size_t slot = 0; slot < gpus.size() && slot < selected.size(); ++slot) slots.emplace_back(run_on_gpu, slot);
  for (std::thread& t : slots) t.join();
  io.out << "kgate shard-run: all shards done in " << seconds_since(started) << " wall\n";
  return outcomes;
}

// The exit status of the shards together: 2 when one did not run or wrote no results (the end of
// its log shown), else 1 when one recorded a failed benchmark (kgate_bench's exit 1), else 0.
int judge_shards(const ShardJob& job, const std::vector<std::size_t>& selected, const std::map<std::size_t, ShardOutcome>& outcomes,
                 Io& io) {
  int result = kExitOk;
  for (const std::size_t s : selected) {
    const int status = outcomes.at(s).status;
    if (!fs::exists(job.results(s)) || (status != 0 && status != 1)) {
      io.err << "kgate shard-run: shard " << s << "/" << job.count << " failed (exit " << status << "); the end of " << job.log(s) << ":\n"
             << last_lines(job.log(s), 15);
      result = kExitUsage;
    } else if (status == 1) {
      io.err << "kgate shard-run: shard " << s << "/" << job.count << " recorded a failed benchmark (see " << job.log(s) << ")\n";
      if (result == kExitOk) result = kExitGate;
    }
  }
  return result;
}

}  // namespace

int run_shard_run(const Arguments& arguments, Io& io) {
  const OptionSpec spec{.with_value = {"--bench", "--gpus", "--shards", "--only", "--durations", "--baseline-dir", "--suite", "--out-dir",
                                       "--out", "--runs-dir"}};
  const auto parsed = parse_or_help(arguments, spec, kUsage, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  const Arguments bench_flags = args.after_separator("flags for the benchmark binary");
  const auto bench_given = args.value("--bench");
  if (!bench_given) throw UsageError("give --bench FILE, the suite's benchmark binary");
  if (!fs::exists(*bench_given)) throw UsageError("--bench " + *bench_given + ": no such file");
  const std::string bench = fs::absolute(*bench_given).string();  // a bare name is a file here, not a program on the PATH
  if (args.value("--out") && args.value("--runs-dir")) throw UsageError("give --out FILE or --runs-dir DIR, not both");
  const fs::path out_dir = args.value("--out-dir").value_or("shards-" + compact_date(utc_now_iso8601()));
  fs::create_directories(out_dir);

  std::vector<Gpu> gpus = visible_gpus(out_dir);
  if (gpus.empty()) throw ResultsError("no GPU visible (CUDA_VISIBLE_DEVICES is empty, or nvidia-smi -L lists none)");
  if (const std::size_t wanted = whole_number(args, "--gpus"); wanted > 0 && wanted < gpus.size()) gpus.resize(wanted);
  const std::size_t shards = whole_number(args, "--shards") > 0 ? whole_number(args, "--shards") : gpus.size();
  const std::vector<std::size_t> selected = selected_shards(args.value("--only"), shards);

  // Shards that all run at once take their benchmarks as they run: durations recorded elsewhere
  // (another host, one GPU alone) left a 4x H200 host's shards 18.5-23.3 s apart in timing.
  std::string durations = args.value("--durations").value_or(""), claims;
  if (durations.empty() && !args.value("--only") && shards <= gpus.size()) {
    claims = fs::absolute(out_dir / "claims").string();
    fs::remove_all(claims);  // a folder left by an earlier run in the same directory
  } else if (durations.empty() && !gpus.front().name.empty()) {
    const fs::path baseline = fs::path(args.value("--baseline-dir").value_or("baselines")) / gpu_slug(gpus.front().name) /
                              (args.value("--suite").value_or(suite_of(bench)) + ".json");
    if (fs::exists(baseline)) durations = baseline.string();
  }
  io.out << "kgate shard-run: " << selected.size() << " of " << shards << " shard(s) on " << gpus.size() << " GPU(s), "
         << (!claims.empty()     ? "each benchmark to the first shard free to claim it"
             : durations.empty() ? "split ahead by count"
                                 : "split ahead by " + durations)
         << "; results in " << out_dir.string() << "\n";

  const ShardJob job{.bench = bench, .count = shards, .durations = durations, .claims = claims, .dir = out_dir, .bench_flags = bench_flags};
  std::map<std::size_t, ShardOutcome> outcomes = run_shards(job, selected, gpus, io);
  const int result = judge_shards(job, selected, outcomes, io);
  if (result == kExitUsage) return result;
  if (args.value("--only")) {
    io.out << "kgate shard-run: shard(s) " << *args.value("--only") << " left in " << out_dir.string() << " for kgate merge\n";
    return result;
  }
  std::vector<ResultsInput> inputs;
  for (const std::size_t s : selected) {
    std::optional<RunResults>& results = outcomes.at(s).results;
    inputs.push_back({job.results(s), results ? std::move(*results) : read_results_file_may_be_empty(job.results(s))});  // again: the error
  }
  std::string out = args.value("--out").value_or((out_dir / "merged.json").string());
  if (const auto runs = args.value("--runs-dir")) {
    fs::create_directories(*runs);
    out = (fs::path(*runs) / run_file_name(inputs.front().results.context)).string();
  }
  write_merged(merge_results(inputs, false), inputs.size(), out, io);
  io.out << "kgate shard-run: merged into " << out << "\n";
  return result;
}

}  // namespace kgate::cli
