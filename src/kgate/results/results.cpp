#include "kgate/results/results.hpp"

#include <algorithm>
#include <cctype>

namespace kgate {

const TimingRecord* BenchmarkRecord::headline() const {
  const std::optional<TimingRecord>& mode = headline_mode == "hot" ? hot : cold;
  return mode ? &*mode : nullptr;
}

double BenchmarkRecord::headline_median_s() const {
  const TimingRecord* timing = headline();
  return timing ? timing->summary.median : 0;
}

bool is_job_phase_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

void record_job_phases(std::vector<JobPhase>& job, const std::vector<JobPhase>& phases) {
  for (const JobPhase& phase : phases) {
    const auto it = std::find_if(job.begin(), job.end(), [&](const JobPhase& p) { return p.phase == phase.phase; });
    if (it == job.end()) job.push_back(phase);
    else it->seconds = phase.seconds;
  }
}

std::string to_string(BenchmarkStatus status) {
  switch (status) {
    case BenchmarkStatus::ok: return "ok";
    case BenchmarkStatus::failed: return "failed";
    case BenchmarkStatus::skipped: return "skipped";
  }
  return "ok";
}

}  // namespace kgate
