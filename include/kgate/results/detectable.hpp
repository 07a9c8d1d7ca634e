#pragma once
// The smallest change of a benchmark's median that its own data can tell from noise: what a gate
// can promise for that benchmark, and the band a verdict needs to clear (docs/compare.md).
//
// Three limits, each a fraction of the median, and the change must clear all three:
//  * within: the sampling error of the median. A distribution-free interval of the median (the
//    order statistics n/2 -/+ z sqrt(n)/2) gives the half-width for one run; two runs compared
//    each carry one, so the difference needs sqrt(2) of it.
//  * between: the spread of the repetition medians (the processes of one run, the rounds of
//    `kgate ab`). Whatever a process brings (where its allocations lie, a library's mode) stays
//    for all its samples, so no sample count averages it out; a change smaller than the spread
//    between the processes of one run cannot be told from another process.
//  * resolution: one tick of the timer's clock (32 ns for CUPTI on an H100): a smaller change moves
//    no sample onto another tick. (The noise spreads samples over neighbouring ticks, so a median
//    of many can move by less; one tick is the honest claim.)
// A CPU-timed record (plain Google Benchmark's real_time around a CPU loop, timer "cpu") has one
// sample per repetition, and a loaded host moves whole repetitions (another process takes the core
// for a while) as it moves whole runs: its between is also the spread of its repetitions' middle
// 80% (p10 to p90), the change that the host's load alone makes.
// A CUPTI- or CPU-timed benchmark's band is the larger of its threshold and this; event-timed ones
// keep the fixed minimum change instead, since their launch overhead shifts between processes by
// more than their samples show (compare.hpp).
#include <string>

#include "kgate/results/results.hpp"

namespace kgate {

struct DetectableChange {
  double within = 0, between = 0, resolution = 0;
  double fraction() const;  // the largest of the three
};

// From the record's samples and repetition medians; `timer_resolution_s` 0 when unknown. Zero for
// a record without samples. `confidence` is the level of the median's interval (the comparator's
// 1 - alpha).
DetectableChange detectable_change(const TimingRecord& record, double timer_resolution_s, double confidence = 0.99);

// True for the timers whose records are judged by their minimum detectable change ("cupti",
// "cpu"); an event-timed one is judged by the fixed minimum change in time.
bool judged_by_detectable_change(const std::string& timer);

// Sets min_detectable_change of each mode of the record judged by it (at the comparator's default
// 99%); event-timed modes keep 0, since the fixed minimum change in time is theirs.
void note_detectable_change(BenchmarkRecord& record, double timer_resolution_s);

}  // namespace kgate
