#pragma once
// The rule every results format's values meet at the door (private to the results module): kgate,
// Google Benchmark and nvbench JSON and nvbench's sample files. A time is within [kMinTimeS,
// kMaxTimeS], a count a whole number within its range, any other figure finite: a value outside is
// refused when read, naming the file, the JSON path and the value, so that kgate never holds a
// value it cannot write back or compare (docs/reliability.md, "Limits and values at the door").
#include <charconv>
#include <cmath>
#include <string>

namespace kgate::value_rules {

// Samples are stored as floats (benchmark_block.cpp), each as the shortest text that reads back as the
// same float: a time is checked as the float it is stored as, so that it is taken again once written
// and read (1e300 would be written as null, 5e-324 as 0). 1e-12 s is below any timer's resolution;
// 1e6 s (11.6 days) is above any benchmark's run.
inline constexpr float kMinTimeS = 1e-12f;
inline constexpr float kMaxTimeS = 1e6f;
inline constexpr const char* kTimeRange = "from 1e-12 s to 1e+06 s";

// Whole numbers up to 2^53, which a double holds exactly (as JSON readers in most languages do).
inline constexpr double kMaxWhole = 9007199254740992.0;

// False for NaN. Within (0, 2e6) first: a double beyond a float's range has no float to compare.
inline bool is_time(double seconds) {
  return seconds > 0 && seconds < 2.0 * kMaxTimeS && static_cast<float>(seconds) >= kMinTimeS && static_cast<float>(seconds) <= kMaxTimeS;
}
inline bool is_whole(double value, double low, double high) { return value >= low && value <= high && std::trunc(value) == value; }
inline bool is_figure(double value) { return std::isfinite(value) && value >= 0; }

// The shortest text that reads back as `value`: "1e+300", "5e-324", "nan", "-inf".
inline std::string number_text(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

}  // namespace kgate::value_rules
