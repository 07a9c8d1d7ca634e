#pragma once
// Where a run came from: the GPU, the build and the source tree, for the results' context.
#include "kgate/device.hpp"
#include "kgate/results.hpp"

namespace kgate {

// Fills everything but the calibration. The git commit is read at run time from the source tree
// the binary was built from, so a rebuilt-but-unconfigured tree still reports the right commit.
RunContext make_run_context(const DeviceInfo& device, const std::string& command_line);

// Now, as ISO 8601 UTC to the second: "2026-11-25T20:41:00Z" (a run's date).
std::string utc_now_iso8601();

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": the folder name of a GPU's baselines.
std::string gpu_slug(const std::string& gpu_name);

}  // namespace kgate
