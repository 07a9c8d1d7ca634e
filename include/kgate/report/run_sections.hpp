#pragma once
// The sections of kgate's report that describe a run rather than judge it, for another document
// about a run to share (kgate story): the environment it ran in and how to reproduce it.
#include "kgate/report/report.hpp"

namespace kgate::report {

struct RunSections {
  Section environment;   // GPU, clocks, driver, build, the ceilings measured
  Section reproduction;  // the commands that make the run and the document again (inputs.invocation)
};

// The report's environment and reproduction sections of `inputs.current` (no baseline is read).
RunSections run_sections(const ReportInputs& inputs);

}  // namespace kgate::report
