#include "kgate/results/detectable.hpp"

#include <algorithm>
#include <cmath>

#include "kgate/base/statistics.hpp"

namespace kgate {

double DetectableChange::fraction() const { return std::max({within, between, resolution}); }

DetectableChange detectable_change(const TimingRecord& record, double timer_resolution_s, double confidence) {
  DetectableChange change;
  if (record.samples_s.empty()) return change;
  const double center = median(record.samples_s);
  if (!(center > 0)) return change;
  const MedianInterval interval = median_interval(record.samples_s, confidence);
  change.within = std::sqrt(2.0) * (interval.high - interval.low) / 2 / center;
  const std::vector<double>& medians = record.repetition_medians_s;
  if (medians.size() >= 2) {
    const auto [lowest, highest] = std::minmax_element(medians.begin(), medians.end());
    change.between = (*highest - *lowest) / center;
  }
  if (record.timer == "cpu" && record.samples_s.size() >= 2) {
    const SampleSummary repetitions = summarize(record.samples_s);
    change.between = std::max(change.between, (repetitions.p90 - repetitions.p10) / center);
  }
  // A hot sample is one replay divided by its launches: the timer's tick is divided with it.
  change.resolution = timer_resolution_s / std::max(record.launches_per_sample, 1) / center;
  return change;
}

bool judged_by_detectable_change(const std::string& timer) { return timer == "cupti" || timer == "cpu"; }

void note_detectable_change(BenchmarkRecord& record, double timer_resolution_s) {
  for (std::optional<TimingRecord>* mode : {&record.cold, &record.hot})
    if (*mode && judged_by_detectable_change((*mode)->timer))
      (*mode)->min_detectable_change = detectable_change(**mode, timer_resolution_s).fraction();
}

}  // namespace kgate
