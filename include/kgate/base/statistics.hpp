#pragma once
// Sample statistics for timing distributions, and the two-sample tests the comparator uses.
// Pure functions over std::span<const double>; no GPU.
#include <span>
#include <vector>

namespace kgate {

struct SampleSummary {
  std::size_t count = 0;
  double median = 0, mean = 0, stddev = 0;  // stddev: sample (n - 1) standard deviation
  double min = 0, max = 0, p10 = 0, p90 = 0;
  double rel_stddev() const { return mean > 0 ? stddev / mean : 0; }
};

// Percentile q in [0, 1] with linear interpolation between order statistics (NumPy's default).
// Empty input throws std::invalid_argument.
double percentile(std::span<const double> samples, double q);
double median(std::span<const double> samples);
SampleSummary summarize(std::span<const double> samples);

// The standard normal distribution's quantile: z with P(Z <= z) = p, for p in (0, 1) (throws
// std::invalid_argument otherwise); normal_quantile(0.995) = 2.5758...
double normal_quantile(double p);

// A distribution-free interval of the median at `confidence`: the order statistics at ranks
// n/2 -/+ z sqrt(n)/2 (z the two-sided normal quantile), clamped to the sample. Empty input throws.
struct MedianInterval {
  double low = 0, high = 0;
};
MedianInterval median_interval(std::span<const double> samples, double confidence);

// Two-sided Mann–Whitney U test of "a and b come from the same distribution": the normal
// approximation with tie correction and continuity correction (as SciPy's mannwhitneyu with
// method="asymptotic"). Returns p = 1 when either side has fewer than 2 samples.
struct UTestResult {
  double u = 0;  // U statistic of sample a
  double z = 0;
  double p_value = 1;
};
UTestResult mann_whitney_u(std::span<const double> a, std::span<const double> b);

// A deterministic, distribution-free confidence interval for median(a) / median(b) (Price and
// Bonett's, 2002): each median's standard error is read off its order-statistic interval
// (median_interval), the two are combined on the log scale, and the interval is
// ratio x exp(-/+ z sqrt(se_a^2 + se_b^2)). O(n log n) per side: the thousands of resampled
// medians a bootstrap needs for the same answer took a whole-suite comparison 75 s on 2 cores.
// Empty sides, a confidence outside (0, 1) and medians that are not positive throw
// std::invalid_argument.
struct RatioInterval {
  double ratio = 0;  // median(a) / median(b) on the full samples
  double low = 0, high = 0;
  double confidence = 0.95;
};
RatioInterval median_ratio_interval(std::span<const double> a, std::span<const double> b, double confidence = 0.95);

}  // namespace kgate
