#include "kgate/results/results.hpp"

namespace kgate {

const TimingRecord* BenchmarkRecord::headline() const {
  const std::optional<TimingRecord>& mode = headline_mode == "hot" ? hot : cold;
  return mode ? &*mode : nullptr;
}

double BenchmarkRecord::headline_median_s() const {
  const TimingRecord* timing = headline();
  return timing ? timing->summary.median : 0;
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
