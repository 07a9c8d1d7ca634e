#include "kgate/base/activity_span.hpp"

#include <algorithm>

namespace kgate {
namespace {

constexpr double kSecondsPerNs = 1e-9;

bool earlier(const ActivityInterval& a, const ActivityInterval& b) { return a.start_ns < b.start_ns; }

}  // namespace

double span_s(std::span<const ActivityInterval> records) {
  if (records.empty()) return 0;
  std::uint64_t first = records.front().start_ns, last = records.front().end_ns;
  for (const ActivityInterval& r : records) {
    first = std::min(first, r.start_ns);
    last = std::max(last, r.end_ns);
  }
  return last > first ? static_cast<double>(last - first) * kSecondsPerNs : 0;
}

double busy_s(std::span<const ActivityInterval> records) {
  std::uint64_t busy = 0;
  for (const ActivityInterval& r : records) busy += r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0;
  return static_cast<double>(busy) * kSecondsPerNs;
}

double mean_call_span_s(std::vector<ActivityInterval> replay, int calls) {
  if (calls < 1 || replay.empty()) return 0;
  const auto count = static_cast<std::size_t>(calls);
  if (replay.size() % count != 0) return span_s(replay) / calls;
  std::sort(replay.begin(), replay.end(), earlier);
  const std::size_t per_call = replay.size() / count;
  double sum = 0;
  for (std::size_t c = 0; c < count; ++c) sum += span_s(std::span(replay).subspan(c * per_call, per_call));
  return sum / calls;
}

double timestamp_tick_s(std::span<const double> spans) {
  std::vector<double> sorted(spans.begin(), spans.end());
  std::sort(sorted.begin(), sorted.end());
  // Runs of values within the jitter are one lattice point, represented by their first value.
  std::vector<double> points;
  for (const double v : sorted)
    if (points.empty() || v - points.back() > kTimestampJitterS) points.push_back(v);
  double tick = 0;
  for (std::size_t i = 1; i < points.size(); ++i)
    if (const double step = points[i] - points[i - 1]; tick == 0 || step < tick) tick = step;
  return tick;
}

}  // namespace kgate
