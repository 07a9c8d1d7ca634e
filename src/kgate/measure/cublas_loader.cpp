#include "cublas_loader.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <vector>

namespace kgate {
namespace {

// Binds `function` to the library's symbol `name`; false when the library lacks it.
template <typename Function>
bool bind(void* library, const char* name, Function& function, std::string* why_not) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  if (!function && why_not) *why_not = std::string("cuBLAS lacks ") + name;
  return function != nullptr;
}

}  // namespace

std::unique_ptr<CublasLibrary> CublasLibrary::load(std::string* why_not) {
  int runtime = 0;
  std::vector<std::string> names;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) names.push_back("libcublas.so." + std::to_string(runtime / 1000));
  names.push_back("libcublas.so");
  void* handle = nullptr;
  std::string reasons;
  for (const std::string& name : names) {
    if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    const char* error = dlerror();
    reasons += (reasons.empty() ? "" : "; ") + std::string(error ? error : name + ": not loadable");
  }
  if (!handle) {
    if (why_not) *why_not = reasons;
    return nullptr;
  }
  std::unique_ptr<CublasLibrary> library(new CublasLibrary(handle));
  if (bind(handle, "cublasCreate_v2", library->create, why_not) && bind(handle, "cublasDestroy_v2", library->destroy, why_not) &&
      bind(handle, "cublasSetStream_v2", library->set_stream, why_not) &&
      bind(handle, "cublasSetWorkspace_v2", library->set_workspace, why_not) && bind(handle, "cublasGemmEx", library->gemm_ex, why_not) &&
      bind(handle, "cublasGetStatusString", library->status_string, why_not))
    return library;
  return nullptr;
}

CublasLibrary::~CublasLibrary() { dlclose(handle_); }

}  // namespace kgate
