#include "report_shift.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kgate/base/figures.hpp"
#include "kgate/base/statistics.hpp"

namespace kgate::report {
namespace {

constexpr std::array<double, 3> kQuantiles = {0.1, 0.5, 0.9};
constexpr double kStandardErrors = 2;  // how far from a kind's prediction the data may lie and still fit it

// One standard error of the q-th quantile of a sorted sample, read off its distribution-free
// interval: the order statistics q(n - 1) -/+ sqrt(n q (1 - q)) (one standard deviation of the
// binomial count below the quantile) lie about one standard error on either side of it.
double quantile_standard_error(const std::vector<double>& sorted, double q) {
  const double n = static_cast<double>(sorted.size());
  const double reach = std::sqrt(n * q * (1 - q));
  const auto at = [&](double rank) { return sorted[static_cast<std::size_t>(std::clamp(rank, 0.0, n - 1))]; };
  return (at(std::ceil(q * (n - 1) + reach)) - at(std::floor(q * (n - 1) - reach))) / 2;
}

std::vector<double> sorted_samples(std::span<const double> samples) {
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

// "+0.288 µs at p10, +0.321 µs at p50, +0.352 µs at p90 (+13.2%, +13.9%, +14.5%)"
std::string quantile_changes(const SampleShift& shift) {
  std::string times, fractions;
  for (const QuantileShift& q : shift.at) {
    const std::string sep = times.empty() ? "" : ", ";
    times += sep + kgate::format_time_change(q.change_s()) + " at p" + std::to_string(static_cast<int>(std::lround(q.quantile * 100)));
    fractions += sep + kgate::format_change(q.change_s() / q.baseline_s);
  }
  return times + " (" + fractions + ")";
}

}  // namespace

std::optional<SampleShift> sample_shift(std::span<const double> baseline_s, std::span<const double> new_s, double timer_resolution_s) {
  if (baseline_s.size() < kMinShiftSamples || new_s.size() < kMinShiftSamples) return std::nullopt;
  const std::vector<double> base = sorted_samples(baseline_s), head = sorted_samples(new_s);
  SampleShift shift;
  std::array<double, 3> variance{};  // of each quantile's change: both sides' standard errors and half a tick each
  const double tick_variance = 2 * (timer_resolution_s / 2) * (timer_resolution_s / 2);
  for (std::size_t i = 0; i < kQuantiles.size(); ++i) {
    const double q = kQuantiles[i];
    shift.at[i] = {q, kgate::percentile(base, q), kgate::percentile(head, q)};
    variance[i] = std::pow(quantile_standard_error(base, q), 2) + std::pow(quantile_standard_error(head, q), 2) + tick_variance;
  }
  const QuantileShift &p10 = shift.at[0], &p50 = shift.at[1], &p90 = shift.at[2];
  shift.noise_s = kStandardErrors * std::sqrt(variance[0] + variance[2]);
  const double middle_noise = kStandardErrors * std::sqrt(variance[1]);
  // What each kind predicts for the spread's change: nothing (constant), or the median's relative
  // change applied to the baseline's p10–p90 spread (proportional).
  const double spread_change = p90.change_s() - p10.change_s();
  const double proportional = p50.change_s() / p50.baseline_s * (p90.baseline_s - p10.baseline_s);
  const bool constant_fits = std::fabs(spread_change) <= shift.noise_s;
  const bool proportional_fits = std::fabs(spread_change - proportional) <= shift.noise_s;
  if (std::fabs(p50.change_s()) <= middle_noise) shift.kind = constant_fits ? ShiftKind::none : ShiftKind::uneven;
  else if (constant_fits) shift.kind = proportional_fits ? ShiftKind::uniform : ShiftKind::constant;
  else shift.kind = proportional_fits ? ShiftKind::proportional : ShiftKind::uneven;
  return shift;
}

std::string describe_shift(const SampleShift& shift) {
  const QuantileShift &p10 = shift.at[0], &p50 = shift.at[1], &p90 = shift.at[2];
  switch (shift.kind) {
    case ShiftKind::none: return "No shift beyond the noise: " + quantile_changes(shift) + ".";
    case ShiftKind::constant:
      return "A constant shift: " + quantile_changes(shift) +
             ". The same time at each quantile is additive, as a fixed delay is (a launch, a wait, a longer prologue); a "
             "proportional change would have moved p90 by " +
             kgate::format_time_change(p50.change_s() / p50.baseline_s * (p90.baseline_s - p10.baseline_s)) + " more than p10.";
    case ShiftKind::uniform:
      return "A uniform shift: " + quantile_changes(shift) + ". Every quantile moved alike; the baseline's p10–p90 spread (" +
             kgate::format_time(p90.baseline_s - p10.baseline_s) +
             ") is too narrow to tell a fixed delay (the same time at each) from a proportional change (the same fraction).";
    case ShiftKind::proportional:
      return "A proportional shift: " + quantile_changes(shift) +
             ". The same fraction of the time at each quantile, as a lower clock, less bandwidth or more work per "
             "element gives; a fixed delay would have moved every quantile by the same time.";
    case ShiftKind::uneven:
      return "An uneven shift: " + quantile_changes(shift) + ". The spread itself changed (p90 moved " +
             kgate::format_time_change(p90.change_s() - p10.change_s()) +
             " against p10), which neither a fixed delay nor a proportional change does: a slow tail or a second mode.";
  }
  return {};
}

std::string shift_chip(const SampleShift& shift) {
  switch (shift.kind) {
    case ShiftKind::none: return {};
    case ShiftKind::constant: return "const shift";
    case ShiftKind::proportional: return "proportional";
    case ShiftKind::uniform: return "uniform shift";
    case ShiftKind::uneven: return "spread changed";
  }
  return {};
}

}  // namespace kgate::report
