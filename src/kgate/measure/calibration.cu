#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kgate/measure/calibration.hpp"

#include "cublas_loader.hpp"
#include "kgate/base/activity_span.hpp"

namespace kgate {
namespace {

void check_cublas(const CublasLibrary& cublas, cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("calibration: ") + what + " failed: " + cublas.status_string(status));
}

__global__ void empty_kernel() {}

// Reads every 16-byte word once; the xor keeps the loads alive without adding traffic.
__global__ void read_stream_kernel(const uint4* data, std::size_t words, unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < words; i += 4 * stride) {
    const uint4 a = data[i], b = data[i + stride], c = data[i + 2 * stride], d = data[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < words; i += stride) {
    const uint4 a = data[i];
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;  // practically never true, but the compiler cannot know
}

__global__ void copy_stream_kernel(const uint4* src, uint4* dst, std::size_t words) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < words; i += 4 * stride) {
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < words; i += stride) dst[i] = src[i];
}

__global__ void fill_bf16_kernel(__nv_bfloat16* out, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(static_cast<float>((i * 2654435761u) % 2001u) / 1000.0f - 1.0f + 1e-3f);  // never zero
}

// Ceilings are medians over enough samples to be stable; they need no 0.5 s of GPU time each.
TimingOptions calibration_timing(const TimingOptions& base) {
  TimingOptions t = base;
  t.stopping.min_samples = 20;
  t.stopping.min_gpu_time_s = 0.05;
  t.stopping.max_wall_time_s = 3.0;
  return t;
}

}  // namespace

double datasheet_bytes_per_s(const DeviceInfo& device) { return 2.0 * device.memory_clock_khz * 1e3 * device.memory_bus_bits / 8.0; }

Calibration measure_calibration(const DeviceInfo& device, GpuTimer& base_timer, const CalibrationOptions& options) {
  GpuTimer timer(device, calibration_timing(base_timer.options()));
  Calibration c;
  c.datasheet_bytes_per_s = datasheet_bytes_per_s(device);
  c.datasheet_sm_clock_mhz = device.sm_clock_khz / 1e3;

  {
    DeviceAllocation src(options.stream_bytes), dst(options.stream_bytes), sink(sizeof(unsigned));
    KGATE_CUDA_CHECK(cudaMemset(src.get(), 1, src.bytes()));
    // The copy ceiling is the faster of the runtime's copy and a plain copy kernel. The runtime's
    // copy is timed stream-ordered, never from a graph: a captured memcpy node may run on the copy
    // engines (seen on an H200: 2.7 TB/s there against 4.3 TB/s stream-ordered).
    const unsigned blocks = static_cast<unsigned>(device.sm_count) * 8;
    const double copy_bytes = 2.0 * static_cast<double>(options.stream_bytes);
    const TimingRecord runtime_copy = timer.measure_cold(
        [&](int, cudaStream_t s) { KGATE_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice, s)); }, 1);
    const TimingRecord kernel_copy = timer.measure_hot([&](int, cudaStream_t s) {
      copy_stream_kernel<<<blocks, 256, 0, s>>>(static_cast<const uint4*>(src.get()), static_cast<uint4*>(dst.get()),
                                                src.bytes() / sizeof(uint4));
      KGATE_CHECK_LAUNCH();
    });
    c.copy_bytes_per_s = copy_bytes / std::min(runtime_copy.summary.median, kernel_copy.summary.median);

    const TimingRecord read = timer.measure_hot([&](int, cudaStream_t s) {
      read_stream_kernel<<<blocks, 256, 0, s>>>(static_cast<const uint4*>(src.get()), src.bytes() / sizeof(uint4),
                                                static_cast<unsigned*>(sink.get()));
      KGATE_CHECK_LAUNCH();
    });
    c.read_bytes_per_s = static_cast<double>(options.stream_bytes) / read.summary.median;
  }

  std::string why_no_cublas;
  if (const auto cublas = CublasLibrary::load(&why_no_cublas)) {
    const std::size_t n = static_cast<std::size_t>(options.gemm_size);
    DeviceAllocation a(n * n * 2), b(n * n * 2), out(n * n * 2), workspace(std::size_t(32) << 20);
    fill_bf16_kernel<<<1024, 256>>>(static_cast<__nv_bfloat16*>(a.get()), n * n);
    fill_bf16_kernel<<<1024, 256>>>(static_cast<__nv_bfloat16*>(b.get()), n * n);
    KGATE_CHECK_LAUNCH();
    cublasHandle_t handle = nullptr;
    check_cublas(*cublas, cublas->create(&handle), "cublasCreate");
    struct HandleGuard {
      const CublasLibrary& cublas;
      cublasHandle_t h;
      ~HandleGuard() { cublas.destroy(h); }
    } guard{*cublas, handle};
    check_cublas(*cublas, cublas->set_workspace(handle, workspace.get(), workspace.bytes()), "cublasSetWorkspace");
    const float alpha = 1.0f, beta = 0.0f;
    const int dim = options.gemm_size;
    const TimingRecord gemm = timer.measure_hot([&](int, cudaStream_t s) {
      check_cublas(*cublas, cublas->set_stream(handle, s), "cublasSetStream");
      check_cublas(*cublas,
                   cublas->gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &alpha, a.get(), CUDA_R_16BF, dim, b.get(), CUDA_R_16BF,
                                   dim, &beta, out.get(), CUDA_R_16BF, dim, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
    });
    c.gemm_flops_per_s = 2.0 * static_cast<double>(n) * n * n / gemm.summary.median;
  } else {
    // gemm_flops_per_s stays 0: the run records the compute ceiling as not measured.
    std::fprintf(stderr, "kgate: no GEMM ceiling in this run: cuBLAS could not be loaded (%s)\n", why_no_cublas.c_str());
  }

  auto empty = [](int, cudaStream_t s) {
    empty_kernel<<<1, 1, 0, s>>>();
    KGATE_CHECK_LAUNCH();
  };
  // The floors are what a launch costs end to end, so they come from the events also where CUPTI
  // times the samples; the empty kernel's CUPTI spans show the tick of CUPTI's clock.
  const TimingRecord cold = timer.measure_cold(empty, 1);
  const TimingRecord hot = timer.measure_hot(empty);
  const auto end_to_end = [](const TimingRecord& r) { return r.timer == "cupti" ? r.event_median_s : r.summary.median; };
  c.launch_floor_s = end_to_end(cold);
  c.graph_floor_s = end_to_end(hot);
  if (cold.timer == "cupti") c.timer_resolution_s = timestamp_tick_s(cold.samples_s);
  return c;
}

}  // namespace kgate
