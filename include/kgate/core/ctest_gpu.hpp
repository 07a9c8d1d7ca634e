#pragma once
// The GPU that ctest gave a test, and whether the test may go on without one. GPU tests declare
// RESOURCE_GROUPS "gpus:1"; run with `ctest --resource-spec-file` (scripts/ctest-resource-spec.sh
// writes the file), ctest runs them one per GPU in parallel and tells each test its GPU in
// CTEST_RESOURCE_GROUP_<n>_GPUS. Without a spec file nothing is allocated and the test uses the
// default device, as before.
#include <string>
#include <string_view>

namespace kgate {

// The CUDA_VISIBLE_DEVICES value that selects the GPUs of `allocation` (the value of
// CTEST_RESOURCE_GROUP_<n>_GPUS: "id:1,slots:1", several separated by ';'). The ids are what
// scripts/ctest-resource-spec.sh writes: positions in `visible` (the CUDA_VISIBLE_DEVICES the
// test started with) when that is set, else the GPU indices nvidia-smi prints. Throws
// std::invalid_argument on a malformed allocation or an id beyond `visible`.
std::string ctest_visible_devices(std::string_view allocation, std::string_view visible);

// Applies ctest's allocation to this process: sets CUDA_VISIBLE_DEVICES (and CUDA_DEVICE_ORDER to
// PCI_BUS_ID where the ids are nvidia-smi indices, which count in that order). Call it first in
// main, before anything touches CUDA. Returns what it did, for the log ("" when ctest allocated no
// GPU); throws std::invalid_argument as above.
std::string use_ctest_gpu();

// A GPU test (a correctness suite's case, the CUPTI test) that finds no usable CUDA device reports
// SKIPPED, so that `ctest` stays green on a workstation without a GPU; on a GPU runner, where a
// broken driver must show red, KGATE_REQUIRE_GPU=1 in the environment makes every GPU program
// (those tests and the benchmark suites) fail instead, listing aside. Given why the device probe
// found no device (DeviceProbe::reason, empty where it found one) and the variable's value (empty
// when unset), returns the one line the program prints before it exits 1: "KGATE_REQUIRE_GPU=1
// but no usable CUDA device: <reason>"; or "" where it goes on (a device, or none and the
// variable unset, empty or 0). Any other value requires a GPU.
inline constexpr const char* kRequireGpuVariable = "KGATE_REQUIRE_GPU";
std::string unmet_gpu_requirement(std::string_view no_device_reason, std::string_view require_gpu);
// The same with the variable read from the environment.
std::string unmet_gpu_requirement(std::string_view no_device_reason);

}  // namespace kgate
