#pragma once
// How a benchmark's samples moved between the baseline and the new run, told from their quantiles:
// the change in time at the 10th, 50th and 90th percentiles (new − baseline), and what its shape
// says about the cause. A fixed delay (an added launch, a wait, a longer prologue) adds the same
// time to every sample: a constant shift. Everything running slower (a lower clock, less
// bandwidth, more work per element) adds the same fraction: a proportional shift, larger at p90
// than at p10 by that fraction of the baseline's p10–p90 spread.
//
// The two differ only by that fraction of the spread, so a narrow distribution cannot tell them
// apart: the spread's change (Δp90 − Δp10) is compared with what each kind predicts (0, or the
// median's relative change × the baseline's p10–p90 spread) within two standard errors of the four
// quantiles, read off their order statistics, and the timer's tick (a sample is a whole number of
// ticks). Where both fit, the shift is uniform: every quantile moved alike, and the spread is too
// narrow to say whether by the same time or by the same fraction (a 6% slowdown of a kernel whose
// p10 and p90 lie 2% apart moves them by times that differ by 0.12% of the median).
#include <array>
#include <optional>
#include <span>
#include <string>

namespace kgate::report {

enum class ShiftKind {
  none,          // p10, p50 and p90 moved by less than their noise
  constant,      // the same time at each quantile; a proportional shift is ruled out
  proportional,  // the same fraction at each quantile; a constant shift is ruled out
  uniform,       // both fit: the same time and the same fraction at each, as far as the spread can tell
  uneven,        // neither: the spread itself changed (a slow tail, a second mode)
};

struct QuantileShift {
  double quantile = 0;               // 0.1, 0.5, 0.9
  double baseline_s = 0, new_s = 0;  // the quantile of each side
  double change_s() const { return new_s - baseline_s; }
};

struct SampleShift {
  ShiftKind kind = ShiftKind::none;
  std::array<QuantileShift, 3> at{};  // p10, p50, p90
  double noise_s = 0;                 // two standard errors of the spread's change (Δp90 − Δp10), tick included
};

// Fewer samples than this on a side give no p10 and p90 worth reading.
inline constexpr std::size_t kMinShiftSamples = 10;

// nullopt with fewer than kMinShiftSamples on a side. `timer_resolution_s`: the larger tick of the
// two runs' timers (0 when unknown).
std::optional<SampleShift> sample_shift(std::span<const double> baseline_s, std::span<const double> new_s, double timer_resolution_s);

// The sentence under the strip plot: "A constant shift: +0.288 µs at p10, +0.321 µs at p50, +0.352 µs
// at p90 (+13.2%, +13.9%, +14.5%): additive, as a fixed delay adds."
std::string describe_shift(const SampleShift& shift);

// The shift's kind in a chip ("const shift", "proportional", "uniform shift", "spread changed");
// empty for none.
std::string shift_chip(const SampleShift& shift);

}  // namespace kgate::report
