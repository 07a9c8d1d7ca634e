#include "kgate/suite/timing_process.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace kgate {

TimingProcess timing_process(const RunResults& results, int requested) {
  const auto it = results.context.extra.find(kTimingProcessesKey);
  if (it == results.context.extra.end()) return {0, requested};
  TimingProcess p;
  int used = 0;
  if (std::sscanf(it->second.c_str(), "%d/%d%n", &p.index, &p.count, &used) != 2 || used != static_cast<int>(it->second.size()) ||
      p.index < 0 || p.index >= p.count)
    throw std::runtime_error(std::string("the results handed over say ") + kTimingProcessesKey + " '" + it->second +
                             "'; expected I/N with I < N timing processes finished");
  return p;
}

void mark_finished(RunResults& results, const TimingProcess& process) {
  results.context.extra[kTimingProcessesKey] = std::to_string(process.index + 1) + "/" + std::to_string(process.count);
}

SuiteOptions options_for_process(const SuiteOptions& whole, const TimingProcess& process) {
  SuiteOptions part = whole;
  part.timing.stopping = share_of_budget(whole.timing.stopping, process.count);
  if (process.index > 0) {
    part.check = false;
    part.headline_only = true;
  }
  return part;
}

bool due(const BenchmarkRecord* record, const TimingProcess& process, std::size_t repetitions) {
  if (!record) return true;
  std::size_t measured = 0;
  for (const std::optional<TimingRecord>* mode : {&record->cold, &record->hot})
    if (*mode) measured = std::max(measured, (*mode)->repetition_medians_s.size());
  return record->status == BenchmarkStatus::ok && measured < static_cast<std::size_t>(process.index + 1) * repetitions;
}

}  // namespace kgate
