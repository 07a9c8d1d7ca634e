#include "kgate/suite/timing_process.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "kgate/results/results_io.hpp"

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

bool counts_before_timing(const SuiteOptions& options, const TimingProcess& process) {
  return options.counters && options.profile && process.last() && options.shard && options.shard->index % 2 == 1;
}

std::string reserve_handover() {
  char path[] = "/tmp/kgate-resume-XXXXXX.json";
  const int fd = mkstemps(path, 5);
  if (fd < 0) throw std::runtime_error(std::string("cannot create a handover file in /tmp: ") + std::strerror(errno));
  close(fd);
  return path;
}

void write_handover(const RunResults& results, const std::string& path) { write_results_file(path, to_json(results)); }

std::string write_handover(const RunResults& results) {
  std::string path = reserve_handover();
  write_handover(results, path);
  return path;
}

std::vector<std::string> continuation_args(const std::vector<std::string>& args, const std::string& handover_path) {
  std::vector<std::string> next;
  for (const std::string& a : args)
    if (!a.starts_with("--kgate_resume=") && !a.starts_with("--kgate_handover_fd=")) next.push_back(a);
  next.push_back("--kgate_resume=" + handover_path);
  return next;
}

bool count_restart() {
  const char* counted = std::getenv("KGATE_BENCH_RESTARTS");
  const int restarts = counted ? std::atoi(counted) : 0;
  if (restarts >= kMaxRestarts) return false;
  setenv("KGATE_BENCH_RESTARTS", std::to_string(restarts + 1).c_str(), 1);
  return true;
}

}  // namespace kgate
