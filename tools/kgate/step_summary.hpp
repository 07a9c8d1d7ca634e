#pragma once
// The GitHub Actions job summary, for the CI commands (pr-gate, nightly): what they add shows on
// the run's page. Outside GitHub Actions there is none and nothing is written.
#include <string>

namespace kgate::cli {

// Appends `markdown` to the file GITHUB_STEP_SUMMARY names, when it is set. Throws ResultsError
// when that file cannot be written.
void add_to_step_summary(const std::string& markdown);

}  // namespace kgate::cli
