#pragma once
// The in-memory model of one benchmark run: what kgate_bench records and writes, what
// `kgate compare`, `kgate merge`, `kgate baseline` and `kgate report` read. Its JSON form is
// valid Google Benchmark JSON with a `kgate` block in the context and in each benchmark
// (docs/results-format.md, schema version kResultsSchemaVersion).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/base/model_config.hpp"
#include "kgate/base/phase_clock.hpp"
#include "kgate/base/statistics.hpp"

namespace kgate {

inline constexpr int kResultsSchemaVersion = 1;

// Ceilings measured on the GPU in the same run (all figures per second), and the datasheet-style
// peaks computed from device properties, so every % is against what this GPU really does.
struct Calibration {
  double copy_bytes_per_s = 0;  // device-to-device copy, bytes read + written
  double read_bytes_per_s = 0;  // read-only stream (a sum reduction)
  double gemm_flops_per_s = 0;  // bf16 tensor-core GEMM through cuBLAS
  double launch_floor_s = 0;    // an empty kernel, launched back to back
  double graph_floor_s = 0;     // an empty kernel replayed from a CUDA graph, per launch
  // The smallest step between two CUPTI activity timestamps seen in the run (the tick of the GPU
  // clock CUPTI reads); 0 when the run was not CUPTI-timed. Part of a CUPTI-timed record's
  // minimum detectable change (detectable.hpp).
  double timer_resolution_s = 0;
  double datasheet_bytes_per_s = 0;  // 2 * memory clock * bus width / 8 (DDR)
  double datasheet_sm_clock_mhz = 0;
  std::string cached_from;  // path of the cache file when reused, empty when measured now
};

// One phase of the job that made a run (scripts/run.sh's build, correctness, suite, ...), as
// `kgate job-time` records it: the job's own cost, beside the harness's (wall_s).
struct JobPhase {
  std::string phase;
  double seconds = 0;
  bool operator==(const JobPhase&) const = default;
};
// A phase's name: what a report prints and a history stores as it is.
inline constexpr const char* kJobPhaseNameRule = "1 to 64 letters, digits, '_', '-' or '.'";
bool is_job_phase_name(std::string_view name);
// Records `phases` in `job`: each replaces the phase of its name, or, new, comes after the others.
void record_job_phases(std::vector<JobPhase>& job, const std::vector<JobPhase>& phases);
double job_total_s(const std::vector<JobPhase>& job);
const JobPhase* find_job_phase(const std::vector<JobPhase>& job, std::string_view phase);  // null: not in it
// Several jobs' phases as the columns of one table: each name once, in order of first appearance.
std::vector<std::string> job_phase_columns(const std::vector<const std::vector<JobPhase>*>& jobs);

struct RunContext {
  // Google Benchmark's own context fields are produced by Google Benchmark; these are kgate's.
  int schema_version = kResultsSchemaVersion;
  std::string suite = "kgate";
  std::string gpu_name, gpu_uuid;
  int compute_capability = 0, sm_count = 0;
  long long l2_bytes = 0, memory_bytes = 0;
  int driver_version = 0, runtime_version = 0;
  double sm_clock_mhz_default = 0, memory_clock_mhz = 0;
  Calibration calibration;
  std::string git_commit;  // from the source tree, or $KGATE_GIT_COMMIT where it has no .git
  bool git_dirty = false;
  std::string build_type, cuda_architectures, host, date;  // date: ISO 8601 UTC
  std::string command_line;
  // The harness's own wall time per phase, summed over the run's processes: "startup",
  // "calibration", "timing", "counters", and their parts ("timing.cold", "counters.profile.passes";
  // docs/results-format.md). Empty when not recorded (a peers file, plain Google Benchmark JSON).
  PhaseSeconds wall_s;
  std::vector<JobPhase> job_s;               // the job's wall time by phase, in the job's order; empty when not recorded
  std::map<std::string, std::string> extra;  // free-form provenance (peer library versions, shard)
};

enum class BenchmarkStatus { ok, failed, skipped };

std::string to_string(BenchmarkStatus status);  // "ok", "failed", "skipped", as results files write it

// One timing mode's samples (seconds per launch) and how sampling ended.
struct TimingRecord {
  std::vector<double> samples_s;  // seconds per launch (hot: each replay's time / launches_per_sample)
  SampleSummary summary;
  bool target_met = false;  // relative stddev reached the target before the time cap
  double target_rel_stddev = 0;
  std::string stop_reason;        // "target-met" | "noise-converged" | "time-cap" | "sample-cap"
  int throttled_samples = 0;      // samples dropped because the SM clock was below the threshold
  int power_limited_samples = 0;  // samples dropped because the board was limiting power (stopping.hpp)
  bool rested = false;            // sampling idled between batches to stay under the power limit
  double sm_clock_mhz = 0;        // median SM clock over the kept samples
  double gpu_time_s = 0, wall_time_s = 0;
  int launches_per_sample = 1;  // hot mode: launches per graph replay
  int input_copies = 1;         // separately allocated input copies the samples ran on (cold: rotated)
  // The median of each repetition pooled into this record, in pooling order: each process of a
  // run (--kgate_processes), each --benchmark_repetitions, each shard or A/B round. Empty when
  // unknown (older files, plain Google Benchmark JSON).
  std::vector<double> repetition_medians_s;
  // Where the samples' times come from (docs/timing.md): "cupti", the span of the call's CUPTI
  // activity records (first start to last end of its kernels, copies and sets, on the GPU's own
  // clock), "events", a CUDA event pair around the call (launch processing included), or "cpu",
  // the host's clock around a CPU loop (plain Google Benchmark JSON without manual time, one
  // sample per repetition). Files without the field were event-timed.
  std::string timer = "events";
  // CUPTI-timed records only (0 otherwise), over the same calls as the samples: the median time
  // between the CUDA events around a call (end to end, launch included) and the median sum of its
  // activity records' durations (busy time: the gaps between its kernels excluded).
  double event_median_s = 0, busy_median_s = 0;
  // The smallest change of the median this record can tell from its own scatter, as a fraction
  // (min_detectable_change in detectable.hpp); 0 when not computed (event-timed, older files).
  double min_detectable_change = 0;
};

// A kernel that the variant really launched (CUPTI activity record).
struct KernelRecord {
  std::string name, demangled;
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int registers_per_thread = 0;
  long long static_shared_bytes = 0, dynamic_shared_bytes = 0;
  double duration_s = 0;
  int launches = 0;  // identical launches folded into one record
};

enum class RooflineClass { memory_bound, compute_bound, latency_bound, below_roofs };

// One step of a workload benchmark (workload.hpp) as it ran: the variant chosen for it and the
// family's bytes and FLOP models at its shape.
struct WorkloadStepRecord {
  std::string label, family, variant, shape;
  double min_bytes = 0, flops = 0;
  std::string memory_ceiling = "copy";  // the bandwidth ceiling the family is judged against: "copy" | "read"
};

// A kernel on the stream in one traced run of a workload's step (CUPTI activity record).
struct TimelineKernel {
  std::size_t step = 0;                   // index into WorkloadRecord::steps: the step that launched it
  KernelRecord kernel;                    // launches = 1; duration_s = end_s - start_s
  double start_s = 0, end_s = 0;          // from the start of the run's first kernel
  std::map<std::string, double> metrics;  // range-profiler counters of this launch
};

// What a workload benchmark records beyond a kernel benchmark: the model and the steps, and the
// timeline of the step run cold, traced in runs queued and timed as the cold mode's samples are.
struct WorkloadRecord {
  std::string workload;  // "decode"
  ModelConfig model;
  std::int64_t tokens = 0;  // tokens one step processes (time per token = time / tokens)
  std::vector<WorkloadStepRecord> steps;
  std::vector<double> traced_event_s;    // each traced run's time between its events (end to end)
  std::vector<double> traced_span_s;     // each traced run's first kernel start to last kernel end
  std::vector<TimelineKernel> timeline;  // the traced run whose span is the median, in start order
  std::string timeline_unavailable;      // why there is no timeline, when there is none
};

struct BenchmarkRecord {
  std::string name;                          // "<family>/<variant>/<shape id>", e.g. "rmsnorm/vectorized/m:4096/n:4096/bf16"
  std::string family, variant, shape, role;  // role: "reference" | "vendor" | "candidate" | "peer"
  std::string follows;                       // the variant this one is the next step after in its family's journey (VariantInfo::follows)
  BenchmarkStatus status = BenchmarkStatus::ok;
  std::string error;  // CUDA error text or skip reason when status != ok

  double min_bytes = 0, flops = 0;
  std::string headline_mode = "cold";  // "cold" | "hot"
  std::optional<TimingRecord> cold, hot;
  double first_launch_s = 0;
  // Harness wall time spent on this benchmark before the counter pass (instance, check, trace,
  // both modes): what a shard planner balances.
  double wall_time_s = 0;

  // Derived from the headline mode's median and the run's calibration.
  double bytes_per_s = 0, flops_per_s = 0, arithmetic_intensity = 0;
  double pct_of_memory_ceiling = 0, pct_of_compute_ceiling = 0;
  std::string memory_ceiling = "copy";  // which measured bandwidth ceiling applies: "copy" | "read"
  RooflineClass roofline = RooflineClass::below_roofs;

  std::vector<KernelRecord> kernels;
  std::map<std::string, double> metrics;  // CUPTI range-profiler metric name -> value
  std::string metrics_unavailable;        // why there are none, when there are none

  std::optional<bool> correct;  // outcome of the correctness check run before timing, if any
  std::string correctness_detail;

  std::optional<WorkloadRecord> workload;  // workload benchmarks only (family "workload")

  // Baseline entries only (`kgate baseline update`): the run each entry was taken from (commit,
  // date, driver, clocks), since a baseline file gathers entries from several runs.
  std::map<std::string, std::string> provenance;

  // The headline mode's median, in seconds (the figure every comparison starts from).
  double headline_median_s() const;
  const TimingRecord* headline() const;
};

struct RunResults {
  RunContext context;
  std::vector<BenchmarkRecord> benchmarks;
  bool has_kgate_block = true;  // false when read from plain Google Benchmark JSON or nvbench JSON
  // What a comparison of a file without kgate blocks rests on, said at the top of one, where that
  // is not plain Google Benchmark JSON's repetitions (nvbench's samples or summaries).
  std::string source_note = {};
};

}  // namespace kgate
