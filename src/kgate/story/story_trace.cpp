// The story's timeline in the Chrome trace event format, for Perfetto (ui.perfetto.dev) and
// chrome://tracing: the kernels as complete events ("ph": "X") on the stream's track, each step
// as a slice over its kernels on a track of its own, timestamps in microseconds.
#include <cmath>

#include "kgate/story/story.hpp"
#include "kgate/report/format.hpp"

namespace kgate::story {
namespace {

using nlohmann::json;

constexpr int kProcess = 1;
constexpr int kStepTrack = 1;    // the workload's steps, one slice each
constexpr int kStreamTrack = 2;  // the kernels, as CUPTI recorded them on the step's stream

double microseconds(double seconds) { return seconds * 1e6; }

json dims(const int (&d)[3]) { return json::array({d[0], d[1], d[2]}); }

json metadata(const char* what, int track, const std::string& name) {
  json event = {{"name", what}, {"ph", "M"}, {"pid", kProcess}, {"args", {{"name", name}}}};
  if (track) event["tid"] = track;
  return event;
}

}  // namespace

nlohmann::json trace_events(const Story& story) {
  const RunContext& context = story.run->context;
  json events = json::array();
  events.push_back(
      metadata("process_name", 0, (context.gpu_name.empty() ? std::string("GPU") : context.gpu_name) + ": " + story.record->name));
  events.push_back(metadata("thread_name", kStepTrack, "steps"));
  events.push_back(metadata("thread_name", kStreamTrack, "stream: kernels"));
  for (const StepView& step : story.timeline.steps) {
    if (step.kernels.empty()) continue;
    const double start = step.kernels.front()->kernel->start_s, end = step.kernels.back()->kernel->end_s;
    events.push_back({{"name", step.step->label},
                      {"cat", "step"},
                      {"ph", "X"},
                      {"pid", kProcess},
                      {"tid", kStepTrack},
                      {"ts", microseconds(start)},
                      {"dur", microseconds(end - start)},
                      {"args",
                       {{"family", step.step->family},
                        {"variant", step.step->variant},
                        {"shape", step.step->shape},
                        {"kernels", step.kernels.size()},
                        {"kernel_time_us", microseconds(step.time_s)},
                        {"share_of_span_pct", step.share_pct}}}});
  }
  for (const KernelView& view : story.timeline.kernels) {
    const TimelineKernel& k = *view.kernel;
    const WorkloadStepRecord& step = *view.step;
    json args = {{"step", step.label},
                 {"family", step.family},
                 {"variant", step.variant},
                 {"kernel", report::full_kernel_name(k.kernel)},
                 {"grid", dims(k.kernel.grid)},
                 {"block", dims(k.kernel.block)},
                 {"registers_per_thread", k.kernel.registers_per_thread},
                 {"shared_bytes_per_block", k.kernel.static_shared_bytes + k.kernel.dynamic_shared_bytes},
                 {"gap_before_us", microseconds(view.gap_before_s)},
                 {"share_of_span_pct", view.share_pct}};
    for (const auto& [metric, value] : k.metrics)
      if (std::isfinite(value)) args["counters"][metric] = value;
    events.push_back({{"name", report::short_kernel_name(k.kernel)},
                      {"cat", "kernel"},
                      {"ph", "X"},
                      {"pid", kProcess},
                      {"tid", kStreamTrack},
                      {"ts", microseconds(k.start_s)},
                      {"dur", microseconds(k.end_s - k.start_s)},
                      {"args", std::move(args)}});
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"benchmark", story.record->name},
            {"gpu", context.gpu_name},
            {"commit", context.git_commit},
            {"step_median_us", microseconds(story.step_s)},
            {"source", "kgate story: the traced run whose span is the median, from the CUPTI activity records"}}}};
}

}  // namespace kgate::story
