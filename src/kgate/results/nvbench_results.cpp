#include "kgate/results/nvbench_results.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "json_node.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/results/results_io.hpp"
#include "value_rules.hpp"

namespace kgate {

using json_node::Node;
using json_node::read_opt;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Summary tags nvbench writes for the cold measurement (nvbench/detail/measure_cold.cu) and for
// the sample files of --jsonbin (nvbench/json_printer.cu).
constexpr const char* kSampleTimesFile = "nv/json/bin:nv/cold/sample_times";
constexpr const char* kSampleFreqsFile = "nv/json/freqs-bin:nv/cold/sample_freqs";
constexpr const char* kSampleCount = "nv/cold/sample_size";
constexpr const char* kGpuMean = "nv/cold/time/gpu/mean";
constexpr const char* kGpuMedian = "nv/cold/time/gpu/median";
constexpr const char* kGpuMin = "nv/cold/time/gpu/min";
constexpr const char* kGpuMax = "nv/cold/time/gpu/max";
constexpr const char* kGpuNoise = "nv/cold/time/gpu/stdev/relative";
constexpr const char* kClockMean = "nv/cold/sm_clock_rate/mean";
constexpr const char* kWalltime = "nv/cold/walltime";
constexpr const char* kBytesPerSecond = "nv/cold/bw/global/bytes_per_second";
constexpr double kDefaultMaxNoise = 0.005;  // nvbench's --max-noise default: 0.5%

// A summary's named values (its "data" array of {name, type, value}); nvbench writes numbers as
// strings so that int64 values survive JSON's doubles. Each number read meets value_rules.hpp.
class Summary {
 public:
  explicit Summary(const Node& node) : node_(node) {
    const auto data = node.find("data");
    if (!data) return;
    data->array();
    for (std::size_t i = 0; i < data->size(); ++i) {
      const Node entry = (*data)[i];
      const std::string name = entry.at("name").string();
      values_.erase(name);  // the last of a name counts
      values_.emplace(name, Value{entry.at("type").string(), entry.at("value").string(), entry});
    }
  }

  bool has(const std::string& name) const { return values_.contains(name); }

  double time(const std::string& name = "value") const {
    return number(name, value_rules::is_time, std::string("time must be ") + value_rules::kTimeRange);
  }
  double figure(const std::string& name = "value") const { return number(name, value_rules::is_figure, "must be a finite number >= 0"); }
  long long count(const std::string& name, double most) const {
    const auto whole = [most](double v) { return value_rules::is_whole(v, 0, most); };
    return static_cast<long long>(number(name, whole, "expected a whole number from 0 to " + value_rules::number_text(most)));
  }

  std::string text(const std::string& name) const { return find(name).text; }
  const Node& node() const { return node_; }

 private:
  struct Value {
    std::string type, text;
    Node entry;
  };
  const Value& find(const std::string& name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) node_.at("data").fail("no value named \"" + name + "\"");
    return it->second;
  }
  // The named value as a number that `holds`; otherwise fails naming it with `rule`.
  double number(const std::string& name, const std::function<bool(double)>& holds, const std::string& rule) const {
    const Value& v = find(name);
    if (v.type != "float64" && v.type != "int64") v.entry.at("type").fail("expected float64 or int64 for \"" + name + "\", got " + v.type);
    double out = 0;
    const auto [end, error] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), out);
    const Node value = v.entry.at("value");
    if (error != std::errc() || end != v.text.data() + v.text.size()) value.fail("not a number: " + json_excerpt(value.value()));
    if (!holds(out)) value.fail(rule + ", got " + json_excerpt(value.value()));
    return out;
  }
  Node node_;
  std::map<std::string, Value> values_;
};

// A --jsonbin sample file, `name` as the JSON file names it: `count` little-endian float32 values,
// each one that `holds` (else refused with `rule`). The file must lie in the JSON file's folder
// `dir` once symbolic links are followed, and be a regular file of exactly that size, checked
// before it is read: a path in a hostile file cannot make kgate read /dev/zero or another's file.
std::vector<double> read_sample_file(const fs::path& dir, const std::string& name, long long count, const Node& place,
                                     bool (*holds)(double), const std::string& rule) {
  const std::string shown = json_excerpt(json(name));  // quoted and cut short: the name is the file's
  if (fs::path(name).is_absolute()) place.fail("the sample file " + shown + " is not in the JSON file's folder: an absolute path");
  std::error_code ec;
  const fs::path real = fs::canonical(dir / name, ec);
  if (ec)
    place.fail("cannot open the sample file " + shown +
               " beside the JSON file (nvbench --jsonbin writes it there: keep its -bin folders "
               "with it)");
  const fs::path folder = fs::canonical(dir, ec);
  if (ec || std::mismatch(folder.begin(), folder.end(), real.begin(), real.end()).first != folder.end())
    place.fail("the sample file " + shown + " is outside the JSON file's folder once links are followed");
  if (!fs::is_regular_file(real, ec)) place.fail("the sample file " + shown + " is not a regular file");
  const std::uintmax_t bytes = fs::file_size(real, ec);
  if (ec || bytes != static_cast<std::uintmax_t>(count) * sizeof(float))
    place.fail("the sample file " + shown + " holds " + std::to_string(bytes) + " bytes, expected " + std::to_string(count) +
               " float32 values");
  std::vector<char> raw(static_cast<std::size_t>(bytes));
  std::ifstream in(real, std::ios::binary);
  if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size()))) place.fail("cannot read the sample file " + shown);
  std::vector<double> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t word = 0;
    for (int b = 3; b >= 0; --b) word = (word << 8) | static_cast<unsigned char>(raw[i * 4 + b]);
    float value = 0;
    std::memcpy(&value, &word, sizeof value);
    values[i] = value;
    if (!holds(values[i]))
      place.fail("value " + std::to_string(i) + " of the sample file " + shown + ": " + rule + ", got " +
                 value_rules::number_text(values[i]));
  }
  return values;
}

std::string state_name(const std::string& benchmark, const std::optional<Node>& axis_values, bool many_devices, long long device) {
  std::string name = benchmark;
  if (axis_values) {
    axis_values->array();
    for (std::size_t i = 0; i < axis_values->size(); ++i) {
      const Node axis = (*axis_values)[i];
      name += "/" + axis.at("name").string() + ":" + axis.at("value").string();
    }
  }
  if (many_devices) name += "/device:" + std::to_string(device);
  return name;
}

// The cold GPU times of one state: the samples, or failing those the summaries as one figure.
// Returns false when the state has no cold GPU measurement.
bool read_cold_timing(const std::map<std::string, Summary>& summaries, const fs::path& dir, double max_noise, TimingRecord& timing) {
  const auto get = [&](const char* tag) -> const Summary* {
    const auto it = summaries.find(tag);
    return it == summaries.end() ? nullptr : &it->second;
  };
  // No sample file holds more values than the limit of an input file's bytes allows.
  const double most_samples = static_cast<double>(input_limits().max_bytes / sizeof(float));
  const Summary* times_file = get(kSampleTimesFile);
  if (times_file && times_file->has("filename")) {
    timing.samples_s = read_sample_file(dir, times_file->text("filename"), times_file->count("size", most_samples), times_file->node(),
                                        value_rules::is_time, std::string("a time must be ") + value_rules::kTimeRange);
    if (timing.samples_s.empty()) return false;
    timing.summary = summarize(timing.samples_s);
    // The clock each sample ran at, where nvbench measured it (it does unless throttle checks
    // are off): kept samples and frequencies are recorded together, one each.
    if (const Summary* freqs_file = get(kSampleFreqsFile); freqs_file && freqs_file->has("filename")) {
      const std::vector<double> hz = read_sample_file(dir, freqs_file->text("filename"), freqs_file->count("size", most_samples),
                                                      freqs_file->node(), value_rules::is_figure, "a frequency must be finite and >= 0");
      if (hz.size() == timing.samples_s.size()) timing.sm_clock_mhz = median(hz) / 1e6;
    }
  } else {
    const Summary* center = get(kGpuMedian) ? get(kGpuMedian) : get(kGpuMean);
    if (!center) return false;
    const double median_s = center->time();
    timing.samples_s = {median_s};
    SampleSummary& s = timing.summary;
    s.count = get(kSampleCount) ? static_cast<std::size_t>(get(kSampleCount)->count("value", value_rules::kMaxWhole)) : 1;
    s.median = median_s;
    s.mean = get(kGpuMean) ? get(kGpuMean)->time() : median_s;
    s.stddev = get(kGpuNoise) ? get(kGpuNoise)->figure() * s.mean : 0;
    s.min = get(kGpuMin) ? get(kGpuMin)->time() : median_s;
    s.max = get(kGpuMax) ? get(kGpuMax)->time() : median_s;
  }
  // nvbench's stdrel criterion stops at its noise target (--max-noise, 0.5% by default) or at its
  // timeout, which the JSON does not tell apart: the target counts as met when the noise is within it.
  timing.target_rel_stddev = max_noise;
  timing.target_met = timing.summary.rel_stddev() <= max_noise;
  timing.stop_reason = "nvbench";
  if (!(timing.sm_clock_mhz > 0) && get(kClockMean)) timing.sm_clock_mhz = get(kClockMean)->figure() / 1e6;
  timing.gpu_time_s = timing.summary.mean * static_cast<double>(timing.summary.count);
  if (const Summary* walltime = get(kWalltime)) timing.wall_time_s = walltime->figure();
  return true;
}

void read_device(const Node& device, RunContext& context) {
  device.object();
  context.gpu_name = device.at("name").string();
  context.compute_capability = static_cast<int>(device.at("sm_version").integer(0, INT_MAX)) / 10;  // nvbench: 900 for sm_90
  context.sm_count = static_cast<int>(device.at("number_of_sms").integer(0, INT_MAX));
  context.l2_bytes = device.at("l2_cache_size").integer(0);
  context.memory_bytes = device.at("global_memory_size").integer(0);
  context.sm_clock_mhz_default = static_cast<double>(device.at("sm_default_clock_rate").integer(0)) / 1e6;          // Hz
  context.memory_clock_mhz = static_cast<double>(device.at("global_memory_bus_peak_clock_rate").integer(0)) / 1e6;  // Hz
}

}  // namespace

bool is_nvbench_json(const json& doc) {
  return doc.is_object() && doc.contains("meta") && doc["meta"].is_object() && doc["meta"].contains("version") &&
         doc["meta"]["version"].is_object() && doc["meta"]["version"].contains("nvbench") && doc.contains("benchmarks");
}

RunResults parse_nvbench_results(const json& doc, const std::string& path) {
  const Node root(doc, "$", path);
  const Node meta = root.at("meta").object();
  const Node version = meta.at("version").object();
  if (const auto json_version = version.find("json")) {
    const Node major = json_version->at("major");
    if (major.integer() != 1) major.fail("nvbench JSON file version " + std::to_string(major.integer()) + " (kgate reads version 1)");
  }
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");

  RunResults results;
  results.has_kgate_block = false;
  RunContext& context = results.context;
  if (const auto argv = meta.find("argv"))
    for (std::size_t i = 0; i < argv->array().size(); ++i) context.command_line += (i ? " " : "") + (*argv)[i].string();
  context.suite = kNvbenchSuite;
  context.git_commit = "unknown";
  std::string nvbench_version;
  read_opt(version.at("nvbench"), "string", nvbench_version);
  context.extra["format"] = "nvbench " + nvbench_version;
  std::map<long long, Node> devices;
  if (const auto listed = root.find("devices"))
    for (std::size_t i = 0; i < listed->array().size(); ++i) devices.emplace((*listed)[i].at("id").integer(), (*listed)[i]);

  const Node benchmarks = root.at("benchmarks").array();
  std::size_t states_total = 0, from_summaries = 0;
  bool context_read = false;
  std::set<std::string> names;
  for (std::size_t b = 0; b < benchmarks.size(); ++b) {
    const Node bench = benchmarks[b].object();
    const std::string bench_name = bench.at("name").string();
    const auto bench_devices = bench.find("devices");
    const bool many_devices = bench_devices && bench_devices->array().size() > 1;
    const Node states = bench.at("states").array();
    for (std::size_t s = 0; s < states.size(); ++s) {
      const Node state = states[s].object();
      const long long device = state.at("device").integer();
      BenchmarkRecord r;
      const auto axis_values = state.find("axis_values");
      r.name = state_name(bench_name, axis_values, many_devices, device);
      if (!names.insert(r.name).second) (axis_values ? *axis_values : state).fail("duplicate benchmark name \"" + r.name + "\"");
      r.family = bench_name;
      r.shape = r.name.size() > bench_name.size() ? r.name.substr(bench_name.size() + 1) : "";
      r.headline_mode = "cold";
      ++states_total;
      if (const auto it = devices.find(device); !context_read && it != devices.end()) {
        read_device(it->second, context);
        context_read = true;
      }
      bool skipped = false;
      read_opt(state, "is_skipped", skipped);
      if (skipped) {
        r.status = BenchmarkStatus::skipped;
        read_opt(state, "skip_reason", r.error);
        results.benchmarks.push_back(std::move(r));
        continue;
      }
      std::map<std::string, Summary> summaries;
      if (const auto list = state.find("summaries"))
        for (std::size_t i = 0; i < list->array().size(); ++i) summaries.emplace((*list)[i].at("tag").string(), Summary((*list)[i]));
      TimingRecord timing;
      // nvbench 0.1 wrote the noise target per state; later versions keep it with the stopping criterion.
      double max_noise = kDefaultMaxNoise;
      read_opt(state, "max_noise", max_noise);
      if (!read_cold_timing(summaries, dir, max_noise, timing)) {
        r.status = BenchmarkStatus::skipped;
        r.error = "no cold GPU time in nvbench's output (a CPU-only or batch-only measurement)";
        results.benchmarks.push_back(std::move(r));
        continue;
      }
      if (timing.samples_s.size() == 1 && !summaries.contains(kSampleTimesFile)) ++from_summaries;
      if (const auto bw = summaries.find(kBytesPerSecond); bw != summaries.end()) {
        r.bytes_per_s = bw->second.figure();
        r.min_bytes = r.bytes_per_s * timing.summary.mean;  // nvbench: bytes / mean GPU time
        if (!std::isfinite(r.min_bytes)) bw->second.node().fail("bytes per second times the mean time is no finite number of bytes");
      }
      r.cold = std::move(timing);
      results.benchmarks.push_back(std::move(r));
    }
  }
  if (states_total == 0) benchmarks.fail("no nvbench states (no benchmarks ran)");

  results.source_note = from_summaries == 0
                            ? "nvbench JSON: each benchmark's samples are nvbench's cold GPU times (--jsonbin sample files); no "
                              "counters, calibration or environment check"
                            : "time-only, low-confidence comparison: " + std::to_string(from_summaries) + " of " +
                                  std::to_string(states_total) +
                                  " nvbench benchmarks have summaries only (no --jsonbin sample files), so each is one figure, its median "
                                  "cold GPU time, with no significance test: a change beyond the threshold shows as noisy and cannot "
                                  "fail the gate; run nvbench with --jsonbin <file> to record the samples";
  return results;
}

}  // namespace kgate
