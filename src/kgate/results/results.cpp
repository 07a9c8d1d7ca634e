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

namespace {

// The phase of that name in `job` (a const or a mutable one), or its end.
template <typename Job>
auto phase_named(Job& job, std::string_view phase) {
  return std::find_if(job.begin(), job.end(), [&](const JobPhase& p) { return p.phase == phase; });
}

}  // namespace

const JobPhase* find_job_phase(const std::vector<JobPhase>& job, std::string_view phase) {
  const auto it = phase_named(job, phase);
  return it == job.end() ? nullptr : &*it;
}

void record_job_phases(std::vector<JobPhase>& job, const std::vector<JobPhase>& phases) {
  for (const JobPhase& phase : phases) {
    if (const auto known = phase_named(job, phase.phase); known != job.end()) known->seconds = phase.seconds;
    else job.push_back(phase);
  }
}

double job_total_s(const std::vector<JobPhase>& job) {
  double total = 0;
  for (const JobPhase& p : job) total += p.seconds;
  return total;
}

std::vector<std::string> job_phase_columns(const std::vector<const std::vector<JobPhase>*>& jobs) {
  std::vector<std::string> columns;
  for (const std::vector<JobPhase>* job : jobs)
    for (const JobPhase& p : *job)
      if (std::find(columns.begin(), columns.end(), p.phase) == columns.end()) columns.push_back(p.phase);
  return columns;
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
