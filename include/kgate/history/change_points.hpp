#pragma once
// Change points in a series of measurements (one value per run, in commit order) by E-divisive
// means (Matteson & James, "A Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", JASA 2014), the method MongoDB's Hunter (Apache Otava) runs on its nightly
// benchmarks; docs/history.md. Pure functions, no I/O.
//
// For a split of a segment into a left part L (m values) and a right part R (k values), the
// energy statistic is
//   Q = m k / (m + k) * ( 2 / (m k) * sum_{L x R} |x - y|
//                         - sum_{pairs in L} |x - x'| / C(m, 2) - sum_{pairs in R} |y - y'| / C(k, 2) )
// large when the two parts differ in distribution (location or spread). The best split of every
// segment is found; the largest is tested by permutation: the segment's values are shuffled
// `permutations` times and the best split's Q recomputed; p = (1 + shuffles reaching the observed
// Q) / (1 + shuffles). A split with p <= alpha becomes a change point and both sides are searched
// again, until the best remaining split is not significant.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kgate {

struct EDivisiveOptions {
  // Significance level of the permutation test. Loose on purpose: a split must also pass the
  // runs' own statistics (history.hpp), and on a short series or a step that came and went
  // (the first split cuts a mixture) the test has little power: 1.0, 1.1, 1.0 over 10 runs each
  // gives p = 0.035 for the first split.
  double alpha = 0.05;
  int permutations = 199;                // shuffles per test (p can reach 1/200 = 0.005)
  std::size_t min_segment = 3;           // fewest runs on either side of a change point
  std::uint64_t seed = 0x6B67617465ull;  // the shuffles' generator: the same series gives the same answer
};

struct SplitTest {
  std::size_t at = 0;  // the first index of the right part
  double q = 0;        // energy statistic of the split
  double p_value = 1;  // permutation p-value
};

// The best split of `values` (largest Q over split points leaving min_segment on each side);
// q = 0 and at = 0 when the series is too short.
SplitTest best_split(std::span<const double> values, std::size_t min_segment);

// The change points of `series`, in index order: each is the index of the first value after the
// change, with its Q and p-value. The permutation test stops early once p can no longer reach
// alpha, so series without a change cost a few shuffles.
std::vector<SplitTest> e_divisive(std::span<const double> series, const EDivisiveOptions& options);

}  // namespace kgate
