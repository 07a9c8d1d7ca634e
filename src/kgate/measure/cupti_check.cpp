#include "cupti_check.hpp"

#include <string_view>

#include "kgate/measure/cupti_support.hpp"

namespace kgate::cupti {
namespace {

std::string result_name(CUptiResult result) {
  const char* name = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || name == nullptr)
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  return name;
}

static_assert(std::string_view("; another CUPTI client already holds this process").substr(2) == kAnotherCuptiClient,
              "the remedy below must say what kAnotherCuptiClient looks for");

// The two failures that mean "not on this machine, not now" get a sentence on what to do about them.
const char* remedy(CUptiResult result) {
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return "; GPU performance counters are restricted to administrators here: run as root, or load the "
             "NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "; another CUPTI client already holds this process (Nsight Compute, Nsight Systems or cuda-gdb)";
    default: return "";
  }
}

}  // namespace

std::string describe(CUptiResult result, const char* call) {
  std::string text = std::string(call) + " returned " + result_name(result);
  const char* message = nullptr;
  if (cuptiGetErrorMessage(result, &message) == CUPTI_SUCCESS && message != nullptr && *message != '\0')
    text += std::string(" (") + message + ")";
  return text + remedy(result);
}

void check_cupti(CUptiResult result, const char* call) {
  if (result != CUPTI_SUCCESS) throw ProfilerError(describe(result, call));
}

void check_runtime(cudaError_t result, const char* call) {
  if (result != cudaSuccess) throw ProfilerError(std::string(call) + " returned " + cudaGetErrorName(result));
}

}  // namespace kgate::cupti
