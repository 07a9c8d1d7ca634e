#include "kgate/base/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace kgate {

namespace {

void require_samples(std::span<const double> samples, const char* what) {
  if (samples.empty()) throw std::invalid_argument(std::string(what) + ": no samples");
}

void require_quantile(double q) {
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument("percentile: q = " + std::to_string(q) + " is outside [0, 1]");
}

double lerp_order_statistics(double lower, double upper, double fraction) {
  return fraction == 0.0 ? lower : lower + fraction * (upper - lower);
}

double percentile_of_sorted(std::span<const double> sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  return lerp_order_statistics(sorted[lower], sorted[upper], position - static_cast<double>(lower));
}

// O(n) instead of a full sort. Reorders `values`.
double percentile_in_place(std::vector<double>& values, double q) {
  const double position = q * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const auto lower_it = values.begin() + static_cast<std::ptrdiff_t>(lower);
  std::nth_element(values.begin(), lower_it, values.end());
  const double fraction = position - static_cast<double>(lower);
  if (fraction == 0.0) return *lower_it;
  // After nth_element everything past `lower` is >= it, so the next order statistic is their minimum.
  return lerp_order_statistics(*lower_it, *std::min_element(lower_it + 1, values.end()), fraction);
}

// Midranks (ties share the mean of the ranks they span) of a followed by b, and the tie term
// sum(t^3 - t) over groups of t equal values that the variance of U is corrected by.
struct Ranking {
  double rank_sum_a = 0;
  double tie_term = 0;
};

Ranking rank_pooled(std::span<const double> a, std::span<const double> b) {
  std::vector<std::pair<double, bool>> pooled;  // (value, from a)
  pooled.reserve(a.size() + b.size());
  for (double v : a) pooled.emplace_back(v, true);
  for (double v : b) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  Ranking ranking;
  for (std::size_t first = 0; first < pooled.size();) {
    std::size_t last = first;
    while (last + 1 < pooled.size() && pooled[last + 1].first == pooled[first].first) ++last;
    const double ties = static_cast<double>(last - first + 1);
    const double midrank = static_cast<double>(first + last) / 2.0 + 1.0;
    for (std::size_t i = first; i <= last; ++i)
      if (pooled[i].second) ranking.rank_sum_a += midrank;
    ranking.tie_term += ties * ties * ties - ties;
    first = last + 1;
  }
  return ranking;
}

}  // namespace

double percentile(std::span<const double> samples, double q) {
  require_samples(samples, "percentile");
  require_quantile(q);
  std::vector<double> values(samples.begin(), samples.end());
  return percentile_in_place(values, q);
}

double median(std::span<const double> samples) {
  require_samples(samples, "median");
  return percentile(samples, 0.5);
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p = " + std::to_string(p) + " is outside (0, 1)");
  // Bisection on P(Z <= z) = erfc(-z / sqrt 2) / 2, which is monotone: 200 halvings of [-40, 40]
  // reach the last bit of a double, and no table of coefficients is needed.
  double low = -40, high = 40;
  for (int i = 0; i < 200 && high - low > 0; ++i) {
    const double mid = (low + high) / 2;
    (std::erfc(-mid / std::sqrt(2.0)) / 2 < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

MedianInterval median_interval(std::span<const double> samples, double confidence) {
  require_samples(samples, "median_interval");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("median_interval: confidence " + std::to_string(confidence) + " is outside (0, 1)");
  std::vector<double> values(samples.begin(), samples.end());
  const double n = static_cast<double>(values.size());
  const double reach = normal_quantile((1 + confidence) / 2) * std::sqrt(n) / 2;
  // 1-based ranks n/2 - reach and n/2 + reach + 1, as 0-based indices into the sorted sample.
  // Two selections instead of a sort: `kgate history add` takes this of every mode of every run.
  const auto lower = values.begin() + static_cast<std::ptrdiff_t>(std::clamp(std::floor(n / 2 - reach) - 1, 0.0, n - 1));
  const auto upper = values.begin() + static_cast<std::ptrdiff_t>(std::clamp(std::ceil(n / 2 + reach), 0.0, n - 1));
  std::nth_element(values.begin(), lower, values.end());
  const double low = *lower;
  // Everything after `lower` is not below it: the upper rank lies among those.
  if (upper > lower) std::nth_element(lower + 1, upper, values.end());
  return {low, *upper};
}

SampleSummary summarize(std::span<const double> samples) {
  require_samples(samples, "summarize");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  SampleSummary s;
  s.count = sorted.size();
  const double n = static_cast<double>(s.count);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  // Two passes rather than a running sum of squares: timings agree to many digits, and
  // sum(x^2) - n*mean^2 would cancel them away.
  double squared_deviations = 0;
  for (double v : sorted) squared_deviations += (v - s.mean) * (v - s.mean);
  s.stddev = s.count > 1 ? std::sqrt(squared_deviations / (n - 1)) : 0.0;
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = percentile_of_sorted(sorted, 0.5);
  s.p10 = percentile_of_sorted(sorted, 0.1);
  s.p90 = percentile_of_sorted(sorted, 0.9);
  return s;
}

UTestResult mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) return {};
  const double n_a = static_cast<double>(a.size()), n_b = static_cast<double>(b.size()), n = n_a + n_b;
  const Ranking ranking = rank_pooled(a, b);
  UTestResult result;
  result.u = ranking.rank_sum_a - n_a * (n_a + 1) / 2;
  const double variance = n_a * n_b / 12 * ((n + 1) - ranking.tie_term / (n * (n - 1)));
  // Zero variance: every value is the same, so nothing tells the samples apart.
  if (!(variance > 0)) return {.u = result.u, .z = 0, .p_value = 1};
  const double deviation = result.u - n_a * n_b / 2;
  // Continuity correction: U moves in steps of 1/2 (midranks), so shrink |deviation| by 1/2 before
  // going continuous. z keeps the sign of the deviation: positive when a tends to be larger.
  const double corrected = std::max(std::fabs(deviation) - 0.5, 0.0);
  result.z = std::copysign(corrected / std::sqrt(variance), deviation);
  result.p_value = std::min(1.0, std::erfc(std::fabs(result.z) / std::sqrt(2.0)));
  return result;
}

RatioInterval median_ratio_interval(std::span<const double> a, std::span<const double> b, double confidence) {
  require_samples(a, "median_ratio_interval (a)");
  require_samples(b, "median_ratio_interval (b)");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("median_ratio_interval: confidence " + std::to_string(confidence) + " is outside (0, 1)");
  const double median_a = median(a), median_b = median(b);
  if (!(median_a > 0 && median_b > 0))
    throw std::invalid_argument("median_ratio_interval: the medians must be positive, got " + std::to_string(median_a) + " and " +
                                std::to_string(median_b));
  // Each median's standard error, relative to it, from the width of its own order-statistic
  // interval: that interval spans about 2z standard errors. Relative errors are those of the log
  // medians, and log(a / b) = log a - log b adds their variances.
  const double z = normal_quantile((1 + confidence) / 2);
  const auto relative_error = [&](std::span<const double> samples, double m) {
    const MedianInterval interval = median_interval(samples, confidence);
    return (interval.high - interval.low) / (2 * z * m);
  };
  const double error_a = relative_error(a, median_a), error_b = relative_error(b, median_b);
  const double reach = z * std::sqrt(error_a * error_a + error_b * error_b);
  RatioInterval interval;
  interval.confidence = confidence;
  interval.ratio = median_a / median_b;
  interval.low = interval.ratio * std::exp(-reach);
  interval.high = interval.ratio * std::exp(reach);
  return interval;
}

}  // namespace kgate
