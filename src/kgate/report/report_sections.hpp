#pragma once
// The report's sections, each laid out from the model (docs/report.md says what each shows).
#include <string>
#include <string_view>
#include <vector>

#include "report_model.hpp"

namespace kgate::report {

// The anchor of a family's section ("family-rmsnorm"): what the summary's rows link to.
std::string family_anchor(const std::string& family);

// A correctness check's figures per output tensor ("out: rel_l2 0.00161 (limit 0.0100), max_abs ...").
std::string check_figures(const BenchmarkRecord& r);

// The rows of a table of benchmarks.
Cell shape_cell(const BenchmarkRecord& r);
Cell variant_cell(const BenchmarkRecord& r);

// A chart's caption in the report (report_layout.cpp).
const char* chart_caption(const std::string& file);

// report_dashboard.cpp: the first screen.
Badge verdict_badge(const ReportModel& model);
Section dashboard_section(const ReportModel& model);
// Slower, failed, at threshold or faster: what the dashboard lists and a family's fold opens for.
bool is_change(Verdict verdict);
// The slower, failed, at-threshold and faster benchmarks, in compare's order.
std::vector<const BenchmarkComparison*> changed_benchmarks(const ComparisonReport& comparison);
// Those rows with what changed in each; each name links to its panel in `page` ("" for this one).
Table changes_table(const ReportModel& model, const std::vector<const BenchmarkComparison*>& rows, const std::string& page = "");

// report_glossary.cpp: a term's meaning ("" when it has none), and the glossary itself.
std::string term_tip(std::string_view term);
Section glossary_section();

// report_families.cpp
// "86.0% copy", with a dagger where the share is above 100% (the glossary's "% of roof" says why).
std::string roof_text(const RoofShare& roof);
std::string journey_text(const FamilyView& family);
Section families_section(const ReportModel& model, std::vector<Chart>& charts);

// report_layout.cpp
Section summary_section(const ReportModel& model, const std::vector<Chart>& charts);
Section environment_section(const ReportModel& model);
Section charts_section(const ReportModel& model, const std::vector<Chart>& charts);
Section observations_section(const ReportModel& model);
Section history_section(const ReportModel& model);
Section reproduction_section(const ReportModel& model);

// report_correctness.cpp
Section correctness_section(const ReportModel& model);

// report_hardware.cpp
Section hardware_section(const ReportModel& model);
Section kernel_names_appendix(const ReportModel& model);

}  // namespace kgate::report
