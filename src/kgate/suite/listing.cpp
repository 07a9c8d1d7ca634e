#include "kgate/suite/listing.hpp"

#include <iostream>

#include "kgate/results/results_io.hpp"

namespace kgate {
namespace {

using nlohmann::json;

const char* access_name(Access access) {
  switch (access) {
    case Access::input: return "input";
    case Access::output: return "output";
    case Access::inout: return "inout";
    case Access::scratch: return "scratch";
    case Access::zeroed_scratch: return "zeroed_scratch";
  }
  return "?";
}

json tolerance_entry(const Tolerance& t) { return {{"rel_l2", t.rel_l2}, {"max_ulps", t.max_ulps}, {"abs_floor", t.abs_floor}}; }

json shape_entry(const Family& family, const Shape& shape) {
  json dims = json::array();
  for (const Dim& d : shape.dims()) dims.push_back({{"name", d.name}, {"value", d.value}});
  json tensors = json::array();
  for (const TensorSpec& t : family.tensors(shape)) {
    // Only drawn inputs have a distribution: null for outputs, scratch, and tensors the family
    // fills itself (positions, page tables, the RoPE cache).
    const bool drawn = !t.custom_init && (t.access == Access::input || t.access == Access::inout);
    const json distribution = !drawn ? json(nullptr)
                                     : json{{"min_magnitude", t.distribution.min_magnitude},
                                            {"max_magnitude", t.distribution.max_magnitude},
                                            {"symmetric", t.distribution.symmetric}};
    json entry = {{"name", t.name},
                  {"dtype", to_string(t.dtype)},
                  {"count", t.count},
                  {"access", access_name(t.access)},
                  {"distribution", distribution}};
    if (t.tolerance) entry["tolerance"] = tolerance_entry(*t.tolerance);  // a checked tensor's own, else the shape's
    tensors.push_back(std::move(entry));
  }
  return {{"id", shape.id()},
          {"dims", dims},
          {"dtype", to_string(shape.dtype())},
          {"origin", shape.origin()},
          {"min_bytes", family.min_bytes(shape)},
          {"flops", family.flops(shape)},
          {"instance_bytes", instance_bytes(family, shape)},
          {"tolerance", tolerance_entry(family.tolerance(shape))},
          {"tensors", tensors}};
}

json timing_entry(const TimingOptions& t) {
  return {{"timer", to_string(t.timer)},
          {"cupti_kernels", to_string(t.kernel_activity)},
          {"min_samples", t.stopping.min_samples},
          {"min_gpu_time_s", t.stopping.min_gpu_time_s},
          {"max_wall_time_s", t.stopping.max_wall_time_s},
          {"target_rel_stddev", t.stopping.target_rel_stddev},
          {"max_samples", t.stopping.max_samples},
          {"convergence_min_samples", t.stopping.convergence_min_samples},
          {"convergence_max_improvement_per_doubling", StoppingCriterion::kMaxImprovementPerDoubling},
          {"throttle_threshold", t.throttle.threshold},
          {"throttle_backoff_s", t.throttle.backoff_s},
          {"full_clock", t.throttle.full_clock},
          {"rest_ratio", t.throttle.rest_ratio},
          {"l2_flush", to_string(t.flush)},
          {"batch_target_s", t.batch_target_s},
          {"max_batch", t.max_batch},
          {"hot_replay_target_s", t.hot_replay_target_s},
          {"max_graph_launches", t.max_graph_launches},
          {"max_input_copies", kMaxInputCopies},
          {"input_placements", t.input_placements},
          {"placement_budget_bytes", t.placement_budget_bytes}};
}

}  // namespace

json registry_listing(const Registry& registry, const TimingOptions& timing) {
  json families = json::array();
  for (const Family* family : registry.families()) {
    json variants = json::array();
    for (const Variant* v : registry.variants_of(family->name()))
      variants.push_back({{"name", v->info.name}, {"role", to_string(v->info.role)}});
    json shapes = json::array();
    for (const Shape& shape : family->bench_shapes()) shapes.push_back(shape_entry(*family, shape));
    families.push_back({{"name", family->name()},
                        {"description", family->description()},
                        {"headline_mode", family->headline_mode() == TimingMode::hot ? "hot" : "cold"},
                        {"read_dominated", family->read_dominated()},
                        {"variants", variants},
                        {"bench_shapes", shapes}});
  }
  return {{"schema_version", kListingSchemaVersion},
          {"suite", RunContext{}.suite},
          {"timing", timing_entry(timing)},
          {"families", families}};
}

int write_registry_listing(const std::string& destination, const TimingOptions& timing) {
  const Registry& registry = Registry::instance();
  registry.validate();
  const json listing = registry_listing(registry, timing);
  if (destination == "-") {
    std::cout << listing.dump(1) << "\n";
    return std::cout.good() ? 0 : 1;
  }
  write_file_atomically(destination, listing.dump(1) + "\n");
  return 0;
}

}  // namespace kgate
