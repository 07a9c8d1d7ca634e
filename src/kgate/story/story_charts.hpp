#pragma once
// The story's charts (docs/story.md), drawn with the report's SVG and plot helpers. A chart the
// data cannot fill is not drawn (std::nullopt).
#include <optional>
#include <string>

#include "kgate/report/report.hpp"
#include "kgate/story/story.hpp"

namespace kgate::story {

// A family's colour, the same in every chart of a story: by its first step in the workload.
std::string family_colour(const Story& story, const std::string& family);
// "Llama-3-8B decode step, batch 1, context 4096": the model, the workload and the point, with the
// parameters under their option names when the workload is registered in this build.
std::string story_title(const Story& story);
// A time from the first kernel's start, where 0 is a time and not a missing one: "0 µs", "3.52 µs".
std::string offset_time(double seconds);
// "b:64 l:4096": a point's parameters without the dtype.
std::string point_label(const Shape& point);

report::Chart timeline_chart(const Story& story);                      // timeline.svg: Gantt chart of the stream, ASCII timeline
report::Chart breakdown_chart(const Story& story);                     // breakdown.svg: share of the step per step, and the gaps
std::optional<report::Chart> step_roofline_chart(const Story& story);  // roofline.svg: each step on the roofline
std::optional<report::Chart> scaling_share_chart(const Story& story);  // scaling-share.svg: family shares per point
std::optional<report::Chart> scaling_time_chart(const Story& story);   // scaling-time.svg: time per token per point

}  // namespace kgate::story
