// cuBLAS as the baseline: one cublasGemmEx, bf16 in and out, CUBLAS_COMPUTE_32F. cuBLAS is
// column-major; a row-major [r, c] matrix is the column-major [c, r] one, so y = x·Wᵀ (row-major)
// is yᵀ = W·xᵀ (column-major): A = the stored W read transposed (op T, [k, n], lda k), B = the
// stored x as is ([k, m], ldb k), C = y as [n, m] with ldc n.
#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "gemv.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

// cuBLAS' documented recommendation for Hopper; also ample for Ampere.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS ") + call + " failed: " + cublasGetStatusName(status) + " (" +
                             cublasGetStatusString(status) + ")");
}

// Lets this thread make the one-time allocations below even if the first launch happens inside a
// stream capture (global capture mode forbids cudaMalloc); they are not stream work.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { KGATE_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode_)); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

// One handle and one fixed workspace per process, made at the first launch: with a workspace of
// our own cuBLAS allocates nothing during a launch, which graph capture requires. Released at exit,
// before the CUDA runtime's own teardown (registered earlier, so it runs later), which keeps leak
// checkers quiet. Launches are not thread-safe (the handle's stream is set per launch), as the
// harness launches from one thread.
class Cublas {
 public:
  Cublas() {
    RelaxedCaptureMode relaxed;
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    KGATE_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
  }
  ~Cublas() {
    cudaFree(workspace_);
    cublasDestroy(handle_);
  }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  cublasHandle_t handle() const { return handle_; }
  void* workspace() const { return workspace_; }

 private:
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

const Cublas& cublas() {
  static const Cublas instance;
  return instance;
}

void launch(const GemvArgs& a, cudaStream_t stream) {
  const Cublas& c = cublas();
  check_cublas(cublasSetStream(c.handle(), stream), "cublasSetStream");
  // cublasSetStream resets the workspace to cuBLAS' own pool: set ours again after it.
  check_cublas(cublasSetWorkspace(c.handle(), c.workspace(), kWorkspaceBytes), "cublasSetWorkspace");
  const float alpha = 1.0f, beta = 0.0f;
  check_cublas(cublasGemmEx(c.handle(), CUBLAS_OP_T, CUBLAS_OP_N, a.n, a.m, a.k, &alpha, a.w, CUDA_R_16BF, a.k, a.x, CUDA_R_16BF, a.k,
                            &beta, a.y, CUDA_R_16BF, a.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

}  // namespace

KGATE_REGISTER_VARIANT(GemvFamily, launch,
                       {.name = "cublas",
                        .description = "cublasGemmEx, bf16 in/out, CUBLAS_COMPUTE_32F, fixed 32 MiB workspace",
                        .role = VariantRole::vendor});

}  // namespace kgate::kernels
