#pragma once
// Repetitions of one benchmark pooled into one record: more samples of the same distribution.
// Repetitions come from `kgate_bench --benchmark_repetitions`, from shards that measured the same
// benchmark (`kgate merge`) and from the rounds of `kgate ab`.
#include "kgate/results/results.hpp"

namespace kgate {

// Both succeeded and measured the same thing: the same name, family, variant, shape and headline
// mode, each mode with the same timer. A failed or skipped record is never a repetition (its error must not be averaged away).
bool is_repetition(const BenchmarkRecord& a, const BenchmarkRecord& b);

// Adds `from`'s samples to `into`, mode by mode, and recomputes what depends on them: summaries,
// the SM clock and the event and busy medians (weighted by samples), the minimum detectable
// change (with calibration's timer resolution), the derived roofline figures against `calibration`; the
// throttled and power-limited samples, GPU and wall times add up, a mode rested when either
// repetition did, and the stopping target counts as met only when every repetition met it.
// The kernels traced and the counters (or why there are none) are `from`'s where `into` has none.
// Precondition: is_repetition(into, from).
void pool_repetition(BenchmarkRecord& into, const BenchmarkRecord& from, const Calibration& calibration);

}  // namespace kgate
