#include "step_summary.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "kgate/results/results_io.hpp"

namespace kgate::cli {

void add_to_step_summary(const std::string& markdown) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (!path || !*path) return;
  std::ofstream summary(path, std::ios::app);
  summary << markdown;
  if (!summary.flush()) throw ResultsError(std::string(path) + " (GITHUB_STEP_SUMMARY): cannot append to it: " + std::strerror(errno));
}

}  // namespace kgate::cli
