// Change points in the history's series (history.hpp): E-divisive candidates, confirmed by the
// runs' own statistics.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>

#include "kgate/history/history.hpp"
#include "kgate/results/detectable.hpp"

namespace kgate {
namespace {

std::vector<double> medians_of(const HistorySeries& series, std::size_t begin, std::size_t end) {
  std::vector<double> values;
  for (std::size_t i = begin; i < end; ++i) values.push_back(series.points[i].median_s);
  return values;
}

// The change at `at` judged on the runs in [begin, at) and [at, end).
ChangePoint judge(const HistorySeries& series, const SplitTest& split, std::size_t begin, std::size_t end, const ChangeOptions& options) {
  ChangePoint c;
  c.gpu = series.gpu;
  c.benchmark = series.benchmark;
  c.family = series.family;
  c.mode = series.mode;
  c.index = split.at;
  c.p_value = split.p_value;
  c.last_good = series.points[split.at - 1].run;
  c.first_bad = series.points[split.at].run;
  const std::vector<double> before = medians_of(series, begin, split.at), after = medians_of(series, split.at, end);
  c.runs_before = before.size();
  c.runs_after = after.size();
  c.before_median_s = median(before);
  c.after_median_s = median(after);
  c.ratio = median_ratio_interval(after, before, options.confidence);
  c.threshold = options.thresholds.for_benchmark(series.benchmark, series.family);
  c.timer = series.points[begin].timer;
  for (std::size_t i = begin; i < end; ++i) {
    c.min_detectable_change = std::max(c.min_detectable_change, series.points[i].min_detectable_change);
    if (series.points[i].timer != c.timer) c.timer = "events";
  }
  return c;
}

// The step is material as the gate judges it (compare.hpp) and its interval lies on one side of
// 1: beyond the benchmark's threshold, widened for CUPTI- and CPU-timed runs to their minimum
// detectable change, and for event-timed ones by the minimum change in time.
bool confirmed(const ChangePoint& c, const ChangeOptions& options) {
  const double r = c.ratio.ratio;
  const double step = std::max(r, 1 / r) - 1;
  const bool material = judged_by_detectable_change(c.timer)
                            ? step > std::max(c.threshold, c.min_detectable_change)
                            : step > c.threshold && std::abs(c.after_median_s - c.before_median_s) >= options.thresholds.min_change_s;
  return material && (r > 1 ? c.ratio.low > 1 : c.ratio.high < 1);
}

}  // namespace

std::vector<ChangePoint> find_change_points(const HistorySeries& series, const ChangeOptions& options) {
  const std::vector<double> values = medians_of(series, 0, series.points.size());
  std::vector<SplitTest> splits = e_divisive(values, options.search);
  while (true) {
    std::vector<ChangePoint> judged;
    for (std::size_t i = 0; i < splits.size(); ++i) {
      const std::size_t begin = i == 0 ? 0 : splits[i - 1].at, end = i + 1 == splits.size() ? values.size() : splits[i + 1].at;
      judged.push_back(judge(series, splits[i], begin, end, options));
    }
    // Merge the weakest unconfirmed change point into its neighbours and judge the rest again.
    std::size_t weakest = judged.size();
    for (std::size_t i = 0; i < judged.size(); ++i)
      if (!confirmed(judged[i], options) &&
          (weakest == judged.size() || std::abs(std::log(judged[i].ratio.ratio)) < std::abs(std::log(judged[weakest].ratio.ratio))))
        weakest = i;
    if (weakest == judged.size()) return judged;
    splits.erase(splits.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
}

void mark_new_changes(const HistorySeries& series, std::vector<ChangePoint>& changes, const ChangeOptions& options,
                      const std::function<bool(const HistoryRun&)>& up_to_since) {
  HistorySeries before_since = series;
  std::erase_if(before_since.points, [&](const HistoryPoint& p) { return !up_to_since(*p.run); });
  const std::vector<ChangePoint> known = find_change_points(before_since, options);
  for (ChangePoint& c : changes) {
    if (!up_to_since(*c.first_bad)) continue;  // new: the change entered after --since
    const auto same = [&](const ChangePoint& k) {
      const std::size_t distance = k.index > c.index ? k.index - c.index : c.index - k.index;
      return k.slowdown() == c.slowdown() && distance <= options.search.min_segment;
    };
    c.is_new = std::none_of(known.begin(), known.end(), same);
  }
}

std::function<bool(const HistoryRun&)> runs_up_to(const std::string& since, const std::vector<HistoryRun>& runs) {
  if (since == "previous") {
    std::map<std::string, const HistoryRun*> newest;  // per GPU
    for (const HistoryRun& r : runs) newest[r.gpu] = &r;
    return [newest](const HistoryRun& r) { return newest.at(r.gpu) != &r; };
  }
  if (std::regex_match(since, std::regex(R"(\d{4}-\d{2}-\d{2}.*)"))) return [since](const HistoryRun& r) { return r.date < since; };
  if (!std::regex_match(since, std::regex("[0-9a-fA-F]{4,40}")))
    throw std::invalid_argument("--since: expected a date (2026-11-20), a commit or 'previous', got '" + since + "'");
  const HistoryRun* last_of_commit = nullptr;
  for (const HistoryRun& r : runs)
    if (r.commit.starts_with(since)) last_of_commit = &r;
  if (!last_of_commit) throw std::invalid_argument("--since: no run of commit " + since + " in the history");
  std::map<const HistoryRun*, std::size_t> position;
  for (std::size_t i = 0; i < runs.size(); ++i) position[&runs[i]] = i;
  const std::size_t cut = position.at(last_of_commit);
  return [position, cut](const HistoryRun& r) { return position.at(&r) <= cut; };
}

std::vector<ChangePoint> find_changes(const std::vector<HistorySeries>& all, const ChangeOptions& options,
                                      const std::function<bool(const HistoryRun&)>& up_to_since) {
  std::vector<ChangePoint> changes;
  for (const HistorySeries& s : all) {
    std::vector<ChangePoint> found = find_change_points(s, options);
    if (up_to_since) mark_new_changes(s, found, options, up_to_since);
    changes.insert(changes.end(), found.begin(), found.end());
  }
  return changes;
}

nlohmann::json changes_to_json(const std::vector<ChangePoint>& changes) {
  nlohmann::json doc = {{"schema_version", 1}, {"changes", nlohmann::json::array()}};
  const auto run = [](const HistoryRun* r) {
    return nlohmann::json{{"commit", r->commit}, {"date", r->date}, {"host", r->host}, {"driver_version", r->driver_version}};
  };
  for (const ChangePoint& c : changes)
    doc["changes"].push_back({{"gpu", c.gpu},
                              {"benchmark", c.benchmark},
                              {"family", c.family},
                              {"mode", c.mode},
                              {"direction", c.slowdown() ? "slower" : "faster"},
                              {"new", c.is_new},
                              {"last_good", run(c.last_good)},
                              {"first_bad", run(c.first_bad)},
                              {"before_median_s", c.before_median_s},
                              {"after_median_s", c.after_median_s},
                              {"ratio", c.ratio.ratio},
                              {"ratio_low", c.ratio.low},
                              {"ratio_high", c.ratio.high},
                              {"confidence", c.ratio.confidence},
                              {"p_value", c.p_value},
                              {"threshold", c.threshold},
                              {"timer", c.timer},
                              {"min_detectable_change", c.min_detectable_change},
                              {"runs_before", c.runs_before},
                              {"runs_after", c.runs_after}});
  return doc;
}

}  // namespace kgate
