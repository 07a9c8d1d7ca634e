#pragma once
// A benchmark whose code under test is not a registered C++ variant but a callable a front door
// hands the suite: a Python variant, through the binding (python/engine/bind_suite.cpp). The suite
// plans, measures and records it as it does a variant (measure_instance); only the instance, its
// inputs, launch and check, comes from the front door.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "kgate/core/check.hpp"
#include "kgate/core/family.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/measure/timing.hpp"
#include "kgate/suite/measure_benchmark.hpp"

namespace kgate {

// Entries of a record's provenance (BenchmarkRecord::provenance): what the code under test ran
// with, e.g. {"library": "torch 2.11.0", "call": "F.rms_norm(x, (n,), weight)", "compile_s": "1.52"}.
using Provenance = std::map<std::string, std::string>;

// One instance of a callable benchmark, made by its front door.
struct CallableInstance {
  std::size_t bytes_per_copy = 0;  // device bytes of one input copy, inputs and outputs
  // Called once, before the first launch: keeps copy 0's reference when `keep_reference` (the
  // benchmark will be checked), then does the callable's own untimed preparation (a compile for
  // this shape). Returns what it adds to the record's provenance (the compile's time).
  std::function<Provenance(bool keep_reference)> prepare;
  std::function<void(int copies)> make_copies;  // grows the instance to `copies` input copies (it holds 1)
  CopyLaunch launch;                            // runs the callable on input copy `copy`, on `stream`
  // Copy 0's outputs against the reference. Called once, after the first launch; outputs are
  // poisoned before it.
  std::function<InstanceCheck()> check;
};

struct CallableBenchmark {
  std::string name;  // "<family>/<variant>/<shape id>", as benchmark_name() makes them
  std::string family, variant, shape, role = "candidate", follows;
  double min_bytes = 0, flops = 0;
  TimingMode headline = TimingMode::cold;
  bool read_dominated = false;
  // Checked whatever its instance's size, where a benchmark larger than the suite's check limit is
  // not (a Python family's bench shape that is also one of its test shapes).
  bool checked_at_any_size = false;
  Provenance provenance;  // the record's provenance, as the front door states it
  // Copy 0 from `seed` (fresh random inputs, poisoned outputs). Throws what the front door throws:
  // UnsupportedShape skips the benchmark with its message, anything else fails it.
  std::function<CallableInstance(std::uint64_t seed)> instantiate;
};

// Measures `benchmark` as measure_benchmark measures a variant: input copies planned for `device`,
// the same seed rule, the same steps and records, faults recorded.
MeasureOutcome measure_callable(const CallableBenchmark& benchmark, const DeviceInfo& device, GpuTimer& timer,
                                const Calibration& calibration, const SuiteOptions& options, const CounterPass* cupti);

}  // namespace kgate
