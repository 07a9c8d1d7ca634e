// A benchmark's kgate block both ways: its timing modes, kernels, range-profiler metrics, derived
// figures and correctness (docs/results-format.md, "`benchmarks[].kgate`"); its workload's part is in
// workload_block.cpp.
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "kgate/results/results_io.hpp"
#include "kgate/results/roofline.hpp"
#include "kgate_blocks.hpp"

namespace kgate {

using json_node::Node;
using json_node::read_count;
using json_node::read_opt;
using json_node::string_map;
using nlohmann::json;

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

namespace blocks {
namespace {

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
               {{"count", s.count},
                {"median", s.median},
                {"mean", s.mean},
                {"stddev", s.stddev},
                {"min", s.min},
                {"max", s.max},
                {"p10", s.p10},
                {"p90", s.p90}}},
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

void read_dim3(const Node& parent, const char* key, int (&out)[3]) {
  const auto node = parent.find(key);
  if (!node) return;
  node->array();
  if (node->size() != 3) node->fail("expected 3 dimensions, got " + std::to_string(node->size()));
  for (std::size_t i = 0; i < 3; ++i) out[i] = static_cast<int>((*node)[i].integer(0, INT_MAX));
}

BenchmarkStatus status_from(const Node& node) {
  const std::string text = node.string();
  if (text == "ok") return BenchmarkStatus::ok;
  if (text == "failed") return BenchmarkStatus::failed;
  if (text == "skipped") return BenchmarkStatus::skipped;
  node.fail("unknown status \"" + text + "\" (expected ok, failed or skipped)");
}

}  // namespace

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

}  // namespace blocks
}  // namespace kgate
