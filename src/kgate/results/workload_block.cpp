// A workload benchmark's block both ways (docs/results-format.md, "Workload block"): the model, its
// steps and the timeline of one traced run, each kernel of it checked against its step and the
// timeline's order.
#include "kgate/results/results_io.hpp"
#include "kgate_blocks.hpp"

namespace kgate::blocks {

using json_node::Node;
using json_node::read_count;
using json_node::read_opt;
using nlohmann::json;

namespace {

std::vector<double> seconds_list(const Node& node) {
  node.array();
  std::vector<double> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(node[i].time());
  return out;
}

}  // namespace

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

WorkloadRecord workload_from_json(const Node& node) {
  node.object();
  WorkloadRecord w;
  w.workload = node.at("workload").string();
  const Node model = node.at("model").object();
  ModelConfig& m = w.model;
  m.name = model.at("name").string();
  read_opt(model, "display_name", m.display_name);
  for (auto [key, field] : {std::pair{"hidden", &m.hidden}, std::pair{"q_heads", &m.q_heads}, std::pair{"kv_heads", &m.kv_heads},
                            std::pair{"head_dim", &m.head_dim}, std::pair{"intermediate", &m.intermediate}, std::pair{"layers", &m.layers},
                            std::pair{"max_position", &m.max_position}}) {
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

}  // namespace kgate::blocks
