// The context's kgate block both ways (docs/results-format.md, "`context.kgate`"): the schema
// version, the GPU, the run's calibration, its provenance, the harness's wall time per phase and
// the free-form extra entries.
#include <charconv>
#include <string>
#include <string_view>

#include "kgate_blocks.hpp"
#include "value_rules.hpp"

namespace kgate::blocks {

using json_node::Node;
using json_node::read_count;
using json_node::read_opt;
using json_node::string_map;
using nlohmann::json;

namespace {

PhaseSeconds phases_from_json(const Node& node) {
  node.object();
  PhaseSeconds out;
  for (const auto& [phase, seconds] : node.value().items()) out[phase] = node.child_path(phase, seconds).non_negative();
  return out;
}

// [{"phase": "build", "seconds": 61.2}, ...]: each phase named once.
std::vector<JobPhase> job_phases_from_json(const Node& node) {
  std::vector<JobPhase> out;
  const Node list = node.array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Node entry = list[i].object();
    JobPhase phase{entry.at("phase").string(), entry.at("seconds").non_negative()};
    if (!is_job_phase_name(phase.phase))
      entry.at("phase").fail("expected a phase's name (" + std::string(kJobPhaseNameRule) + "), got " +
                             json_node::describe_value(entry.at("phase").value()));
    for (const JobPhase& earlier : out)
      if (earlier.phase == phase.phase) entry.at("phase").fail("phase \"" + phase.phase + "\" is named twice");
    out.push_back(std::move(phase));
  }
  return out;
}

// A file written before wall_s was a field of its own holds each phase as an extra string
// "wall_s.<phase>" (std::to_string's "%f"): they move into wall_s, so that an older run reads as a
// newer one does and is written back the newer way.
void move_extra_phases(const Node& extra, RunContext& c) {
  constexpr std::string_view kPrefix = "wall_s.";
  for (auto it = c.extra.begin(); it != c.extra.end();) {
    if (!it->first.starts_with(kPrefix)) {
      ++it;
      continue;
    }
    const Node entry = extra.at(it->first);
    const std::string phase = it->first.substr(kPrefix.size());
    const std::string& text = it->second;
    double seconds = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (error != std::errc() || end != text.data() + text.size() || !value_rules::is_figure(seconds))
      entry.fail("expected the seconds of wall-time phase \"" + phase + "\" (a number >= 0), got " +
                 json_node::describe_value(entry.value()));
    if (c.wall_s.contains(phase)) entry.fail("wall-time phase \"" + phase + "\" is also in wall_s (a file has one or the other)");
    c.wall_s[phase] = seconds;
    it = c.extra.erase(it);
  }
}

}  // namespace

json context_block(const RunContext& c) {
  const Calibration& cal = c.calibration;
  json block = {{"schema_version", c.schema_version},
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
  if (!c.wall_s.empty()) block["wall_s"] = c.wall_s;
  for (const JobPhase& p : c.job_s) block["job_s"].push_back({{"phase", p.phase}, {"seconds", p.seconds}});
  return block;
}

RunContext context_from_block(const Node& block) {
  block.object();
  RunContext c;
  const Node version = block.at("schema_version");
  const long long schema = version.integer();
  if (schema > kResultsSchemaVersion)
    version.fail("schema version " + std::to_string(schema) + " is newer than this kgate reads (" + std::to_string(kResultsSchemaVersion) +
                 "); update kgate");
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
  if (auto wall = block.find("wall_s")) c.wall_s = phases_from_json(*wall);
  if (auto job = block.find("job_s")) c.job_s = job_phases_from_json(*job);
  if (auto extra = block.find("extra")) {
    c.extra = string_map(*extra);
    move_extra_phases(*extra, c);
  }
  return c;
}

}  // namespace kgate::blocks
