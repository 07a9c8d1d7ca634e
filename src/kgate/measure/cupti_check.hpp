#pragma once
// How kgate's CUPTI clients call CUPTI: a failing call becomes a ProfilerError that names the call
// and CUPTI's error, and CUPTI's parameter structs start zeroed with their version's size.
// Private to measure: CUPTI stays out of kgate's public headers.
#include <cuda_runtime.h>
#include <cupti_result.h>

#include <cstddef>
#include <string>

namespace kgate::cupti {

// "<call> returned <CUPTI error> (<CUPTI's message>)", and what to do about it where the error
// means "not on this machine, not now" (no profiling permission, another CUPTI client).
std::string describe(CUptiResult result, const char* call);

// Throws ProfilerError(describe(result, call)) unless CUPTI succeeded.
void check_cupti(CUptiResult result, const char* call);

// CUDA failures while setting CUPTI up mean "no counters here", not a broken benchmark: a
// ProfilerError too.
void check_runtime(cudaError_t result, const char* call);

// CUPTI's parameter structs, zeroed, with the size CUPTI uses to tell their versions apart.
template <class Params>
Params sized(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

}  // namespace kgate::cupti

#define KGATE_CUPTI_CHECK(expr) ::kgate::cupti::check_cupti((expr), #expr)
#define KGATE_RUNTIME_CHECK(expr) ::kgate::cupti::check_runtime((expr), #expr)
#define KGATE_CUPTI_PARAMS(type) ::kgate::cupti::sized<type>(type##_STRUCT_SIZE)
