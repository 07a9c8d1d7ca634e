#pragma once
// Wall time split into named phases, for the harness's account of its own cost (RunContext::wall_s,
// a results file's context.kgate.wall_s): each lap adds the time since the previous lap, or since
// the clock was made, to its phase.
#include <chrono>
#include <map>
#include <string>

namespace kgate {

using PhaseSeconds = std::map<std::string, double>;

class PhaseClock {
 public:
  explicit PhaseClock(PhaseSeconds& into) : into_(into) {}
  void lap(const std::string& phase) {
    const auto now = std::chrono::steady_clock::now();
    into_[phase] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  PhaseSeconds& into_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace kgate
