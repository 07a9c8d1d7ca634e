#include "kgate/results/results_io.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "gbench_rows.hpp"
#include "json_node.hpp"
#include "kgate/results/nvbench_results.hpp"
#include "kgate/results/roofline.hpp"

namespace kgate {

using json_node::Node;
using json_node::read_count;
using json_node::read_opt;
using nlohmann::json;

const TimingRecord* BenchmarkRecord::headline() const {
  const std::optional<TimingRecord>& mode = headline_mode == "hot" ? hot : cold;
  return mode ? &*mode : nullptr;
}

double BenchmarkRecord::headline_median_s() const {
  const TimingRecord* timing = headline();
  return timing ? timing->summary.median : 0;
}

std::string to_string(BenchmarkStatus status) {
  switch (status) {
    case BenchmarkStatus::ok: return "ok";
    case BenchmarkStatus::failed: return "failed";
    case BenchmarkStatus::skipped: return "skipped";
  }
  return "ok";
}

namespace {

// ---------------------------------------------------------------------------------------------
// The kgate blocks.

// CUDA events resolve single-precision milliseconds and a float's 24 bits keep a CUPTI span to
// under a part in 10^7, so samples are stored as floats, each written as the shortest decimal that
// reads back to the same float: a third of the size of a double's 17 digits for a run's hundreds
// of thousands of samples. The reader rounds through float again.
json single_precision_samples(const std::vector<double>& samples) {
  json out = json::array();
  char text[32];
  for (double s : samples) {
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(static_cast<float>(s)));
    out.push_back(std::strtod(text, nullptr));
  }
  return out;
}

json timing_to_json(const TimingRecord& t) {
  const SampleSummary& s = t.summary;
  json out = {{"samples_s", single_precision_samples(t.samples_s)},
          {"summary",
           {{"count", s.count}, {"median", s.median}, {"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min},
            {"max", s.max}, {"p10", s.p10}, {"p90", s.p90}}},
          {"target_met", t.target_met},
          {"target_rel_stddev", t.target_rel_stddev},
          {"stop_reason", t.stop_reason},
          {"throttled_samples", t.throttled_samples},
          {"power_limited_samples", t.power_limited_samples},
          {"rested", t.rested},
          {"sm_clock_mhz", t.sm_clock_mhz},
          {"gpu_time_s", t.gpu_time_s},
          {"wall_time_s", t.wall_time_s},
          {"launches_per_sample", t.launches_per_sample},
          {"input_copies", t.input_copies},
          {"repetition_medians_s", t.repetition_medians_s},
          {"timer", t.timer}};
  // Optional figures, written only when known (a CUPTI-timed record; docs/results-format.md).
  for (const auto& [key, value] : {std::pair{"event_median_s", t.event_median_s}, std::pair{"busy_median_s", t.busy_median_s},
                                   std::pair{"min_detectable_change", t.min_detectable_change}})
    if (value > 0) out[key] = value;
  return out;
}

// The summary in the file is for readers of the file; kgate recomputes it from the samples, so a
// hand-edited sample list cannot disagree with the figures compared.
TimingRecord timing_from_json(const Node& node) {
  node.object();
  TimingRecord t;
  const Node samples = node.at("samples_s").array();
  for (std::size_t i = 0; i < samples.size(); ++i) t.samples_s.push_back(static_cast<float>(samples[i].time()));
  if (!t.samples_s.empty()) t.summary = summarize(t.samples_s);
  read_opt(node, "target_met", t.target_met);
  read_opt(node, "target_rel_stddev", t.target_rel_stddev);
  read_opt(node, "stop_reason", t.stop_reason);
  read_opt(node, "throttled_samples", t.throttled_samples);
  read_opt(node, "power_limited_samples", t.power_limited_samples);
  read_opt(node, "rested", t.rested);
  read_opt(node, "sm_clock_mhz", t.sm_clock_mhz);
  read_opt(node, "gpu_time_s", t.gpu_time_s);
  read_opt(node, "wall_time_s", t.wall_time_s);
  read_opt(node, "launches_per_sample", t.launches_per_sample);
  read_opt(node, "input_copies", t.input_copies);
  if (node.has("repetition_medians_s")) {
    const Node medians = node.at("repetition_medians_s").array();
    for (std::size_t i = 0; i < medians.size(); ++i) t.repetition_medians_s.push_back(medians[i].time());
  }
  read_opt(node, "timer", t.timer);
  if (t.timer != "cupti" && t.timer != "events" && t.timer != "cpu") node.at("timer").fail("must be \"cupti\", \"events\" or \"cpu\"");
  if (node.has("event_median_s")) t.event_median_s = node.at("event_median_s").time();
  if (node.has("busy_median_s")) t.busy_median_s = node.at("busy_median_s").time();
  read_opt(node, "min_detectable_change", t.min_detectable_change);
  if (t.throttled_samples < 0) node.at("throttled_samples").fail("must be >= 0");
  if (t.power_limited_samples < 0) node.at("power_limited_samples").fail("must be >= 0");
  if (t.launches_per_sample < 1) node.at("launches_per_sample").fail("must be >= 1");
  if (t.input_copies < 1) node.at("input_copies").fail("must be >= 1");
  return t;
}

}  // namespace

json kernel_to_json(const KernelRecord& k) {
  return {{"name", k.name},
          {"demangled", k.demangled},
          {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
          {"block", {k.block[0], k.block[1], k.block[2]}},
          {"registers_per_thread", k.registers_per_thread},
          {"static_shared_bytes", k.static_shared_bytes},
          {"dynamic_shared_bytes", k.dynamic_shared_bytes},
          {"duration_s", k.duration_s},
          {"launches", k.launches}};
}

namespace {

void read_dim3(const Node& parent, const char* key, int (&out)[3]) {
  const auto node = parent.find(key);
  if (!node) return;
  node->array();
  if (node->size() != 3) node->fail("expected 3 dimensions, got " + std::to_string(node->size()));
  for (std::size_t i = 0; i < 3; ++i) out[i] = static_cast<int>((*node)[i].integer(0, INT_MAX));
}

KernelRecord kernel_from_json(const Node& node) {
  node.object();
  KernelRecord k;
  k.name = node.at("name").string();
  read_opt(node, "demangled", k.demangled);
  read_dim3(node, "grid", k.grid);
  read_dim3(node, "block", k.block);
  read_count(node, "registers_per_thread", k.registers_per_thread);
  read_count(node, "static_shared_bytes", k.static_shared_bytes);
  read_count(node, "dynamic_shared_bytes", k.dynamic_shared_bytes);
  read_opt(node, "duration_s", k.duration_s);
  read_count(node, "launches", k.launches);
  return k;
}

json metrics_to_json(const std::map<std::string, double>& metrics) {
  json out = json::object();
  // JSON has no NaN: a metric the profiler could not compute is left out rather than written as null.
  for (const auto& [metric, value] : metrics)
    if (std::isfinite(value)) out[metric] = value;
  return out;
}

std::map<std::string, double> metrics_from_json(const Node& node) {
  node.object();
  std::map<std::string, double> out;
  for (const auto& [metric, value] : node.value().items()) out[metric] = node.child_path(metric, value).number();
  return out;
}

json workload_to_json(const WorkloadRecord& w) {
  const ModelConfig& m = w.model;
  json block = {{"workload", w.workload},
                {"model",
                 {{"name", m.name},
                  {"display_name", m.display_name},
                  {"hidden", m.hidden},
                  {"q_heads", m.q_heads},
                  {"kv_heads", m.kv_heads},
                  {"head_dim", m.head_dim},
                  {"intermediate", m.intermediate},
                  {"layers", m.layers},
                  {"max_position", m.max_position}}},
                {"tokens", w.tokens},
                {"steps", json::array()},
                {"traced_event_s", w.traced_event_s},
                {"traced_span_s", w.traced_span_s},
                {"timeline", json::array()},
                {"timeline_unavailable", w.timeline_unavailable}};
  for (const WorkloadStepRecord& s : w.steps)
    block["steps"].push_back({{"label", s.label},
                              {"family", s.family},
                              {"variant", s.variant},
                              {"shape", s.shape},
                              {"min_bytes", s.min_bytes},
                              {"flops", s.flops},
                              {"memory_ceiling", s.memory_ceiling}});
  for (const TimelineKernel& k : w.timeline) {
    json entry = kernel_to_json(k.kernel);
    entry["step"] = k.step;
    entry["start_s"] = k.start_s;
    entry["end_s"] = k.end_s;
    entry["metrics"] = metrics_to_json(k.metrics);
    block["timeline"].push_back(std::move(entry));
  }
  return block;
}

std::vector<double> seconds_list(const Node& node) {
  node.array();
  std::vector<double> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(node[i].time());
  return out;
}

WorkloadRecord workload_from_json(const Node& node) {
  node.object();
  WorkloadRecord w;
  w.workload = node.at("workload").string();
  const Node model = node.at("model").object();
  ModelConfig& m = w.model;
  m.name = model.at("name").string();
  read_opt(model, "display_name", m.display_name);
  for (auto [key, field] : {std::pair{"hidden", &m.hidden}, std::pair{"q_heads", &m.q_heads}, std::pair{"kv_heads", &m.kv_heads},
                            std::pair{"head_dim", &m.head_dim}, std::pair{"intermediate", &m.intermediate},
                            std::pair{"layers", &m.layers}, std::pair{"max_position", &m.max_position}}) {
    long long value = 0;
    read_count(model, key, value);
    *field = value;
  }
  long long tokens = 0;
  read_count(node, "tokens", tokens);
  w.tokens = tokens;
  if (auto steps = node.find("steps")) {
    steps->array();
    for (std::size_t i = 0; i < steps->size(); ++i) {
      const Node step = (*steps)[i].object();
      WorkloadStepRecord& s = w.steps.emplace_back();
      s.label = step.at("label").string();
      s.family = step.at("family").string();
      read_opt(step, "variant", s.variant);
      read_opt(step, "shape", s.shape);
      read_opt(step, "min_bytes", s.min_bytes);
      read_opt(step, "flops", s.flops);
      read_opt(step, "memory_ceiling", s.memory_ceiling);
    }
  }
  if (auto events = node.find("traced_event_s")) w.traced_event_s = seconds_list(*events);
  if (auto spans = node.find("traced_span_s")) w.traced_span_s = seconds_list(*spans);
  if (auto timeline = node.find("timeline")) {
    timeline->array();
    double previous_start = 0;
    for (std::size_t i = 0; i < timeline->size(); ++i) {
      const Node entry = (*timeline)[i];
      TimelineKernel& k = w.timeline.emplace_back();
      k.kernel = kernel_from_json(entry);
      const long long step = entry.at("step").integer();
      if (step < 0 || static_cast<std::size_t>(step) >= w.steps.size())
        entry.at("step").fail("names no step (the workload has " + std::to_string(w.steps.size()) + ")");
      k.step = static_cast<std::size_t>(step);
      k.start_s = entry.at("start_s").non_negative();
      k.end_s = entry.at("end_s").non_negative();
      if (k.end_s < k.start_s) entry.at("end_s").fail("a kernel cannot end before it starts");
      if (k.start_s < previous_start) entry.at("start_s").fail("the timeline is not in start order");
      previous_start = k.start_s;
      if (auto metrics = entry.find("metrics")) k.metrics = metrics_from_json(*metrics);
    }
  }
  read_opt(node, "timeline_unavailable", w.timeline_unavailable);
  return w;
}

json benchmark_block(const BenchmarkRecord& r) {
  json block = {{"name", r.name},
                {"family", r.family},
                {"variant", r.variant},
                {"shape", r.shape},
                {"role", r.role},
                {"status", to_string(r.status)},
                {"error", r.error},
                {"min_bytes", r.min_bytes},
                {"flops", r.flops},
                {"headline_mode", r.headline_mode},
                {"first_launch_s", r.first_launch_s},
                {"wall_time_s", r.wall_time_s},
                {"derived",
                 {{"bytes_per_s", r.bytes_per_s},
                  {"flops_per_s", r.flops_per_s},
                  {"arithmetic_intensity", r.arithmetic_intensity},
                  {"pct_of_memory_ceiling", r.pct_of_memory_ceiling},
                  {"pct_of_compute_ceiling", r.pct_of_compute_ceiling},
                  {"memory_ceiling", r.memory_ceiling},
                  {"roofline", std::string(to_string(r.roofline))}}},
                {"kernels", json::array()},
                {"metrics", json::object()},
                {"metrics_unavailable", r.metrics_unavailable},
                {"correct", r.correct ? json(*r.correct) : json(nullptr)},
                {"correctness_detail", r.correctness_detail}};
  if (r.cold) block["cold"] = timing_to_json(*r.cold);
  if (r.hot) block["hot"] = timing_to_json(*r.hot);
  for (const KernelRecord& k : r.kernels) block["kernels"].push_back(kernel_to_json(k));
  block["metrics"] = metrics_to_json(r.metrics);
  if (r.workload) block["workload"] = workload_to_json(*r.workload);
  if (!r.follows.empty()) block["follows"] = r.follows;
  if (!r.provenance.empty()) block["provenance"] = r.provenance;
  return block;
}

BenchmarkStatus status_from(const Node& node) {
  const std::string text = node.string();
  if (text == "ok") return BenchmarkStatus::ok;
  if (text == "failed") return BenchmarkStatus::failed;
  if (text == "skipped") return BenchmarkStatus::skipped;
  node.fail("unknown status \"" + text + "\" (expected ok, failed or skipped)");
}

std::map<std::string, std::string> string_map(const Node& node) {
  node.object();
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : node.value().items()) out[key] = node.child_path(key, value).string();
  return out;
}

BenchmarkRecord benchmark_from_block(const Node& block, const std::string& gbench_name) {
  block.object();
  BenchmarkRecord r;
  r.name = gbench_name;
  read_opt(block, "name", r.name);
  if (r.name.empty()) block.at("name").fail("benchmark name is empty");
  read_opt(block, "family", r.family);
  read_opt(block, "variant", r.variant);
  read_opt(block, "shape", r.shape);
  read_opt(block, "role", r.role);
  read_opt(block, "follows", r.follows);
  r.status = status_from(block.at("status"));
  read_opt(block, "error", r.error);
  read_opt(block, "min_bytes", r.min_bytes);
  read_opt(block, "flops", r.flops);
  read_opt(block, "headline_mode", r.headline_mode);
  if (r.headline_mode != "cold" && r.headline_mode != "hot")
    block.at("headline_mode").fail("expected \"cold\" or \"hot\", got \"" + r.headline_mode + "\"");
  if (auto cold = block.find("cold")) r.cold = timing_from_json(*cold);
  if (auto hot = block.find("hot")) r.hot = timing_from_json(*hot);
  if (r.status == BenchmarkStatus::ok) {
    const TimingRecord* headline = r.headline();
    if (!headline) block.at(r.headline_mode).fail("the headline mode of a successful benchmark has no timing record");
    if (headline->samples_s.empty()) block.at(r.headline_mode).at("samples_s").fail("a successful benchmark needs at least one sample");
  }
  read_opt(block, "first_launch_s", r.first_launch_s);
  read_opt(block, "wall_time_s", r.wall_time_s);
  if (auto derived = block.find("derived")) {
    derived->object();
    read_opt(*derived, "bytes_per_s", r.bytes_per_s);
    read_opt(*derived, "flops_per_s", r.flops_per_s);
    read_opt(*derived, "arithmetic_intensity", r.arithmetic_intensity);
    read_opt(*derived, "pct_of_memory_ceiling", r.pct_of_memory_ceiling);
    read_opt(*derived, "pct_of_compute_ceiling", r.pct_of_compute_ceiling);
    read_opt(*derived, "memory_ceiling", r.memory_ceiling);
    if (auto roofline = derived->find("roofline")) {
      const auto parsed = parse_roofline_class(roofline->string());
      if (!parsed) roofline->fail("unknown roofline class \"" + roofline->string() + "\"");
      r.roofline = *parsed;
    }
  }
  if (auto kernels = block.find("kernels")) {
    kernels->array();
    for (std::size_t i = 0; i < kernels->size(); ++i) r.kernels.push_back(kernel_from_json((*kernels)[i]));
  }
  if (auto metrics = block.find("metrics")) r.metrics = metrics_from_json(*metrics);
  if (auto workload = block.find("workload")) r.workload = workload_from_json(*workload);
  read_opt(block, "metrics_unavailable", r.metrics_unavailable);
  if (auto correct = block.find("correct"); correct && !correct->value().is_null()) r.correct = correct->boolean();
  read_opt(block, "correctness_detail", r.correctness_detail);
  if (auto provenance = block.find("provenance")) r.provenance = string_map(*provenance);
  return r;
}

json context_block(const RunContext& c) {
  const Calibration& cal = c.calibration;
  return {{"schema_version", c.schema_version},
          {"suite", c.suite},
          {"gpu",
           {{"name", c.gpu_name},
            {"uuid", c.gpu_uuid},
            {"compute_capability", c.compute_capability},
            {"sm_count", c.sm_count},
            {"l2_bytes", c.l2_bytes},
            {"memory_bytes", c.memory_bytes},
            {"driver_version", c.driver_version},
            {"runtime_version", c.runtime_version},
            {"sm_clock_mhz_default", c.sm_clock_mhz_default},
            {"memory_clock_mhz", c.memory_clock_mhz}}},
          {"calibration",
           {{"copy_bytes_per_s", cal.copy_bytes_per_s},
            {"read_bytes_per_s", cal.read_bytes_per_s},
            {"gemm_flops_per_s", cal.gemm_flops_per_s},
            {"launch_floor_s", cal.launch_floor_s},
            {"graph_floor_s", cal.graph_floor_s},
            {"timer_resolution_s", cal.timer_resolution_s},
            {"datasheet_bytes_per_s", cal.datasheet_bytes_per_s},
            {"datasheet_sm_clock_mhz", cal.datasheet_sm_clock_mhz},
            {"cached_from", cal.cached_from}}},
          {"provenance",
           {{"git_commit", c.git_commit},
            {"git_dirty", c.git_dirty},
            {"build_type", c.build_type},
            {"cuda_architectures", c.cuda_architectures},
            {"host", c.host},
            {"date", c.date},
            {"command_line", c.command_line}}},
          {"extra", c.extra}};
}

RunContext context_from_block(const Node& block) {
  block.object();
  RunContext c;
  const Node version = block.at("schema_version");
  const long long schema = version.integer();
  if (schema > kResultsSchemaVersion)
    version.fail("schema version " + std::to_string(schema) + " is newer than this kgate reads (" +
                 std::to_string(kResultsSchemaVersion) + "); update kgate");
  if (schema < 1) version.fail("schema version must be >= 1, got " + std::to_string(schema));
  c.schema_version = static_cast<int>(schema);
  read_opt(block, "suite", c.suite);
  const Node gpu = block.at("gpu").object();
  c.gpu_name = gpu.at("name").string();
  read_opt(gpu, "uuid", c.gpu_uuid);
  read_count(gpu, "compute_capability", c.compute_capability);
  read_count(gpu, "sm_count", c.sm_count);
  read_count(gpu, "l2_bytes", c.l2_bytes);
  read_count(gpu, "memory_bytes", c.memory_bytes);
  read_count(gpu, "driver_version", c.driver_version);
  read_count(gpu, "runtime_version", c.runtime_version);
  read_opt(gpu, "sm_clock_mhz_default", c.sm_clock_mhz_default);
  read_opt(gpu, "memory_clock_mhz", c.memory_clock_mhz);
  if (auto cal_node = block.find("calibration")) {
    const Node cal = cal_node->object();
    Calibration& k = c.calibration;
    read_opt(cal, "copy_bytes_per_s", k.copy_bytes_per_s);
    read_opt(cal, "read_bytes_per_s", k.read_bytes_per_s);
    read_opt(cal, "gemm_flops_per_s", k.gemm_flops_per_s);
    read_opt(cal, "launch_floor_s", k.launch_floor_s);
    read_opt(cal, "graph_floor_s", k.graph_floor_s);
    read_opt(cal, "timer_resolution_s", k.timer_resolution_s);
    read_opt(cal, "datasheet_bytes_per_s", k.datasheet_bytes_per_s);
    read_opt(cal, "datasheet_sm_clock_mhz", k.datasheet_sm_clock_mhz);
    read_opt(cal, "cached_from", k.cached_from);
  }
  if (auto prov_node = block.find("provenance")) {
    const Node prov = prov_node->object();
    read_opt(prov, "git_commit", c.git_commit);
    read_opt(prov, "git_dirty", c.git_dirty);
    read_opt(prov, "build_type", c.build_type);
    read_opt(prov, "cuda_architectures", c.cuda_architectures);
    read_opt(prov, "host", c.host);
    read_opt(prov, "date", c.date);
    read_opt(prov, "command_line", c.command_line);
  }
  if (auto extra = block.find("extra")) c.extra = string_map(*extra);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Google Benchmark's side of the document.

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

json gbench_context(const RunContext& c) {
  const std::string executable = c.command_line.substr(0, c.command_line.find(' '));
  // num_cpus and mhz_per_cpu describe the host that ran the benchmarks; a document kgate writes
  // itself (merge, baseline) may be written elsewhere, so it does not claim them: 0 = unknown.
  return {{"date", c.date},
          {"host_name", c.host},
          {"executable", executable.empty() ? "kgate" : executable},
          {"num_cpus", 0},
          {"mhz_per_cpu", 0},
          {"cpu_scaling_enabled", false},
          {"caches", json::array()},
          {"library_build_type", c.build_type.empty() ? "release" : lowercase(c.build_type)},
          {"json_schema_version", 1},
          {"kgate", context_block(c)}};
}

json gbench_entry(const BenchmarkRecord& r, int family_index, int instance_index) {
  const TimingRecord* timing = r.headline();
  const bool ran = r.status == BenchmarkStatus::ok && timing;
  const double median_us = ran ? r.headline_median_s() * 1e6 : 0.0;
  json entry = {{"name", r.name},
                {"family_index", family_index},
                {"per_family_instance_index", instance_index},
                {"run_name", r.name},
                {"run_type", "iteration"},
                {"repetitions", 1},
                {"repetition_index", 0},
                {"threads", 1},
                {"iterations", ran ? timing->samples_s.size() : 0},
                {"real_time", median_us},
                {"cpu_time", median_us},
                {"time_unit", "us"}};
  if (r.status != BenchmarkStatus::ok) {
    // As Google Benchmark >= 1.8 writes them: an error is flagged, a skip carries only its message.
    entry["error_occurred"] = r.status == BenchmarkStatus::failed;
    entry["error_message"] = r.error;
  }
  if (ran) {
    // Flat numeric keys, as Google Benchmark writes user counters, and the same ones kgate_bench
    // gives Google Benchmark (docs/results-format.md, "Counters").
    entry["GB/s"] = r.bytes_per_s / 1e9;
    entry["TFLOP/s"] = r.flops_per_s / 1e12;
    entry["%mem_roof"] = r.pct_of_memory_ceiling;
    entry["rsd%"] = timing->summary.rel_stddev() * 100;
    entry["MHz"] = timing->sm_clock_mhz;
  }
  entry["kgate"] = benchmark_block(r);
  return entry;
}


}  // namespace

// -----------------------------------------------------------------------------------------------

json to_json(const RunResults& results) {
  json doc = {{"context", gbench_context(results.context)}, {"benchmarks", json::array()}};
  std::map<std::string, int> family_index, instances;
  for (const BenchmarkRecord& r : results.benchmarks) {
    const auto [it, inserted] = family_index.try_emplace(r.family, static_cast<int>(family_index.size()));
    doc["benchmarks"].push_back(gbench_entry(r, it->second, instances[r.family]++));
  }
  return doc;
}

void attach_kgate_blocks(json& gbench_doc, const RunResults& results) {
  const Node root(gbench_doc, "$", "Google Benchmark output");
  root.object();
  const Node list = root.at("benchmarks").array();
  root.at("context").object();
  gbench_doc["context"]["kgate"] = context_block(results.context);

  std::map<std::string, std::size_t> first_row;  // kgate name -> first iteration row of that run
  int families = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Node entry = list[i];
    if (auto f = entry.find("family_index")) families = std::max(families, static_cast<int>(f->integer(0, INT_MAX - 1)) + 1);
    if (gbench::is_aggregate(entry)) continue;
    first_row.try_emplace(gbench::without_suffixes(entry.at("name").string()), i);
  }
  struct Indices {
    int family, next_instance;
  };
  std::map<std::string, Indices> unmatched;  // kgate family -> its Google Benchmark indices
  for (const BenchmarkRecord& r : results.benchmarks) {
    if (const auto row = first_row.find(r.name); row != first_row.end()) {
      gbench_doc["benchmarks"][row->second]["kgate"] = benchmark_block(r);
      continue;
    }
    // No Google Benchmark row: the variant never reached the timing loop. Such records form
    // families of their own after Google Benchmark's, so the indices never collide.
    auto& indices = unmatched.try_emplace(r.family, Indices{families + static_cast<int>(unmatched.size()), 0}).first->second;
    gbench_doc["benchmarks"].push_back(gbench_entry(r, indices.family, indices.next_instance++));
  }
}

RunResults parse_results(const json& doc, const std::string& source) {
  if (is_nvbench_json(doc)) return parse_nvbench_results(doc, source);
  const Node root(doc, "$", source);
  if (!doc.is_object()) root.fail("expected a JSON object with \"context\" and \"benchmarks\", got " + std::string(doc.type_name()));
  if (!doc.contains("benchmarks"))
    root.fail("not a benchmark results file: no \"benchmarks\" array (expected Google Benchmark or kgate JSON)");
  const Node list = root.at("benchmarks").array();
  if (list.size() == 0) list.fail("no benchmarks");

  RunResults results;
  const std::optional<Node> context = root.find("context");
  if (context) context->object();
  const std::optional<Node> kgate_context = context ? context->find("kgate") : std::nullopt;
  results.has_kgate_block = kgate_context.has_value();
  if (kgate_context) results.context = context_from_block(*kgate_context);
  else gbench::read_context(context, results.context);

  std::map<std::string, std::string> kgate_paths;  // name -> JSON path, for duplicate messages
  gbench::Runs gbench_runs;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Node entry = list[i].object();
    const std::string gbench_name = entry.at("name").string();
    if (auto block = entry.find("kgate")) {
      if (!kgate_context) root.at("context").at("kgate", " (benchmarks carry kgate blocks)");
      BenchmarkRecord record = benchmark_from_block(*block, gbench::without_suffixes(gbench_name));
      const std::string path = "$.benchmarks[" + std::to_string(i) + "]";
      if (const auto [it, inserted] = kgate_paths.try_emplace(record.name, path); !inserted)
        entry.at("kgate").fail("duplicate benchmark name \"" + record.name + "\" (also at " + it->second + ")");
      results.benchmarks.push_back(std::move(record));
      continue;
    }
    if (!gbench::is_aggregate(entry)) gbench_runs.add(entry);
  }
  // Rows without a kgate block in a kgate file are the other repetitions of a run kgate recorded
  // (its block holds all the samples), or benchmarks kgate knows nothing about (time only).
  for (BenchmarkRecord& record : gbench_runs.records([&](const std::string& name) { return kgate_paths.contains(name); }))
    results.benchmarks.push_back(std::move(record));
  if (results.benchmarks.empty())
    list.fail("only aggregate rows (mean, median, ...), no iteration rows: run without --benchmark_report_aggregates_only");
  return results;
}

RunResults read_results_file(const std::string& path) { return parse_results(read_json_file(path), path); }

// Indented for people and diffs, except that each samples array stays on one line: one line per
// sample would make most of a run's file indentation. Invalid UTF-8 (a driver message, a mangled
// name) is replaced rather than refused: the file must be written.
void write_results_file(const std::string& path, const json& doc) {
  constexpr auto kReplace = json::error_handler_t::replace;
  json shaped = doc;
  std::vector<std::string> arrays;
  if (shaped.contains("benchmarks") && shaped["benchmarks"].is_array()) {
    for (json& benchmark : shaped["benchmarks"]) {
      if (!benchmark.is_object() || !benchmark.contains("kgate")) continue;
      for (const char* mode : {"cold", "hot"}) {
        json& block = benchmark["kgate"];
        if (!block.is_object() || !block.contains(mode) || !block[mode].is_object()) continue;
        json& timing = block[mode];
        if (!timing.contains("samples_s")) continue;
        arrays.push_back(timing["samples_s"].dump(-1, ' ', false, kReplace));
        timing["samples_s"] = "\x01kgate-samples-" + std::to_string(arrays.size() - 1) + "\x01";
      }
    }
  }
  std::string text = shaped.dump(2, ' ', false, kReplace);
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    // dump() escapes the control character as \u0001 inside the quoted placeholder.
    const std::string placeholder = "\"\\u0001kgate-samples-" + std::to_string(i) + "\\u0001\"";
    const std::size_t at = text.find(placeholder);
    if (at != std::string::npos) text.replace(at, placeholder.size(), arrays[i]);
  }
  write_file_atomically(path, text + "\n");
}

}  // namespace kgate
