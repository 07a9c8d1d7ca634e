#pragma once
// Where a measured kernel sits against the GPU's measured ceilings, and what bounds it:
//
// latency-bound when the roofline's lower bound on the time, max(bytes / memory ceiling,
// flops / compute ceiling), is below the launch floor (the work is smaller than the fixed cost of
// a launch); otherwise memory-bound when % of the memory ceiling ≥ threshold and ≥ % of compute;
// compute-bound when % of compute ≥ threshold and > % of memory; otherwise below-roofs: it
// reaches neither roof (under the threshold of each), so neither the memory system nor the math
// units limit it; the kernel's own code does (too little parallelism, serial work, stalls). Files
// that call it "balanced", its old name, are read as below-roofs.
#include <optional>
#include <string_view>

#include "kgate/results/results.hpp"

namespace kgate {

// All three must be positive: they come from the run's calibration (results.hpp, Calibration).
struct Ceilings {
  double memory_bytes_per_s = 0;
  double compute_flops_per_s = 0;
  double launch_floor_s = 0;
};

struct RooflineOptions {
  double bound_threshold_pct = 50.0;  // in (0, 100]
};

struct RooflinePoint {
  double arithmetic_intensity = 0;  // flops / bytes; 0 when there are no bytes
  double bytes_per_s = 0, flops_per_s = 0;
  double pct_of_memory = 0, pct_of_compute = 0;  // of the ceilings, in percent
  RooflineClass cls = RooflineClass::below_roofs;
};

// `bytes` and `flops` are the minimum the problem needs (not what the kernel happens to move),
// `seconds` its measured time. Throws std::invalid_argument on a time that is not positive, a
// negative or non-finite amount of work, a missing (non-positive) ceiling or a threshold outside
// (0, 100].
RooflinePoint place_on_roofline(double bytes, double flops, double seconds, const Ceilings& ceilings, const RooflineOptions& options = {});

std::string_view to_string(RooflineClass cls);  // "memory-bound", "compute-bound", "latency-bound", "below-roofs"
std::optional<RooflineClass> parse_roofline_class(std::string_view text);

// Places a benchmark record on the roofline from its headline median and the run's measured
// ceilings (the record's memory_ceiling, "copy" or "read", says which bandwidth applies) and
// fills its derived figures. Leaves the record untouched when a ceiling is missing.
void place_record_on_roofline(BenchmarkRecord& record, const Calibration& calibration);

// What a record derives from its run's calibration: its place on the roofline (above) and the
// change it can detect at the calibration's timer resolution (note_detectable_change, detectable.hpp).
// Done when it is measured, when repetitions are pooled into it, and when a merge places a record
// measured without ceilings on the merged run's.
void derive_from_calibration(BenchmarkRecord& record, const Calibration& calibration);

}  // namespace kgate
