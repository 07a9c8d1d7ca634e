#pragma once
// The GPU that ctest gave a test. GPU tests declare RESOURCE_GROUPS "gpus:1"; run with
// `ctest --resource-spec-file` (scripts/ctest-resource-spec.sh writes the file), ctest runs them
// one per GPU in parallel and tells each test its GPU in CTEST_RESOURCE_GROUP_<n>_GPUS. Without a
// spec file nothing is allocated and the test uses the default device, as before.
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

}  // namespace kgate
