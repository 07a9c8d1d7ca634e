#pragma once
// A benchmark's launch configuration and CUPTI counters, baseline against new, row by row: the
// drill-down panel's table and the summary's chips read the same rows.
#include <string>
#include <vector>

#include "kgate/results/results.hpp"

namespace kgate::report {

struct CounterRow {
  enum class Kind { kernel, launch, metric };
  Kind kind = Kind::launch;
  std::string name{};                 // "registers per thread", or a metric's CUPTI name
  std::string chip{};                 // its short name in a chip: "registers", "DRAM throughput"
  std::string baseline{}, current{};  // the values as printed (plain text; a kernel's short name)
  std::string change{};               // "+8.00 points", "−17.2%"; empty where the values print alike or have no ratio
  bool material = false;              // a change the gate would explain (see counter_rows)
  double size = 0;                    // how large the change is, to order rows: a fraction, or points / 100
};

// The dominant kernel's launch shape (kernel, grid, block, registers, shared memory per block) and
// the launches per call, then every metric present on both sides: the material changes first,
// largest first, then the rest by name. A launch row is material when it differs at all; a metric
// when the gate's notes would name it (material_metric_change, compare.hpp). Empty when neither
// the kernels nor the metrics were recorded on both sides.
std::vector<CounterRow> counter_rows(const BenchmarkRecord& baseline, const BenchmarkRecord& current);

// "registers 128 → 106": a row in a chip.
std::string counter_chip(const CounterRow& row);

}  // namespace kgate::report
