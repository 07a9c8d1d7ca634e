#pragma once
// One timing process's share of a suite run, as an object. A run is timed in
// SuiteOptions::processes fresh processes one after another (TimingProcess); each makes a
// SuiteProcess, from nothing (the first) or from the results the one before handed over, and
// takes these steps:
//
//   calibrate()       the GPU's ceilings, once per run (the first process; where the shards
//                     claim their benchmarks as they run, the first shard done with its own
//                     measures them, in take() or finish_timing(): claim_calibration)
//   due(name)         whether this process measures a benchmark
//   take(name)        due, and this shard's: the front door asks it just before measure(), of
//                     names() and then of others() (other shards' benchmarks, in a claiming
//                     shard's last process)
//   measure(name)     measures it, pools the record with the earlier processes' and says whether
//                     the CUDA context was lost (the front door then goes on in a fresh process)
//   finish_timing()   records that this process's timing is done; the next process goes on from
//                     results()
//   count()           the last process only: the CUPTI counter pass over every benchmark
//
// Every step adds its wall time to results().context.wall_s, the harness's account of its own
// cost. A front door (kgate_bench's main, the Python binding) decides which benchmarks to ask for,
// hands the results from process to process and writes them; it never measures anything itself.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kgate/core/registry.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/measure/timing.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results.hpp"
#include "kgate/results/shard_claims.hpp"
#include "kgate/suite/benchmark_plan.hpp"
#include "kgate/suite/callable_benchmark.hpp"
#include "kgate/suite/counter_pass.hpp"
#include "kgate/suite/options.hpp"
#include "kgate/suite/timing_process.hpp"
#include "kgate/suite/workload_benchmarks.hpp"

namespace kgate {

// Every benchmark of the suite in its order (each variant x bench shape, the workloads, then the
// front door's callables), limited to this process's shard (SuiteOptions::shard): each shard process computes the same
// split on its own; where the shards claim their benchmarks as they run (SuiteOptions::shard_claims),
// every shard's list is the whole suite. Needs no GPU. Throws std::logic_error when the registry is inconsistent,
// std::invalid_argument on a workload name that names no workload benchmark, and ResultsError when
// the shard durations file cannot be read.
std::vector<std::string> suite_benchmark_names(const SuiteOptions& options, const std::vector<CallableBenchmark>& callables = {},
                                               const Registry& registry = Registry::instance(),
                                               const WorkloadRegistry& workloads = WorkloadRegistry::instance());

// The other shards' benchmarks a claiming shard's last timing process may take once done with its
// own (ShardClaims::claim_last_round): those of `suite` that `own` rejects, last first. A shard done
// with its own takes from the ends of the others' lists while they work from the starts: on a 2x
// H200 host the claiming shards' processes had ended 3-4 s apart in two runs of six, the first
// processes' claims even but the later processes' timing of the same sets not.
std::vector<std::string> others_last_first(const std::vector<std::string>& suite, const std::function<bool(const std::string&)>& own);

class SuiteProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // The first process of a fresh run, on `device`; the run's context records `suite` and
  // `command_line`. `started` is when the process started, for the startup phase. `callables` are
  // the front door's own benchmarks beside the registry's (a Python suite's variants); every process
  // of a run must be given the same. Throws UnknownMetrics naming metrics this chip does not know,
  // before any timing.
  SuiteProcess(const DeviceInfo& device, const SuiteOptions& options, const SuiteBuild& suite, const std::string& command_line,
               Clock::time_point started = Clock::now(), std::vector<CallableBenchmark> callables = {});
  // A later process of the run, going on from the results the one before handed over.
  SuiteProcess(const DeviceInfo& device, const SuiteOptions& options, RunResults handed_over, Clock::time_point started = Clock::now(),
               std::vector<CallableBenchmark> callables = {});

  const TimingProcess& process() const { return process_; }
  const RunResults& results() const { return results_; }
  // Adds entries to the run's context.kgate.extra, which kgate merge keeps (a front door's own
  // facts: the libraries a Python suite ran with); an entry already there is replaced.
  void add_context(const std::map<std::string, std::string>& extra);
  // The benchmarks this process knows, in the suite's order (suite_benchmark_names): where the
  // shards claim their benchmarks, after the first process, this shard's.
  const std::vector<std::string>& names() const { return names_; }
  // In a claiming shard's last process (after a first), the other shards' benchmarks it may take
  // once its own are done (others_last_first); empty elsewhere. A front door asks take() of each.
  const std::vector<std::string>& others() const { return others_; }

  // Only a fresh run's first process calibrates; the others read the ceilings from the results.
  // Where the shards claim their benchmarks as they run, none calibrates first: see claim_calibration.
  bool needs_calibration() const { return fresh_ && !claims_; }
  const Calibration& calibrate();

  bool due(const std::string& name) const;
  // Whether this process measures `name` now: it is due and, where the shards claim their
  // benchmarks as they run (SuiteOptions::shard_claims), this shard's. The first process claims it
  // here (ShardClaims), so ask just before measure(); the middle ones measure what it claimed; the
  // last claims the last round of its own and, once they are done, of other shards' (offered and
  // not yet claimed: others()); asked the first of these, it first does what it would otherwise
  // leave to its end (own_done). Throws ResultsError when a claim can be neither made nor found.
  bool take(const std::string& name);
  // Whether this process claims its benchmarks as it runs: then which of the due ones it measures
  // is known only as it goes.
  bool claims_as_it_runs() const { return claims_ && (process_.index == 0 || shares_last_round()); }
  // The record pooled so far (null: not measured by any process yet).
  const BenchmarkRecord* record(const std::string& name) const;

  struct Measured {
    const BenchmarkRecord& record;  // pooled with the earlier processes' and repetitions
    bool context_lost;              // a sticky fault: nothing more can run in this process
  };
  // Throws std::out_of_range for a name in neither names() nor others().
  Measured measure(const std::string& name);

  // In a claiming shard's last process that has not asked take() of others(), claims the
  // calibration first (claim_calibration).
  void finish_timing();
  // The range-profiler pass, in the last process (elsewhere it only closes the phase): after
  // finish_timing(), or before the first measure() where counts_first() (counts_before_timing);
  // in a claiming shard's last process that counts after its timing, take() runs it once the
  // shard's own benchmarks are timed (own_done). Once per process: a second call does nothing.
  bool counts_first() const { return counts_before_timing(options_, process_); }
  void count();

 private:
  SuiteProcess(const DeviceInfo& device, const SuiteOptions& options, RunResults results, Clock::time_point started, bool fresh,
               std::vector<CallableBenchmark> callables);
  // Profiles a record the registry cannot launch: a workload, or a callable.
  void profile_other(BenchmarkRecord& record, RangeProfiler& profiler) const;
  // A claiming shard's last process, after a first: its round is claimed benchmark by benchmark.
  bool shares_last_round() const { return claims_ && process_.last() && process_.index > 0; }
  // A claiming shard's last process, once done with its own benchmarks: the first shard there
  // claims the run's calibration (ShardClaims::claim_run_step) and measures the ceilings on its GPU
  // while the others still time, then derives its records' figures from them; kgate merge places
  // the other shards' records on them (the shards of one host are one GPU model). Before, the four
  // shards of a 4x H200 host each spent 0.85-1.0 s calibrating before their first benchmark. Once
  // per process; elsewhere it does nothing.
  void claim_calibration();
  // A claiming shard's last process, done with its own benchmarks, before it takes others': the
  // calibration (claim_calibration) and, where it counts after its timing, its counter pass, so
  // that the other shards' timing overlaps them rather than its idle GPU. On a 2x H200 host the
  // shard that counted last ended 4-5 s after the one that counted first, though it had taken its
  // share of the last round. Once per process.
  void own_done();
  void end_phase(const std::string& phase);
  void say_timer_fallback();

  const DeviceInfo& device_;
  const Registry& registry_;
  RunResults results_;
  TimingProcess process_;
  SuiteOptions options_;  // this process's share (options_for_process)
  std::vector<std::string> names_, others_;
  std::vector<BenchmarkPlan> benchmarks_;
  std::vector<WorkloadPlan> workloads_;
  std::vector<CallableBenchmark> callables_;
  struct PlanIndex {
    enum class Kind { variant, workload, callable } kind;
    std::size_t index;  // into benchmarks_, workloads_ or callables_
  };
  std::map<std::string, PlanIndex> plan_of_;
  GpuTimer timer_;
  std::optional<CounterPass> counters_;
  std::optional<ShardClaims> claims_;  // where the shards claim their benchmarks: the first process's and the last's
  std::set<std::string> taken_;        // the last round's benchmarks this process claimed (shares_last_round)
  std::set<std::string> from_others_;  // those of them another shard's first process claimed: that shard counts them
  bool calibration_claimed_ = false;   // claim_calibration has run
  bool own_done_ = false;              // own_done has run
  bool counted_ = false;               // count has run
  Clock::time_point phase_start_;
  bool fresh_;
  bool fallback_said_ = false;
};

}  // namespace kgate
