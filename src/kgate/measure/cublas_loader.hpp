#pragma once
// cuBLAS loaded at run time, for the one GEMM the calibration times (the compute ceiling): a suite
// links cuBLAS only when its own variants call it, and a machine without cuBLAS records no GEMM
// ceiling (0, which the report says was not measured) instead of failing to start.
#include <cublas_v2.h>

#include <memory>
#include <string>

namespace kgate {

class CublasLibrary {
 public:
  // libcublas.so.<this CUDA runtime's major version>, else libcublas.so; nullptr, with the
  // loader's reason in *why_not, when neither loads or lacks a function.
  static std::unique_ptr<CublasLibrary> load(std::string* why_not);
  ~CublasLibrary();
  CublasLibrary(const CublasLibrary&) = delete;
  CublasLibrary& operator=(const CublasLibrary&) = delete;

  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  // cublasGemmEx is overloaded in C++ (a cudaDataType compute type, kept for old callers): the C one.
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*, cudaDataType,
                            int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;

 private:
  explicit CublasLibrary(void* handle) : handle_(handle) {}
  void* handle_;
};

}  // namespace kgate
