#include "kgate/results/nvbench_results.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "kgate/results/results_io.hpp"
#include "kgate/base/statistics.hpp"

namespace kgate {

using nlohmann::json;

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

// Where a value sits, for error messages: "<file>: $.benchmarks[0].states[2].summaries[5]: ...".
struct Place {
  const std::string* source = nullptr;  // the file's path
  std::string path;

  Place operator/(const std::string& key) const { return {source, path + "." + key}; }
  Place operator[](std::size_t index) const { return {source, path + "[" + std::to_string(index) + "]"}; }
  [[noreturn]] void fail(const std::string& problem) const { throw ResultsError(*source + ": " + path + ": " + problem); }
};

const json& member(const json& object, const char* key, const Place& place, json::value_t type) {
  if (!object.is_object()) place.fail("expected an object");
  const auto it = object.find(key);
  if (it == object.end()) (place / key).fail("required field is missing");
  const bool matches = type == json::value_t::number_integer ? it->is_number_integer() : it->type() == type;
  if (!matches) (place / key).fail(std::string("expected ") + json(type).type_name() + ", got " + it->dump());
  return *it;
}

// A summary's named values (its "data" array of {name, type, value}); nvbench writes numbers as
// strings so that int64 values survive JSON's doubles.
class Summary {
 public:
  Summary(const json& node, Place place) : place_(std::move(place)) {
    if (!node.contains("data")) return;
    const Place data_place = place_ / "data";
    const json& data = member(node, "data", place_, json::value_t::array);
    for (std::size_t i = 0; i < data.size(); ++i) {
      const Place entry = data_place[i];
      const std::string name = member(data[i], "name", entry, json::value_t::string).get<std::string>();
      values_.insert_or_assign(name, Value{member(data[i], "type", entry, json::value_t::string).get<std::string>(),
                                           member(data[i], "value", entry, json::value_t::string).get<std::string>(), entry});
    }
  }

  bool has(const std::string& name) const { return values_.contains(name); }

  double number(const std::string& name = "value") const {
    const Value& v = find(name);
    if (v.type != "float64" && v.type != "int64") (v.place / "type").fail("expected float64 or int64 for \"" + name + "\", got " + v.type);
    std::size_t used = 0;
    double out = 0;
    try {
      out = std::stod(v.text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != v.text.size()) (v.place / "value").fail("not a number: \"" + v.text + "\"");
    return out;
  }

  std::string text(const std::string& name) const { return find(name).text; }
  const Place& place() const { return place_; }

 private:
  struct Value {
    std::string type, text;
    Place place;
  };
  const Value& find(const std::string& name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) (place_ / "data").fail("no value named \"" + name + "\"");
    return it->second;
  }
  Place place_;
  std::map<std::string, Value> values_;
};

// A --jsonbin sample file: `count` little-endian float32 values.
std::vector<double> read_sample_file(const std::filesystem::path& file, long long count, const Place& place) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    place.fail("cannot open the sample file " + file.string() +
               " (nvbench --jsonbin writes it beside the JSON file: keep its -bin folders with it)");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (count < 0 || bytes.size() != static_cast<std::size_t>(count) * sizeof(float))
    place.fail(file.string() + " holds " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(count) +
               " float32 values");
  std::vector<double> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t word = 0;
    for (int b = 3; b >= 0; --b) word = (word << 8) | static_cast<unsigned char>(bytes[i * 4 + b]);
    float value = 0;
    std::memcpy(&value, &word, sizeof value);
    values[i] = value;
  }
  return values;
}

std::string state_name(const std::string& benchmark, const json& axis_values, const Place& place, bool many_devices,
                       long long device) {
  std::string name = benchmark;
  if (!axis_values.is_null()) {
    if (!axis_values.is_array()) place.fail("expected an array");
    for (std::size_t i = 0; i < axis_values.size(); ++i)
      name += "/" + member(axis_values[i], "name", place[i], json::value_t::string).get<std::string>() + ":" +
              member(axis_values[i], "value", place[i], json::value_t::string).get<std::string>();
  }
  if (many_devices) name += "/device:" + std::to_string(device);
  return name;
}

// The cold GPU times of one state: the samples, or failing those the summaries as one figure.
// Returns false when the state has no cold GPU measurement.
bool read_cold_timing(const std::map<std::string, Summary>& summaries, const std::filesystem::path& dir,
                      double max_noise, TimingRecord& timing) {
  const auto get = [&](const char* tag) -> const Summary* {
    const auto it = summaries.find(tag);
    return it == summaries.end() ? nullptr : &it->second;
  };
  const Summary* times_file = get(kSampleTimesFile);
  if (times_file && times_file->has("filename")) {
    timing.samples_s = read_sample_file(dir / times_file->text("filename"), static_cast<long long>(times_file->number("size")),
                                        times_file->place());
    if (timing.samples_s.empty()) return false;
    timing.summary = summarize(timing.samples_s);
    // The clock each sample ran at, where nvbench measured it (it does unless throttle checks
    // are off): kept samples and frequencies are recorded together, one each.
    if (const Summary* freqs_file = get(kSampleFreqsFile); freqs_file && freqs_file->has("filename")) {
      const std::vector<double> hz = read_sample_file(dir / freqs_file->text("filename"),
                                                      static_cast<long long>(freqs_file->number("size")),
                                                      freqs_file->place());
      if (hz.size() == timing.samples_s.size()) timing.sm_clock_mhz = median(hz) / 1e6;
    }
  } else {
    const Summary* center = get(kGpuMedian) ? get(kGpuMedian) : get(kGpuMean);
    if (!center) return false;
    const double median_s = center->number();
    timing.samples_s = {median_s};
    SampleSummary& s = timing.summary;
    s.count = get(kSampleCount) ? static_cast<std::size_t>(get(kSampleCount)->number()) : 1;
    s.median = median_s;
    s.mean = get(kGpuMean) ? get(kGpuMean)->number() : median_s;
    s.stddev = get(kGpuNoise) ? get(kGpuNoise)->number() * s.mean : 0;
    s.min = get(kGpuMin) ? get(kGpuMin)->number() : median_s;
    s.max = get(kGpuMax) ? get(kGpuMax)->number() : median_s;
  }
  // nvbench's stdrel criterion stops at its noise target (--max-noise, 0.5% by default) or at its
  // timeout, which the JSON does not tell apart: the target counts as met when the noise is within it.
  timing.target_rel_stddev = max_noise;
  timing.target_met = timing.summary.rel_stddev() <= max_noise;
  timing.stop_reason = "nvbench";
  if (!(timing.sm_clock_mhz > 0) && get(kClockMean)) timing.sm_clock_mhz = get(kClockMean)->number() / 1e6;
  timing.gpu_time_s = timing.summary.mean * static_cast<double>(timing.summary.count);
  if (const Summary* walltime = get(kWalltime)) timing.wall_time_s = walltime->number();
  return true;
}

void read_device(const json& device, const Place& place, RunContext& context) {
  const auto number = [&](const char* key) { return member(device, key, place, json::value_t::number_integer).get<double>(); };
  context.gpu_name = member(device, "name", place, json::value_t::string).get<std::string>();
  context.compute_capability = static_cast<int>(number("sm_version")) / 10;  // nvbench: 900 for sm_90
  context.sm_count = static_cast<int>(number("number_of_sms"));
  context.l2_bytes = static_cast<long long>(number("l2_cache_size"));
  context.memory_bytes = static_cast<long long>(number("global_memory_size"));
  context.sm_clock_mhz_default = number("sm_default_clock_rate") / 1e6;            // Hz
  context.memory_clock_mhz = number("global_memory_bus_peak_clock_rate") / 1e6;   // Hz
}

}  // namespace

bool is_nvbench_json(const json& doc) {
  return doc.is_object() && doc.contains("meta") && doc["meta"].is_object() && doc["meta"].contains("version") &&
         doc["meta"]["version"].is_object() && doc["meta"]["version"].contains("nvbench") && doc.contains("benchmarks");
}

RunResults parse_nvbench_results(const json& doc, const std::string& path) {
  const Place root{&path, "$"};
  const json& version = doc["meta"]["version"];
  const Place version_place = root / "meta" / "version";
  if (version.contains("json")) {
    const long long major = member(version["json"], "major", version_place / "json", json::value_t::number_integer).get<long long>();
    if (major != 1) (version_place / "json" / "major").fail("nvbench JSON file version " + std::to_string(major) + " (kgate reads version 1)");
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();

  RunResults results;
  results.has_kgate_block = false;
  RunContext& context = results.context;
  if (doc["meta"].contains("argv") && doc["meta"]["argv"].is_array())
    for (const json& arg : doc["meta"]["argv"])
      if (arg.is_string()) context.command_line += (context.command_line.empty() ? "" : " ") + arg.get<std::string>();
  context.suite = kNvbenchSuite;
  context.git_commit = "unknown";
  context.extra["format"] = "nvbench " + (version["nvbench"].contains("string") ? version["nvbench"]["string"].get<std::string>() : "");
  std::map<long long, std::pair<const json*, Place>> devices;
  if (doc.contains("devices") && doc["devices"].is_array())
    for (std::size_t i = 0; i < doc["devices"].size(); ++i)
      devices.emplace(member(doc["devices"][i], "id", (root / "devices")[i], json::value_t::number_integer).get<long long>(),
                      std::pair{&doc["devices"][i], (root / "devices")[i]});

  const json& benchmarks = member(doc, "benchmarks", root, json::value_t::array);
  std::size_t states_total = 0, from_summaries = 0;
  bool context_read = false;
  std::set<std::string> names;
  for (std::size_t b = 0; b < benchmarks.size(); ++b) {
    const Place bench_place = (root / "benchmarks")[b];
    const json& bench = benchmarks[b];
    const std::string bench_name = member(bench, "name", bench_place, json::value_t::string).get<std::string>();
    const bool many_devices = bench.contains("devices") && bench["devices"].is_array() && bench["devices"].size() > 1;
    const json& states = member(bench, "states", bench_place, json::value_t::array);
    for (std::size_t s = 0; s < states.size(); ++s) {
      const Place state_place = (bench_place / "states")[s];
      const json& state = states[s];
      const long long device = member(state, "device", state_place, json::value_t::number_integer).get<long long>();
      BenchmarkRecord r;
      r.name = state_name(bench_name, state.contains("axis_values") ? state["axis_values"] : json(), state_place / "axis_values",
                          many_devices, device);
      if (!names.insert(r.name).second) (state_place / "axis_values").fail("duplicate benchmark name \"" + r.name + "\"");
      r.family = bench_name;
      r.shape = r.name.size() > bench_name.size() ? r.name.substr(bench_name.size() + 1) : "";
      r.headline_mode = "cold";
      ++states_total;
      if (!context_read && devices.contains(device)) {
        read_device(*devices.at(device).first, devices.at(device).second, context);
        context_read = true;
      }
      if (state.contains("is_skipped") && state["is_skipped"].is_boolean() && state["is_skipped"].get<bool>()) {
        r.status = BenchmarkStatus::skipped;
        if (state.contains("skip_reason") && state["skip_reason"].is_string()) r.error = state["skip_reason"].get<std::string>();
        results.benchmarks.push_back(std::move(r));
        continue;
      }
      std::map<std::string, Summary> summaries;
      if (state.contains("summaries")) {
        const json& list = member(state, "summaries", state_place, json::value_t::array);
        for (std::size_t i = 0; i < list.size(); ++i) {
          const Place summary_place = (state_place / "summaries")[i];
          summaries.emplace(member(list[i], "tag", summary_place, json::value_t::string).get<std::string>(),
                            Summary(list[i], summary_place));
        }
      }
      TimingRecord timing;
      // nvbench 0.1 wrote the noise target per state; later versions keep it with the stopping criterion.
      double max_noise = kDefaultMaxNoise;
      if (state.contains("max_noise") && state["max_noise"].is_number()) max_noise = state["max_noise"].get<double>();
      if (!read_cold_timing(summaries, dir, max_noise, timing)) {
        r.status = BenchmarkStatus::skipped;
        r.error = "no cold GPU time in nvbench's output (a CPU-only or batch-only measurement)";
        results.benchmarks.push_back(std::move(r));
        continue;
      }
      if (timing.samples_s.size() == 1 && !summaries.contains(kSampleTimesFile)) ++from_summaries;
      if (const auto bw = summaries.find(kBytesPerSecond); bw != summaries.end()) {
        r.bytes_per_s = bw->second.number();
        r.min_bytes = r.bytes_per_s * timing.summary.mean;  // nvbench: bytes / mean GPU time
      }
      r.cold = std::move(timing);
      results.benchmarks.push_back(std::move(r));
    }
  }
  if (states_total == 0) (root / "benchmarks").fail("no nvbench states (no benchmarks ran)");

  results.source_note =
      from_summaries == 0
          ? "nvbench JSON: each benchmark's samples are nvbench's cold GPU times (--jsonbin sample files); no "
            "counters, calibration or environment check"
          : "time-only, low-confidence comparison: " + std::to_string(from_summaries) + " of " + std::to_string(states_total) +
                " nvbench benchmarks have summaries only (no --jsonbin sample files), so each is one figure, its median "
                "cold GPU time, with no significance test: a change beyond the threshold shows as noisy and cannot "
                "fail the gate; run nvbench with --jsonbin <file> to record the samples";
  return results;
}

}  // namespace kgate
