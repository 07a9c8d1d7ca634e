// The story's figures, computed once from the results file: the timeline's kernels, gaps and
// shares, each step on the roofline, and the scaling sweep.
#include <algorithm>
#include <stdexcept>

#include "kgate/results/results_io.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/story/story.hpp"
#include "kgate/base/workload.hpp"

namespace kgate::story {
namespace {

void place_step(StepView& view, const Calibration& c) {
  const WorkloadStepRecord& step = *view.step;
  const Ceilings ceilings{.memory_bytes_per_s = step.memory_ceiling == "read" ? c.read_bytes_per_s : c.copy_bytes_per_s,
                          .compute_flops_per_s = c.gemm_flops_per_s,
                          .launch_floor_s = c.launch_floor_s};
  if (!(ceilings.memory_bytes_per_s > 0 && ceilings.compute_flops_per_s > 0 && ceilings.launch_floor_s > 0 && view.time_s > 0)) return;
  view.roof = place_on_roofline(step.min_bytes, step.flops, view.time_s, ceilings);
  view.placed = true;
  if (view.roof.pct_of_compute > view.roof.pct_of_memory) {
    view.roof_pct = view.roof.pct_of_compute;
    view.ceiling = "compute";
  } else {
    view.roof_pct = view.roof.pct_of_memory;
    view.ceiling = step.memory_ceiling;
  }
}

std::vector<FamilyShare> family_shares(const std::vector<StepView>& steps, double span_s) {
  std::vector<FamilyShare> families;
  for (const StepView& step : steps) {
    auto it = std::find_if(families.begin(), families.end(), [&](const FamilyShare& f) { return f.family == step.step->family; });
    if (it == families.end()) it = families.insert(families.end(), FamilyShare{step.step->family, 0, 0, {}});
    it->time_s += step.time_s;
    it->steps.push_back(step.step->label);
  }
  for (FamilyShare& f : families) f.share_pct = span_s > 0 ? 100 * f.time_s / span_s : 0;
  std::stable_sort(families.begin(), families.end(), [](const FamilyShare& a, const FamilyShare& b) { return a.time_s > b.time_s; });
  return families;
}

// Workload benchmarks sort by their point, dimension by dimension in the workload's order.
bool point_before(const Shape& a, const Shape& b) {
  for (std::size_t i = 0; i < std::min(a.dims().size(), b.dims().size()); ++i)
    if (a.dims()[i].value != b.dims()[i].value) return a.dims()[i].value < b.dims()[i].value;
  return a.dims().size() < b.dims().size();
}

ScalingPoint scaling_point(const BenchmarkRecord& r, const Calibration& calibration) {
  ScalingPoint p{.record = &r, .point = Shape::parse(r.shape)};
  p.step_s = r.headline_median_s();
  p.hot_s = r.hot ? r.hot->summary.median : 0;
  p.per_token_s = r.workload->tokens > 0 ? p.step_s / static_cast<double>(r.workload->tokens) : 0;
  if (r.workload->timeline.empty()) return p;
  const Timeline timeline = analyze_timeline(*r.workload, calibration);
  p.families = timeline.families;
  if (const StepView* largest = timeline.largest_step()) {
    p.dominant_step = largest->step->label;
    p.dominant_step_pct = largest->share_pct;
  }
  return p;
}

}  // namespace

const StepView* Timeline::largest_step() const {
  const StepView* largest = nullptr;
  for (const StepView& s : steps)
    if (!largest || s.time_s > largest->time_s) largest = &s;
  return largest;
}

double ScalingPoint::family_share(const std::string& family) const {
  for (const FamilyShare& f : families)
    if (f.family == family) return f.share_pct;
  return 0;
}

const ScalingPoint* Story::told() const {
  for (const ScalingPoint& p : scaling)
    if (p.record == record) return &p;
  return nullptr;
}

double Story::agreement_pct() const { return step_s > 0 ? 100 * (timeline.span_s - step_s) / step_s : 0; }

Timeline analyze_timeline(const WorkloadRecord& workload, const Calibration& calibration) {
  if (workload.timeline.empty()) throw std::invalid_argument("the workload benchmark has no timeline");
  Timeline t;
  t.kernels.reserve(workload.timeline.size());  // the steps point into it
  for (std::size_t i = 0; i < workload.timeline.size(); ++i) {
    const TimelineKernel& k = workload.timeline[i];
    if (k.step >= workload.steps.size())
      throw std::invalid_argument("timeline kernel " + std::to_string(i) + " names step " + std::to_string(k.step) + " of " +
                                  std::to_string(workload.steps.size()));
    KernelView view{.kernel = &k, .step = &workload.steps[k.step], .index = i};
    if (i > 0) view.gap_before_s = k.start_s - workload.timeline[i - 1].end_s;
    t.overlap = t.overlap || view.gap_before_s < 0;
    t.kernels_s += k.end_s - k.start_s;
    t.kernels.push_back(view);
  }
  t.span_s = workload.timeline.back().end_s - workload.timeline.front().start_s;
  t.gaps_s = t.span_s - t.kernels_s;
  for (KernelView& view : t.kernels) view.share_pct = t.span_s > 0 ? 100 * (view.kernel->end_s - view.kernel->start_s) / t.span_s : 0;
  t.gaps_pct = t.span_s > 0 ? 100 * t.gaps_s / t.span_s : 0;

  for (std::size_t s = 0; s < workload.steps.size(); ++s) {
    StepView step{.step = &workload.steps[s], .index = s};
    for (const KernelView& view : t.kernels)
      if (view.kernel->step == s) {
        step.kernels.push_back(&view);
        step.time_s += view.kernel->end_s - view.kernel->start_s;
      }
    step.share_pct = t.span_s > 0 ? 100 * step.time_s / t.span_s : 0;
    place_step(step, calibration);
    t.steps.push_back(std::move(step));
  }
  t.families = family_shares(t.steps, t.span_s);
  return t;
}

Story analyze(const NamedRun& named, const std::string& benchmark) {
  const RunResults& run = named.run;
  const auto fail = [&](const std::string& problem) { return ResultsError(named.source + ": " + problem); };
  const BenchmarkRecord* record = nullptr;
  std::string workloads;
  for (const BenchmarkRecord& r : run.benchmarks) {
    if (r.name == benchmark) record = &r;
    if (r.family == kWorkloadFamily) workloads += (workloads.empty() ? "" : ", ") + r.name;
  }
  if (!record)
    throw fail("no benchmark " + benchmark + " (workload benchmarks in the file: " + (workloads.empty() ? "none" : workloads) + ")");
  if (record->family != kWorkloadFamily || !record->workload) throw fail(benchmark + " is not a workload benchmark");
  if (record->status != BenchmarkStatus::ok)
    throw fail(benchmark + " did not run (" + to_string(record->status) + ": " + record->error + ")");
  if (record->workload->timeline.empty())
    throw fail(benchmark + " has no timeline" +
               (record->workload->timeline_unavailable.empty() ? "" : ": " + record->workload->timeline_unavailable));

  Story story{.run = &run, .record = record, .workload = &*record->workload, .point = Shape::parse(record->shape)};
  const Calibration& calibration = run.context.calibration;
  try {
    story.timeline = analyze_timeline(*record->workload, calibration);
  } catch (const std::invalid_argument& e) {
    throw fail(benchmark + ": " + e.what());
  }
  story.step_s = record->headline_median_s();
  story.hot_s = record->hot ? record->hot->summary.median : 0;
  if (!record->workload->traced_event_s.empty()) story.traced_event_s = median(record->workload->traced_event_s);
  if (!record->workload->traced_span_s.empty()) story.traced_span_s = median(record->workload->traced_span_s);

  for (const BenchmarkRecord& r : run.benchmarks) {
    if (r.family != kWorkloadFamily || r.variant != record->variant || !r.workload || r.status != BenchmarkStatus::ok ||
        !(r.headline_median_s() > 0))
      continue;
    try {
      story.scaling.push_back(scaling_point(r, calibration));
    } catch (const std::invalid_argument& e) {
      throw fail(r.name + ": " + e.what());
    }
  }
  std::stable_sort(story.scaling.begin(), story.scaling.end(),
                   [](const ScalingPoint& a, const ScalingPoint& b) { return point_before(a.point, b.point); });
  return story;
}

}  // namespace kgate::story
