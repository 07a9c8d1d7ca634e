#include "kgate/history/change_points.hpp"

#include <algorithm>
#include <cmath>

#include "kgate/base/random.hpp"

namespace kgate {

SplitTest best_split(std::span<const double> values, std::size_t min_segment) {
  const std::size_t n = values.size();
  min_segment = std::max<std::size_t>(min_segment, 2);  // the within-part means need two values
  SplitTest best;
  if (n < 2 * min_segment) return best;
  // Moving the split from t to t + 1 moves values[t] from the right part to the left one: the
  // left part's within-sum gains its distances to values[0..t), the right part's loses its
  // distances to values(t..n). O(n^2) for all splits.
  double total = 0;
  std::vector<double> to_earlier(n, 0), to_later(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = std::abs(values[i] - values[j]);
      to_later[i] += d;
      to_earlier[j] += d;
      total += d;
    }
  double within_left = 0, within_right = total;
  for (std::size_t t = 1; t + min_segment <= n; ++t) {
    within_left += to_earlier[t - 1];
    within_right -= to_later[t - 1];
    if (t < min_segment) continue;
    const auto m = static_cast<double>(t), k = static_cast<double>(n - t);
    const double between = total - within_left - within_right;
    const double energy = 2 * between / (m * k) - within_left / (m * (m - 1) / 2) - within_right / (k * (k - 1) / 2);
    const double q = m * k / (m + k) * energy;
    if (q > best.q) best = {t, q, 1};
  }
  return best;
}

namespace {

// The permutation p-value of `observed` for this segment. Stops as soon as the count of shuffles
// reaching it rules out p <= alpha (the answer is then "not significant", reported as the p the
// shuffles so far give).
double permutation_p_value(std::span<const double> segment, const SplitTest& observed, const EDivisiveOptions& options) {
  const int allowed = static_cast<int>(std::floor(options.alpha * (options.permutations + 1))) - 1;  // reaching shuffles still significant
  std::vector<double> shuffled(segment.begin(), segment.end());
  SplitMixStream stream(options.seed ^ (segment.size() * 0x9E3779B97F4A7C15ull));
  int reaching = 0, done = 0;
  while (done < options.permutations) {
    for (std::size_t i = shuffled.size() - 1; i > 0; --i) std::swap(shuffled[i], shuffled[stream.index_below(i + 1)]);
    ++done;
    if (best_split(shuffled, options.min_segment).q >= observed.q && ++reaching > allowed) break;
  }
  return (1.0 + reaching) / (1.0 + done);
}

struct Segment {
  std::size_t begin = 0, end = 0;
  SplitTest best;  // at: index in the whole series
};

Segment make_segment(std::span<const double> series, std::size_t begin, std::size_t end, std::size_t min_segment) {
  Segment s{begin, end, best_split(series.subspan(begin, end - begin), min_segment)};
  s.best.at += begin;
  return s;
}

}  // namespace

std::vector<SplitTest> e_divisive(std::span<const double> series, const EDivisiveOptions& options) {
  std::vector<SplitTest> found;
  std::vector<Segment> segments = {make_segment(series, 0, series.size(), options.min_segment)};
  while (true) {
    const auto strongest =
        std::max_element(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) { return a.best.q < b.best.q; });
    if (strongest == segments.end() || strongest->best.q <= 0) break;
    const Segment chosen = *strongest;
    SplitTest split = chosen.best;
    split.p_value =
        permutation_p_value(series.subspan(chosen.begin, chosen.end - chosen.begin), {split.at - chosen.begin, split.q, 1}, options);
    if (split.p_value > options.alpha) break;
    found.push_back(split);
    segments.erase(strongest);
    segments.push_back(make_segment(series, chosen.begin, split.at, options.min_segment));
    segments.push_back(make_segment(series, split.at, chosen.end, options.min_segment));
  }
  std::sort(found.begin(), found.end(), [](const SplitTest& a, const SplitTest& b) { return a.at < b.at; });
  return found;
}

}  // namespace kgate
