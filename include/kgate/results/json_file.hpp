#pragma once
// Reading kgate's JSON inputs (runs, baselines, thresholds, comparisons) with bounded work: a file
// is read up to a number of bytes once inflated and its arrays and objects nest up to a depth, so
// a gzip bomb, a device file or a deeply nested value is refused, naming the file, instead of
// taking every byte of memory or overflowing the stack (docs/reliability.md, "Limits and values at
// the door"). Both limits can be raised through the environment. Error messages show a value as a
// bounded excerpt (json_excerpt), never whole.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kgate {

struct InputLimits {
  std::uint64_t max_bytes;  // of one input file, once inflated: KGATE_MAX_INPUT_BYTES
  int max_depth;            // arrays and objects within one another: KGATE_MAX_JSON_DEPTH
};

// The largest recorded run (a whole suite on an H200, 3 processes' samples) is 14.5 MB and nests
// 8 deep: the defaults leave 18 times and 8 times that.
inline constexpr InputLimits kDefaultInputLimits{std::uint64_t{256} << 20, 64};

// The limits in force: the defaults, each replaced by its environment variable when set. Throws
// ResultsError naming the variable when its value is not a whole number >= 1.
InputLimits input_limits();

// Reads a JSON file the way read_results_file does, for kgate's other JSON inputs: a missing,
// empty or malformed file is a ResultsError naming it (with the byte position of a syntax error),
// as is one beyond input_limits(). A gzipped file (run.json.gz) is inflated first, recognised by
// its content, not its name. Google Benchmark writes non-finite counters as bare NaN / Infinity;
// they are read as null.
nlohmann::json read_json_file(const std::string& path);

// How much of a value an error message shows: a value may be a gigabyte long, or nested deep.
inline constexpr std::size_t kExcerptChars = 200;

// At most kExcerptChars characters of `value` as JSON (its start, cut at a character's start and
// ended with "..."), made without visiting more of the value than it shows.
std::string json_excerpt(const nlohmann::json& value);

}  // namespace kgate
