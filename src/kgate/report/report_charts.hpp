#pragma once
// The report's charts, one function each; draw_charts (report_model.hpp) gathers those the data
// support. A chart the data cannot fill is not drawn (std::nullopt).
#include <optional>
#include <string>
#include <vector>

#include "kgate/report/charts.hpp"
#include "report_model.hpp"

namespace kgate::report {

// One roofline per family (roofline-<family>.svg): small multiples a reader can tell apart.
std::vector<Chart> roofline_charts(const ReportModel& model);

std::optional<Chart> speedup_chart(const ReportModel& model);
// One per family (roof-share-<family>.svg), its benchmarks named without the family.
std::vector<Chart> roof_share_charts(const ReportModel& model);
std::vector<Chart> histogram_charts(const ReportModel& model);
std::vector<Chart> trend_charts(const ReportModel& model);

// A file name from a family name: letters, digits, '-' and '_' only.
std::string file_safe(const std::string& name);

}  // namespace kgate::report
