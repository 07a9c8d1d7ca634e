#include "kgate/results/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kgate/results/detectable.hpp"

namespace kgate {

namespace {

bool positive(double value) { return std::isfinite(value) && value > 0; }

void validate(double bytes, double flops, double seconds, const Ceilings& ceilings, const RooflineOptions& options) {
  if (!positive(seconds)) throw std::invalid_argument("place_on_roofline: time " + std::to_string(seconds) + " s is not positive");
  if (!(std::isfinite(bytes) && bytes >= 0) || !(std::isfinite(flops) && flops >= 0))
    throw std::invalid_argument("place_on_roofline: bytes and flops must be non-negative numbers");
  if (!positive(ceilings.memory_bytes_per_s) || !positive(ceilings.compute_flops_per_s) || !positive(ceilings.launch_floor_s))
    throw std::invalid_argument(
        "place_on_roofline: missing ceiling (memory, compute and launch floor must all be positive; "
        "is the calibration there?)");
  if (!(options.bound_threshold_pct > 0 && options.bound_threshold_pct <= 100))
    throw std::invalid_argument("place_on_roofline: bound_threshold_pct " + std::to_string(options.bound_threshold_pct) +
                                " is outside (0, 100]");
}

RooflineClass classify(const RooflinePoint& point, double lower_bound_s, const Ceilings& ceilings, const RooflineOptions& options) {
  if (lower_bound_s < ceilings.launch_floor_s) return RooflineClass::latency_bound;
  const double threshold = options.bound_threshold_pct;
  if (point.pct_of_memory >= threshold && point.pct_of_memory >= point.pct_of_compute) return RooflineClass::memory_bound;
  if (point.pct_of_compute >= threshold && point.pct_of_compute > point.pct_of_memory) return RooflineClass::compute_bound;
  return RooflineClass::below_roofs;
}

}  // namespace

RooflinePoint place_on_roofline(double bytes, double flops, double seconds, const Ceilings& ceilings, const RooflineOptions& options) {
  validate(bytes, flops, seconds, ceilings, options);
  RooflinePoint point;
  point.arithmetic_intensity = bytes > 0 ? flops / bytes : 0;  // JSON has no infinity
  point.bytes_per_s = bytes / seconds;
  point.flops_per_s = flops / seconds;
  point.pct_of_memory = 100 * point.bytes_per_s / ceilings.memory_bytes_per_s;
  point.pct_of_compute = 100 * point.flops_per_s / ceilings.compute_flops_per_s;
  const double lower_bound_s = std::max(bytes / ceilings.memory_bytes_per_s, flops / ceilings.compute_flops_per_s);
  point.cls = classify(point, lower_bound_s, ceilings, options);
  return point;
}

std::string_view to_string(RooflineClass cls) {
  switch (cls) {
    case RooflineClass::memory_bound: return "memory-bound";
    case RooflineClass::compute_bound: return "compute-bound";
    case RooflineClass::latency_bound: return "latency-bound";
    case RooflineClass::below_roofs: return "below-roofs";
  }
  return "?";
}

std::optional<RooflineClass> parse_roofline_class(std::string_view text) {
  for (RooflineClass c :
       {RooflineClass::memory_bound, RooflineClass::compute_bound, RooflineClass::latency_bound, RooflineClass::below_roofs})
    if (to_string(c) == text) return c;
  // Files written before the class was renamed: "balanced" claimed a balance between the roofs
  // that the rule (neither reached) never checked.
  if (text == "balanced") return RooflineClass::below_roofs;
  return std::nullopt;
}

void place_record_on_roofline(BenchmarkRecord& r, const Calibration& c) {
  const Ceilings ceilings{.memory_bytes_per_s = r.memory_ceiling == "read" ? c.read_bytes_per_s : c.copy_bytes_per_s,
                          .compute_flops_per_s = c.gemm_flops_per_s,
                          .launch_floor_s = c.launch_floor_s};
  const double seconds = r.headline_median_s();
  if (!(ceilings.memory_bytes_per_s > 0 && ceilings.compute_flops_per_s > 0 && ceilings.launch_floor_s > 0 && seconds > 0)) return;
  const RooflinePoint point = place_on_roofline(r.min_bytes, r.flops, seconds, ceilings);
  r.bytes_per_s = point.bytes_per_s;
  r.flops_per_s = point.flops_per_s;
  r.arithmetic_intensity = point.arithmetic_intensity;
  r.pct_of_memory_ceiling = point.pct_of_memory;
  r.pct_of_compute_ceiling = point.pct_of_compute;
  r.roofline = point.cls;
}

void derive_from_calibration(BenchmarkRecord& record, const Calibration& calibration) {
  place_record_on_roofline(record, calibration);
  note_detectable_change(record, calibration.timer_resolution_s);
}

}  // namespace kgate
