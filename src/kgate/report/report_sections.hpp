#pragma once
// The report's sections, each laid out from the model (docs/report.md says what each shows).
#include <string>
#include <vector>

#include "report_model.hpp"

namespace kgate::report {

// The anchor of a family's section ("family-rmsnorm"): what the summary's rows link to.
std::string family_anchor(const std::string& family);

// report_layout.cpp
Section summary_section(const ReportModel& model);
Section environment_section(const ReportModel& model);
Section charts_section(const ReportModel& model, const std::vector<Chart>& charts);
Section observations_section(const ReportModel& model);
Section history_section(const ReportModel& model);
Section reproduction_section(const ReportModel& model);

// report_tables.cpp
Section correctness_section(const ReportModel& model);
Section families_section(const ReportModel& model);

// report_hardware.cpp
Section hardware_section(const ReportModel& model);
Section kernel_names_appendix(const ReportModel& model);

}  // namespace kgate::report
