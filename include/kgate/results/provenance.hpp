#pragma once
// Where a run came from: the GPU, the build and the source tree, for the results' context.
#include <optional>
#include <string>
#include <string_view>

#include "kgate/results/device.hpp"
#include "kgate/results/results.hpp"

namespace kgate {

// What a suite's build says about itself: its name (which names its baseline file), the source
// tree whose git commit a run records, and how it was built. kgate_add_suite
// (cmake/KgateSuite.cmake) defines kThisSuite in each <suite>_bench executable.
struct SuiteBuild {
  std::string name, source_dir, build_type, cuda_architectures;
};
extern const SuiteBuild kThisSuite;

// Fills everything but the calibration. The git commit is read at run time from suite.source_dir,
// so a rebuilt-but-unconfigured tree still reports the right commit.
RunContext make_run_context(const DeviceInfo& device, const SuiteBuild& suite, const std::string& command_line);

// Now, as ISO 8601 UTC to the second: "2026-11-25T20:41:00Z" (a run's date).
std::string utc_now_iso8601();

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": the folder name of a GPU's baselines.
std::string gpu_slug(const std::string& gpu_name);

// A date as ISO 8601 UTC to the second, the form runs are ordered by: "2026-11-21T13:00:00+01:00"
// -> "2026-11-21T12:00:00Z". Takes a date alone ("2026-11-21": midnight), 'T' or a space between
// date and time, fractions of a second (dropped), and 'Z', "+HH:MM", "+HHMM" or no zone (read as
// UTC). Nullopt for anything else, or a day that does not exist.
std::optional<std::string> iso8601_utc(std::string_view date);

// "2026-11-21T13:45:00Z" -> "20261121T134500Z": an ISO 8601 date as file names carry it.
std::string compact_date(std::string iso8601);

// "20261121T134500Z-nvidia-h200.json": the name of a run's file in a directory of runs, from its
// date and GPU (kgate_bench --kgate_out_dir, kgate shard-run --runs-dir).
std::string run_file_name(const RunContext& run);

}  // namespace kgate
