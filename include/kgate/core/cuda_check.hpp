#pragma once
// Every CUDA runtime call in kgate goes through KGATE_CUDA_CHECK: a failure becomes a
// kgate::CudaError carrying the call, the place and the runtime's own message, so a test or a
// benchmark can record it instead of the process dying with a bare exit code.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace kgate {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expression, const char* file, int line);

inline void check_cuda(cudaError_t code, const char* expression, const char* file, int line) {
  if (code != cudaSuccess) throw_cuda_error(code, expression, file, line);
}

}  // namespace kgate

#define KGATE_CUDA_CHECK(expr) ::kgate::check_cuda((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: catches bad launch configurations at once (asynchronous faults surface
// at the next synchronizing call, which is checked as well).
#define KGATE_CHECK_LAUNCH() ::kgate::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
