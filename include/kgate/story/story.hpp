#pragma once
// `kgate story`: one workload benchmark (workload.hpp) told the way a serving engineer reads a
// model step — which kernels run, in what order, how long each takes and what share of the step,
// where the gaps between them are, what bounds each, and how the step scales with its parameters
// (docs/story.md). Every figure comes from the results file: the timeline from the CUPTI activity
// records kgate_bench took of a cold run, the end-to-end times from its cold and hot timing, the
// counters from the range profiler, the scaling from the other workload benchmarks of the file.
//
// The story is a report::Document (report.hpp), rendered by the report's Markdown, HTML and
// terminal renderers, with its charts drawn by the report's SVG helpers.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgate/report/report.hpp"
#include "kgate/results/results.hpp"
#include "kgate/results/roofline.hpp"
#include "kgate/base/shape.hpp"

namespace kgate {

struct StoryInputs {
  NamedRun run;
  std::string benchmark;     // the workload benchmark to tell, by name
  std::string invocation{};  // the command that made the story, for the reproduction section
};

namespace story {

// A kernel of the timeline and what the story derives from it.
struct KernelView {
  const TimelineKernel* kernel = nullptr;
  const WorkloadStepRecord* step = nullptr;
  std::size_t index = 0;    // position on the stream, from 0
  double gap_before_s = 0;  // its start minus the previous kernel's end; 0 for the first, < 0 on overlap
  double share_pct = 0;     // its duration / the span
};

// A step's kernels together: the bytes and FLOP models are per step, so a step (not each of its
// kernels) is what sits on the roofline.
struct StepView {
  const WorkloadStepRecord* step = nullptr;
  std::size_t index = 0;
  std::vector<const KernelView*> kernels{};
  double time_s = 0;     // its kernels' durations in the timeline
  double share_pct = 0;  // of the span
  bool placed = false;   // on the roofline: needs the run's ceilings and a positive time
  RooflinePoint roof{};
  double roof_pct = 0;    // of the ceiling it comes closest to
  std::string ceiling{};  // "copy", "read" or "compute"
};

struct FamilyShare {
  std::string family{};
  double time_s = 0, share_pct = 0;  // its kernels' time, and its share of the span
  std::vector<std::string> steps{};  // the steps it runs, in order
};

// A workload record's timeline, analyzed. Its steps point into its kernels: it moves, never copies.
struct Timeline {
  Timeline() = default;
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  Timeline(Timeline&&) = default;
  Timeline& operator=(Timeline&&) = default;

  std::vector<KernelView> kernels{};    // in start order
  std::vector<StepView> steps{};        // in step order
  std::vector<FamilyShare> families{};  // largest share first
  double span_s = 0;                    // first kernel start to last kernel end
  double kernels_s = 0;                 // the kernels' durations added up
  double gaps_s = 0;                    // span − kernels: the gaps (negative gaps are overlaps)
  double gaps_pct = 0;                  // of the span
  bool overlap = false;                 // some kernel starts before its predecessor ends
  const StepView* largest_step() const;
};

// Throws std::invalid_argument when the record has no timeline or an inconsistent one (a kernel
// naming no step).
Timeline analyze_timeline(const WorkloadRecord& workload, const Calibration& calibration);

// One point of the scaling sweep: a workload benchmark of the same model, workload and variants.
struct ScalingPoint {
  const BenchmarkRecord* record = nullptr;
  Shape point;
  double step_s = 0;                    // the headline (cold) median
  double hot_s = 0;                     // replayed from a CUDA graph; 0 when not measured
  double per_token_s = 0;               // step_s / the tokens the step processes
  std::vector<FamilyShare> families{};  // from its timeline, largest first; empty without one
  std::string dominant_step{};          // the step with the most kernel time
  double dominant_step_pct = 0;
  double family_share(const std::string& family) const;  // 0 when absent
};

struct Story {
  const RunResults* run = nullptr;
  const BenchmarkRecord* record = nullptr;
  const WorkloadRecord* workload = nullptr;
  Shape point;
  Timeline timeline{};
  double step_s = 0;                    // end to end, cold: the headline median of the timing pass
  double hot_s = 0;                     // end to end, replayed from a CUDA graph
  double traced_event_s = 0;            // median event time of the traced runs
  double traced_span_s = 0;             // median span of the traced runs
  std::vector<ScalingPoint> scaling{};  // every point of the sweep in the file, the told one included
  const ScalingPoint* told() const;     // the told point in `scaling`
  // Kernels + gaps of the timeline against the end-to-end time: (span − step) / step, in percent.
  double agreement_pct() const;
};

// Throws ResultsError (results_io.hpp) naming the file when the benchmark is not in it, is not a
// workload benchmark, did not run, or has no timeline.
Story analyze(const NamedRun& run, const std::string& benchmark);

// The story as a document, with its charts (timeline.svg, breakdown.svg, roofline.svg,
// scaling-share.svg, scaling-time.svg when the data fill them).
report::Document build_story(const StoryInputs& inputs);

// The timeline in the Chrome trace event format (story.trace.json), which ui.perfetto.dev and
// chrome://tracing open: a track of the workload's steps and one of the stream's kernels, each
// kernel a complete event ("ph": "X", microseconds from the first kernel's start) whose args hold
// its step, full name, grid, block, registers, shared memory and range-profiler counters.
nlohmann::json trace_events(const Story& story);

// The timeline as text, one line per kernel with its bar on a shared time axis.
std::string ascii_timeline(const Story& story, std::size_t width = 60);

}  // namespace story
}  // namespace kgate
