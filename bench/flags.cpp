#include "flags.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "kgate/results/provenance.hpp"

namespace kgate::bench {
namespace {

double parse_number(std::string_view flag, const std::string& value, double min) {
  std::size_t used = 0;
  double number = NAN;
  try {
    number = std::stod(value, &used);
  } catch (const std::exception&) {
  }
  if (used != value.size() || !std::isfinite(number) || number < min)
    throw std::invalid_argument(std::string(flag) + ": expected a number >= " + std::to_string(min) + ", got '" + value + "'");
  return number;
}

// A whole number in [min, max], for the flags that count things.
int parse_count(std::string_view flag, const std::string& value, int min, int max) {
  const double number = parse_number(flag, value, min);
  if (number != std::floor(number) || number > max)
    throw std::invalid_argument(std::string(flag) + ": expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                                ", got '" + value + "'");
  return static_cast<int>(number);
}

double parse_fraction(std::string_view flag, const std::string& value) {
  const double fraction = parse_number(flag, value, 0);
  if (fraction > 1) throw std::invalid_argument(std::string(flag) + ": expected a fraction from 0 to 1, got '" + value + "'");
  return fraction;
}

bool parse_switch(std::string_view flag, const std::string& value) {
  if (value == "on" || value == "true" || value == "1") return true;
  if (value == "off" || value == "false" || value == "0") return false;
  throw std::invalid_argument(std::string(flag) + ": expected on or off, got '" + value + "'");
}

// A value parsed by one of the harness's own parsers (parse_timer, parse_l2_flush, ...), whose
// errors get the flag's name in front.
template <class Parse>
auto parse_with(std::string_view flag, const std::string& value, Parse parse) {
  try {
    return parse(value);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(flag) + ": " + e.what());
  }
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> items;
  std::stringstream in(value);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

}  // namespace

std::string bench_usage() {
  return R"(kgate_bench: every registered kernel variant x benchmark shape, timed on this GPU.

kgate flags (Google Benchmark's own flags, listed below them, work as usual):
  --kgate_out=FILE              write the complete results JSON (Google Benchmark format + kgate blocks)
  --kgate_out_dir=DIR           the same, as DIR/<UTC date>-<gpu>.json (the path is printed)
  --kgate_modes=cold,hot        timing modes to run (both by default; a family names its headline mode);
                                headline: only each benchmark's headline mode (what kgate ab compares)
  --kgate_processes=N           time the suite in N fresh processes, one after another, and pool each
                                benchmark's samples; each process takes 1/N of the sampling budget below
                                (default 3). What a process brings (its allocations, its state) moves a
                                median by ~1%, and cuBLAS sometimes runs a GEMV shape 9% slower for a whole
                                benchmark; the pooled median follows the majority (kgate's docs/timing.md)
  --kgate_timer=cupti|events    a sample's clock: cupti, the span of the call's CUPTI activity records
                                (first start to last end of its kernels, copies and sets, on the GPU's
                                clock; the launch processing is not in it), or events, a CUDA event pair
                                around the call (adds a fixed 2-4 us). Default cupti; where CUPTI cannot
                                record (another profiler attached), events, with a warning
  --kgate_cupti_kernels=concurrent|serial
                                the CUPTI activity kind kernels are recorded with (default concurrent, the
                                cheaper on short kernels as measured)
  --kgate_hold=on|off           queue each batch of samples behind a kernel that holds the stream until the
                                host has enqueued it all (default on; off by itself under Nsight Compute,
                                which serializes launches, so kgate_bench runs under ncu)
  --kgate_min_samples=N         samples before stopping is considered (default 10)
  --kgate_min_time=SECONDS      GPU time to accumulate per mode before stopping (default 0.05)
  --kgate_max_time=SECONDS      wall-clock cap per mode (default 5)
  --kgate_max_samples=N         sample cap per mode (default 1000)
  --kgate_flush=read|write      how cold mode empties the L2: read or memset a buffer of twice its size (default read)
  --kgate_placements=N          cold mode rotates among at least N separately allocated copies of the inputs
                                where they fit in 4 GiB, so the median does not hang on where one allocation
                                lies in memory; in each process (default 8; 1: only the copies that cover the L2)
  --kgate_target_rsd=FRACTION   relative stddev that ends sampling early (default 0.005)
  --kgate_throttle=FRACTION     drop samples whose SM clock is below this fraction of the default clock (default 0.75)
  --kgate_full_clock=FRACTION   a batch below this fraction of the default clock ran with the board limiting its
                                power: drop it and rest between batches from then on (default 0.97)
  --kgate_rest=RATIO            that rest, as a multiple of each batch's GPU time (default 1; 0: never rest)
  --kgate_counters=on|off|trace  CUPTI: kernel records, and range-profiler metrics in a pass after timing, each
                                replay pass after the L2 is emptied as for a cold sample; trace: kernel records
                                only (default on)
  --kgate_metrics=a,b,...       range-profiler metrics (default: kgate's list; any metric the chip supports)
  --kgate_check=on|off          check each benchmark's output against the reference before timing (default on)
  --kgate_workloads=NAME,...    the workload benchmarks to run instead of the suite's, by name, e.g.
                                workload/llama3-8b-decode/b:64/l:4096/bf16
  --kgate_shard=I/N             run shard I of N (counting from 0) of the benchmark list: a deterministic
                                split, so N processes (one per GPU: kgate shard-run) run the suite
                                once between them; --benchmark_filter then narrows each shard
  --kgate_shard_durations=FILE  balance the shards by the time each benchmark took in FILE (a results
                                file, e.g. the baseline); without it they are balanced by count
  --kgate_shard_claims=DIR      instead of a split made ahead, each benchmark goes to the first of the
                                shards running at once that claims it, in DIR, a folder they all share
                                (kgate shard-run's default on one host)
  --kgate_list_json=FILE        write every family's benchmark shapes as JSON (FILE, or - for standard
                                output) and exit; needs no GPU

The sampling budget (samples, times) is per benchmark and mode, shared among the processes.
nvbench's defaults are --kgate_min_time=0.5 --kgate_max_time=15; kgate's are shorter so that a
whole suite fits a CI job, and every record says whether its noise target was met.
)";
}

BenchFlags parse_bench_flags(int& argc, char** argv) {
  BenchFlags flags;
  SuiteOptions& o = flags.suite;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") flags.help = true;
    if (arg.rfind("--kgate_", 0) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    if (eq == std::string::npos) throw std::invalid_argument(flag + ": expected " + flag + "=VALUE");
    const std::string value = arg.substr(eq + 1);
    if (flag == "--kgate_out") {
      flags.out = value;
    } else if (flag == "--kgate_out_dir") {
      flags.out_dir = value;
    } else if (flag == "--kgate_modes") {
      o.cold = o.hot = false;
      for (const std::string& mode : split_list(value)) {
        if (mode == "cold") o.cold = true;
        else if (mode == "hot") o.hot = true;
        else if (mode == "headline") o.headline_only = o.cold = o.hot = true;
        else throw std::invalid_argument(flag + ": unknown mode '" + mode + "' (cold, hot, headline)");
      }
      if (o.headline_only && split_list(value).size() > 1)
        throw std::invalid_argument(flag + ": headline stands alone (it picks cold or hot per benchmark)");
      if (!o.cold && !o.hot) throw std::invalid_argument(flag + ": name at least one mode");
    } else if (flag == "--kgate_processes") {
      o.processes = parse_count(flag, value, 1, kMaxTimingProcesses);
    } else if (flag == "--kgate_min_samples") {
      o.timing.stopping.min_samples = static_cast<int>(parse_number(flag, value, 1));
    } else if (flag == "--kgate_min_time") {
      o.timing.stopping.min_gpu_time_s = parse_number(flag, value, 0);
    } else if (flag == "--kgate_max_time") {
      o.timing.stopping.max_wall_time_s = parse_number(flag, value, 0.001);
    } else if (flag == "--kgate_max_samples") {
      o.timing.stopping.max_samples = static_cast<int>(parse_number(flag, value, 1));
    } else if (flag == "--kgate_timer") {
      o.timing.timer = parse_with(flag, value, parse_timer);
    } else if (flag == "--kgate_cupti_kernels") {
      o.timing.kernel_activity = parse_with(flag, value, parse_kernel_activity);
    } else if (flag == "--kgate_hold") {
      o.timing.hold_stream = parse_switch(flag, value);
    } else if (flag == "--kgate_flush") {
      o.timing.flush = parse_with(flag, value, parse_l2_flush);
    } else if (flag == "--kgate_placements") {
      o.timing.input_placements = parse_count(flag, value, 1, kMaxInputCopies);
    } else if (flag == "--kgate_target_rsd") {
      o.timing.stopping.target_rel_stddev = parse_number(flag, value, 0);
    } else if (flag == "--kgate_throttle") {
      o.timing.throttle.threshold = parse_fraction(flag, value);
    } else if (flag == "--kgate_full_clock") {
      o.timing.throttle.full_clock = parse_fraction(flag, value);
    } else if (flag == "--kgate_rest") {
      o.timing.throttle.rest_ratio = parse_number(flag, value, 0);
    } else if (flag == "--kgate_counters") {
      o.counters = value == "trace" || parse_switch(flag, value);
      o.profile = value != "trace" && o.counters;
    } else if (flag == "--kgate_metrics") {
      o.metrics = split_list(value);
    } else if (flag == "--kgate_check") {
      o.check = parse_switch(flag, value);
    } else if (flag == "--kgate_workloads") {
      o.workloads = split_list(value);
      if (o.workloads.empty()) throw std::invalid_argument(flag + ": name at least one workload benchmark");
    } else if (flag == "--kgate_list_json") {
      flags.list_json = value;
    } else if (flag == "--kgate_shard") {
      try {
        o.shard = parse_shard(value);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(flag + ": " + e.what());
      }
    } else if (flag == "--kgate_shard_durations") {
      o.shard_durations = value;
    } else if (flag == "--kgate_shard_claims") {
      o.shard_claims = value;
    } else if (flag == "--kgate_resume") {
      flags.resume = value;
    } else if (flag == "--kgate_handover_fd") {
      flags.handover_fd = parse_count(flag, value, 0, 1 << 20);
    } else {
      throw std::invalid_argument("unknown flag " + flag + " (see --help)");
    }
  }
  if (!o.shard_durations.empty() && !o.shard)
    throw std::invalid_argument("--kgate_shard_durations: balances shards; give --kgate_shard=I/N too");
  if (!o.shard_claims.empty() && !o.shard)
    throw std::invalid_argument("--kgate_shard_claims: shares a suite between shards; give --kgate_shard=I/N too");
  if (!o.shard_claims.empty() && !o.shard_durations.empty())
    throw std::invalid_argument(
        "--kgate_shard_claims: the shards take their benchmarks as they run; --kgate_shard_durations splits them ahead: give one");
  argc = kept;
  argv[argc] = nullptr;
  return flags;
}

std::string results_path(const BenchFlags& flags, const RunContext& context) {
  if (!flags.out.empty() || flags.out_dir.empty()) return flags.out;
  std::filesystem::create_directories(flags.out_dir);
  return (std::filesystem::path(flags.out_dir) / run_file_name(context)).string();
}

}  // namespace kgate::bench
