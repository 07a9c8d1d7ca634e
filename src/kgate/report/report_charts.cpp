// Which charts a report gets: those its data can fill.
#include "report_charts.hpp"

#include <cctype>

namespace kgate::report {

std::string file_safe(const std::string& name) {
  std::string out;
  for (const char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
  return out;
}

std::vector<Chart> draw_charts(const ReportModel& model) {
  std::vector<Chart> charts;
  if (auto speedup = speedup_chart(model)) charts.push_back(std::move(*speedup));
  for (const std::vector<Chart>& more : {roofline_charts(model), roof_share_charts(model), histogram_charts(model), trend_charts(model)})
    charts.insert(charts.end(), more.begin(), more.end());
  return charts;
}

}  // namespace kgate::report
