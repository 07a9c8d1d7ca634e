#pragma once
// The run's sequence of timing processes (--kgate_processes): which one this is, and which
// benchmarks it still measures. Each process hands the results so far to the next through the
// resume file (--kgate_resume), whose context records how many have finished.
#include <cstddef>
#include <string>
#include <vector>

#include "kgate/results/results.hpp"
#include "kgate/suite/options.hpp"

namespace kgate {

// context.kgate.extra's key for "<finished>/<count>" timing processes.
inline constexpr const char* kTimingProcessesKey = "timing_processes";

struct TimingProcess {
  int index = 0, count = 1;  // this process, counted from 0, of `count`
  bool last() const { return index + 1 == count; }
};

// This process, from the results handed over: the process after the ones they say finished, or,
// without the key (a fresh run), the first of `requested`. Throws std::runtime_error when the key
// is not "I/N" with 0 <= I < N.
TimingProcess timing_process(const RunResults& results, int requested);

// Records that `process` finished its timing.
void mark_finished(RunResults& results, const TimingProcess& process);

// What `process` runs with: its share of the sampling budget (share_of_budget), so that the
// processes together meet what `whole` asks of one benchmark. The input placements are not
// shared: each process's median is meant to hang on no single allocation. The first process checks outputs and measures the mode that is not the headline
// (only the report reads it); the later ones add to the headline mode, the figure the gate
// compares.
SuiteOptions options_for_process(const SuiteOptions& whole, const TimingProcess& process);

// Whether `process` measures a benchmark, given its record so far (null: none yet): when it is
// not yet measured, or measured successfully by fewer processes than this one, `repetitions`
// times each (SuiteOptions::repetitions). A failed or skipped benchmark is not measured again.
bool due(const BenchmarkRecord* record, const TimingProcess& process, std::size_t repetitions);

// Whether `process` runs the range-profiler pass (CounterPass::run) before its timing rather than
// after it: the last process of a shard of odd index, when the run profiles. The shards of one
// host finish their timing together, and the driver serves their profilers' replays one at a time
// across the GPUs: on a 4x H200 host a shard's pass took 5.1-6.6 s while all four overlapped,
// 2.0-3.0 s while the others were still timing. With half the shards counting first, while the
// others time, the passes took a mean 3.7 s against 4.8 s (docs/ci.md). Every benchmark has a
// record by then, from the earlier processes; the last one's timing only adds samples to it.
bool counts_before_timing(const SuiteOptions& options, const TimingProcess& process);

// Handing over to a fresh process: the process before writes the results so far into a fresh
// temporary file (write_handover, returning its path) and starts the next with the arguments it
// was given and --kgate_resume=<path> (continuation_args, which drops the earlier process's
// --kgate_resume and --kgate_handover_fd). kgate_bench starts the next process ahead of its turn
// and hands over when its timing ends (next_process.hpp); a Python suite, and a process restarting
// after a fault, replace their own image (os.execv, execv). The next process reads the file and
// removes it. reserve_handover makes the empty file, for a process started before the results exist.
std::string reserve_handover();
void write_handover(const RunResults& results, const std::string& path);
std::string write_handover(const RunResults& results);
std::vector<std::string> continuation_args(const std::vector<std::string>& args, const std::string& handover_path);

// A process that lost its CUDA context restarts on the remaining benchmarks the same way. Counts
// the restart in the environment the next process inherits (KGATE_BENCH_RESTARTS); false, with
// nothing counted, once kMaxRestarts were made: a run whose faults never end gives up.
inline constexpr int kMaxRestarts = 50;
bool count_restart();

}  // namespace kgate
