#include "kgate/report/run_sections.hpp"

#include "report_model.hpp"
#include "report_sections.hpp"

namespace kgate::report {

RunSections run_sections(const ReportInputs& inputs) {
  const ReportModel model = build_model(inputs);
  return {environment_section(model), reproduction_section(model)};
}

}  // namespace kgate::report
