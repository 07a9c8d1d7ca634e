#pragma once
// The CUPTI pass, run after all timing so that neither activity tracing nor kernel replay can
// perturb a single timed sample: for each benchmark that ran, one launch traced (which kernels
// really ran, with their launch configuration and resources) and one launch under the range
// profiler (hardware counters). Counters degrade, never crash: when CUPTI cannot profile here
// (permissions, a profiler already attached, an unsupported GPU) one warning is printed and every
// record says why it has no counters.
#include <stdexcept>
#include <string>
#include <vector>

#include "kgate/registry.hpp"
#include "kgate/results.hpp"

namespace kgate::bench {

class UnknownMetrics : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CounterPass {
 public:
  // Checks the metric names against this chip up front (empty: the default list); throws
  // UnknownMetrics naming the ones it does not know.
  explicit CounterPass(std::vector<std::string> metrics);

  void run(RunResults& results, const Registry& registry) const;

 private:
  std::vector<std::string> metrics_;
  std::string counters_unavailable_;
  std::string activity_unavailable_;
};

}  // namespace kgate::bench
